package reports

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// memRun is a 12-minute drift run that sampled its target's memory.
func memRun() *run {
	r := driftRun(12, func(float64) float64 { return 0.05 }, func(float64) float64 { return 1 }, 0)
	r.meta.TargetMemory = &rundir.MemorySource{URL: "http://127.0.0.1:9100/metrics", Metric: "process_resident_memory_bytes", Every: rundir.Duration(10 * time.Second)}
	return r
}

// memSamples are a sample every 10 s over the run: within each minute the
// same bytes (so any subset of a minute's samples has the minute's mean), a
// minute 2,000 bytes a second more than the one before, plus a wobble.
func memSamples(minutes int) []rundir.MemorySample {
	var out []rundir.MemorySample
	for sec := 0; sec < minutes*60; sec += 10 {
		w := sec / 60
		b := 100e6 + 2000*60*float64(w) + 50_000*math.Sin(float64(w)*1.7)
		out = append(out, rundir.MemorySample{At: t0.Add(time.Duration(sec)*time.Second + 300*time.Millisecond), Bytes: &b})
	}
	return out
}

func writeMem(t *testing.T, dir string, samples []rundir.MemorySample) {
	t.Helper()
	var b strings.Builder
	for _, s := range samples {
		line, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.TargetMemoryFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// theilSenOf is the slope computed here, apart from the analysis: each
// minute's mean of the samples that have bytes, then the median of the
// slopes between every two minutes (x: a minute's middle).
func theilSenOf(samples []rundir.MemorySample, minutes int) float64 {
	sum, n := make([]float64, minutes), make([]float64, minutes)
	for _, s := range samples {
		if s.Bytes == nil {
			continue
		}
		w := int(s.At.Sub(t0) / time.Minute)
		if w < minutes {
			sum[w] += *s.Bytes
			n[w]++
		}
	}
	var xs, ys []float64
	for w := range minutes {
		if n[w] > 0 {
			xs, ys = append(xs, 60*float64(w)+30), append(ys, sum[w]/n[w])
		}
	}
	var slopes []float64
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			slopes = append(slopes, (ys[j]-ys[i])/(xs[j]-xs[i]))
		}
	}
	slices.Sort(slopes)
	m := len(slopes) / 2
	if len(slopes)%2 == 0 {
		return (slopes[m-1] + slopes[m]) / 2
	}
	return slopes[m]
}

// TestDriftTargetMemory: the memory slope is the Theil–Sen slope of the
// minutes' mean samples, as computed here from the raw samples; the same
// when the lines are shuffled and when a third of the samples failed (a
// failed sample is missing, not 0 bytes: counting it as 0 would make the
// slope anything); a threshold in size literals judges it.
func TestDriftTargetMemory(t *testing.T) {
	samples := memSamples(12)
	want := theilSenOf(samples, 12)
	if math.Abs(want-2000) > 200 {
		t.Fatalf("the test's own slope %g, want about 2000 bytes a second", want)
	}
	check := func(name string, samples []rundir.MemorySample, failed int) {
		t.Helper()
		r := memRun()
		dir := r.write(t)
		writeMem(t, dir, samples)
		s := analyzed(t, dir)
		if s.Drift == nil || s.Drift.Memory == nil {
			t.Fatalf("%s: no memory slope: %+v", name, s.Drift)
		}
		if got := *s.Drift.Memory; math.Abs(got-want) > 1e-5*math.Abs(want) {
			t.Errorf("%s: memory slope %g, the raw samples' %g", name, got, want)
		}
		noted := strings.Join(s.Drift.Notes, "; ")
		if failed > 0 && !strings.Contains(noted, "samples of process_resident_memory_bytes") {
			t.Errorf("%s: notes %q do not count the %d failed samples", name, noted, failed)
		}
		if err := s.Evaluate([]string{"drift.memory_slope < 1MB/10m", "drift.memory_slope < 2MB/10m"}); err != nil {
			t.Fatal(err)
		}
		if s.Thresholds[0].OK || !s.Thresholds[1].OK {
			t.Errorf("%s: 2,000 B/s against < 1MB/10m (1,667 B/s) and < 2MB/10m (3,333 B/s): %+v", name, s.Thresholds)
		}
		// The value a threshold shows is the slope, not its truth (1).
		if v := s.Thresholds[1].Value; math.Abs(v-*s.Drift.Memory) > 1e-6*math.Abs(v) {
			t.Errorf("%s: threshold value %g, the slope %g", name, v, *s.Drift.Memory)
		}
	}
	check("in order", samples, 0)

	rng := rand.New(rand.NewPCG(5, 6))
	shuffled := slices.Clone(samples)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	check("shuffled", shuffled, 0)

	holes := slices.Clone(samples)
	failed := 0
	for i := range holes {
		if i%3 == 1 {
			holes[i] = rundir.MemorySample{At: holes[i].At, Error: "GET http://127.0.0.1:9100/metrics: connection refused"}
			failed++
		}
	}
	check("a third failed", holes, failed)
}

// TestDriftTargetMemoryMissing: a run that could not read its target's
// memory, or lost the file, has no slope — null, with a reason a threshold
// on it says — and never passes such a threshold; a run that sampled
// nothing says why.
func TestDriftTargetMemoryMissing(t *testing.T) {
	t.Run("every sample failed", func(t *testing.T) {
		r := memRun()
		dir := r.write(t)
		var all []rundir.MemorySample
		for _, s := range memSamples(12) {
			all = append(all, rundir.MemorySample{At: s.At, Error: "GET http://127.0.0.1:9100/metrics: HTTP 503"})
		}
		writeMem(t, dir, all)
		s := analyzed(t, dir)
		if s.Drift == nil || s.Drift.Memory != nil {
			t.Fatalf("no sample read: memory slope %v, want null", s.Drift)
		}
		if err := s.Evaluate([]string{"drift.memory_slope < 1MB/10m"}); err != nil {
			t.Fatal(err)
		}
		if th := s.Thresholds[0]; th.OK || !strings.Contains(th.Error, "read in 0 of 12 windows") {
			t.Errorf("threshold on a slope of no sample: %+v", th)
		}
		if s.Verdict == VerdictPass {
			t.Error("a run whose target memory was never read passes a threshold on it")
		}
	})
	t.Run("samples in 5 of 12 minutes", func(t *testing.T) {
		r := memRun()
		dir := r.write(t)
		var some []rundir.MemorySample
		for _, s := range memSamples(12) {
			if s.At.Sub(t0) < 5*time.Minute {
				some = append(some, s)
			} else {
				some = append(some, rundir.MemorySample{At: s.At, Error: "GET http://127.0.0.1:9100/metrics: connection refused"})
			}
		}
		writeMem(t, dir, some)
		s := analyzed(t, dir)
		if s.Drift == nil || s.Drift.Memory != nil {
			t.Fatalf("five minutes of twelve sampled: memory slope %v, want null", s.Drift)
		}
		if err := s.Evaluate([]string{"drift.memory_slope < 1GB/10m"}); err != nil {
			t.Fatal(err)
		}
		if th := s.Thresholds[0]; th.OK || !strings.Contains(th.Error, "read in 5 of 12 windows") {
			t.Errorf("threshold on a slope of five minutes of twelve: %+v", th)
		}
	})
	t.Run("file lost", func(t *testing.T) {
		s := analyzed(t, memRun().write(t)) // run.json says it sampled; no file
		if s.Drift == nil || s.Drift.Memory != nil {
			t.Fatalf("file lost: memory slope %v, want null", s.Drift)
		}
		if s.Verdict == VerdictPass || !strings.Contains(strings.Join(s.VerdictReasons, " "), rundir.TargetMemoryFile) {
			t.Errorf("a lost %s: verdict %s, reasons %q", rundir.TargetMemoryFile, s.Verdict, s.VerdictReasons)
		}
	})
	t.Run("not sampled", func(t *testing.T) {
		s := analyzed(t, driftRun(12, func(float64) float64 { return 0.05 }, func(float64) float64 { return 1 }, 0).write(t))
		if err := s.Evaluate([]string{"drift.memory_slope < 1MB/10m"}); err != nil {
			t.Fatal(err)
		}
		if th := s.Thresholds[0]; th.OK || !strings.Contains(th.Error, "names no target.metrics") {
			t.Errorf("threshold on the memory of a run that did not sample it: %+v", th)
		}
	})
}
