package reports

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestCarriedIsTheFileAnalysis: the carried analysis, fed attempts.jsonl as
// a writer writes it (whole lines and a torn last one, at random lengths),
// gives at every length the summary the file's analysis gives of the file
// at that length (AnalyzeSendsCounting: the counting pass, the same leaf
// for leaf, verdict and warnings included), and reading it for a judgement
// changes nothing in what it carries (two judgements in a row agree, and
// the next length is still right). A run it does not take, or a record it
// did not foresee, is refused with ErrNotCarried — never figures that are
// not the file's.
func TestCarriedIsTheFileAnalysis(t *testing.T) {
	defer func(b, l int64) { onePassBytes, onePassLines = b, l }(onePassBytes, onePassLines)
	onePassBytes, onePassLines = 0, 0 // the file's analysis in passes, however small
	dirs := shapeAndTestdataRuns(t, 3_000)
	// A soak still going: run.json has no end yet (no drift is fitted, and
	// the carried analysis gathers no window).
	going := genStream(3_000, 11, "none", 1)
	stretch(going, 66)
	going.meta.AttackEnd, going.meta.End = time.Time{}, time.Time{}
	dirs["none-soak-11m-going"] = going.write(t)
	// Written by an attacker (in the order its records end): these are
	// carried to the end.
	mustCarry := []string{"none", "none-retries", "none-soak-11m", "none-soak-11m-going", "callbacks", "none-429", "callbacks-429",
		"testdata/sim-ex-sliding", "testdata/sim-sliding-7per5s-bursty"}
	carried := map[string]bool{}
	for name, src := range dirs {
		t.Run(name, func(t *testing.T) {
			lines := attemptLines(t, src)
			live, file := t.TempDir(), t.TempDir()
			for _, d := range []string{live, file} {
				copyRunFiles(t, src, d)
			}
			c, err := NewCarried(live)
			if err != nil {
				if !ErrNotCarried(err) {
					t.Fatal(err)
				}
				t.Logf("not carried: %v", err)
				return
			}
			defer c.Close()
			if carryAlong(t, c, lines, live, file, uint64(len(lines))) {
				carried[name] = true
			}
		})
	}
	for _, name := range mustCarry {
		if !carried[name] {
			t.Errorf("%s was not carried to its end", name)
		}
	}
}

// carryAlong writes lines into live's attempts.jsonl in random lengths
// (seed), each with half of the next line torn after it, and file's with
// the whole lines alone; at each length it reads c and checks its summary
// against the file's analysis (sameLeaves), twice. It says whether c was
// carried to the end; a carrying stopped must say ErrNotCarried, and give
// no summary after.
func carryAlong(t *testing.T, c *Carried, lines [][]byte, live, file string, seed uint64) bool {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 41))
	cut := 0
	for cut < len(lines) {
		cut = min(len(lines), cut+1+rng.IntN(len(lines)/6+1))
		whole := bytes.Join(lines[:cut], nil)
		torn := whole
		if cut < len(lines) {
			torn = append(slices.Clip(whole), lines[cut][:len(lines[cut])/2]...)
		}
		writeFile(t, filepath.Join(live, rundir.AttemptsFile), torn)
		// A last line with no end is not read until it has one: the file's
		// analysis would count it as a line that does not decode (the
		// figure no live threshold reads: requests.bad_lines).
		writeFile(t, filepath.Join(file, rundir.AttemptsFile), whole[:bytes.LastIndexByte(whole, '\n')+1])
		if err := c.Read(); err != nil {
			if !ErrNotCarried(err) {
				t.Fatal(err)
			}
			t.Logf("carried to line %d of %d: %v", cut, len(lines), err)
			if _, err := c.Summary(); !ErrNotCarried(err) {
				t.Fatalf("a summary after the carrying stopped: %v", err)
			}
			return false
		}
		got, err := c.Summary()
		if err != nil {
			t.Fatal(err)
		}
		again, err := c.Summary()
		if err != nil {
			t.Fatal(err)
		}
		want, err := AnalyzeSendsCounting(file)
		if err != nil {
			t.Fatal(err)
		}
		sameLeaves(t, cut, summaryTree(t, got), summaryTree(t, want), live, file)
		sameLeaves(t, cut, summaryTree(t, again), summaryTree(t, got), live, live)
		if t.Failed() {
			return false
		}
	}
	return true
}

// FuzzCarried: whatever attempts.jsonl holds — lines that decode, lines
// that do not, a message's records in any order, copies of lines — the
// carried analysis, fed it in random lengths, gives the file's analysis at
// every length, or stops with ErrNotCarried: never other figures. Seeds in
// testdata/fuzz/FuzzCarried: a run's lines with retries, a line repeated,
// a record after its message's last, garbage.
func FuzzCarried(f *testing.F) {
	f.Add([]byte("{\"seq\":1,\"op\":\"send\",\"attempt\":1,\"code\":500,\"class\":\"http_5xx\",\"sent\":\"2026-11-23T15:36:16Z\"}\n{\"seq\":1,\"op\":\"send\",\"attempt\":2,\"code\":200,\"class\":\"ok\",\"sent\":\"2026-11-23T15:36:17Z\"}\n"), uint64(1))
	meta := genStream(0, 1, "none", 2).meta
	f.Fuzz(func(t *testing.T, body []byte, seed uint64) {
		defer func(b, l int64) { onePassBytes, onePassLines = b, l }(onePassBytes, onePassLines)
		onePassBytes, onePassLines = 0, 0
		lines := bytes.SplitAfter(body, []byte("\n"))
		if len(lines) > 256 || len(body) > 64<<10 { // each length is analysed twice: kept small
			return
		}
		live, file := t.TempDir(), t.TempDir()
		for _, d := range []string{live, file} {
			writeJSON(t, filepath.Join(d, rundir.MetaFile), meta)
		}
		c, err := NewCarried(live)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		carryAlong(t, c, lines, live, file, seed)
	})
}

// TestCarriedStopsAtARecordItDidNotForesee: a copy of a line of a message
// already settled (a second writer, a file copied into itself) would change
// a figure counted: the carrying stops there, never counts it.
func TestCarriedStopsAtARecordItDidNotForesee(t *testing.T) {
	src := genStream(200, 3, "none", 0).write(t)
	lines := attemptLines(t, src)
	live := t.TempDir()
	copyRunFiles(t, src, live)
	c, err := NewCarried(live)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := bytes.Join(lines, nil)
	writeFile(t, filepath.Join(live, rundir.AttemptsFile), body)
	if err := c.Read(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Summary(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(live, rundir.AttemptsFile), append(body, lines[7]...))
	if err := c.Read(); !ErrNotCarried(err) {
		t.Fatalf("a repeated line of a settled message read as %v", err)
	}
	if s, err := c.Summary(); !ErrNotCarried(err) {
		t.Fatalf("a summary after the carrying stopped: %v, %v", s, err)
	}
}

// attemptLines are the lines of dir's attempts.jsonl, each with its newline.
func attemptLines(t *testing.T, dir string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rundir.AttemptsFile))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))
}

// copyRunFiles copies the files of the run in src but attempts.jsonl to dst.
func copyRunFiles(t *testing.T, src, dst string) {
	t.Helper()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() || e.Name() == rundir.AttemptsFile {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, e.Name()), b)
	}
}

func writeFile(t testing.TB, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameLeaves fails the test for every leaf of the summaries got and want
// (trees) that differs, the run directories' names (gotDir, wantDir) aside,
// and those of rate_limit, which the carried analysis does not give
// (LiveThreshold.Carried): with the reasons of the verdict when one of them
// differs (a 429 where the scenario respects the limit is the service's).
func sameLeaves(t *testing.T, cut int, got, want any, gotDir, wantDir string) {
	t.Helper()
	var differ [][]any
	diffLeaves(nil, got, want, &differ)
	limits := slices.ContainsFunc(differ, func(p []any) bool { return p[0] == "rate_limit" })
	for _, p := range differ {
		if p[0] == "rate_limit" || limits && verdictPath(p) {
			continue
		}
		g, w := leafAt(got, p), leafAt(want, p)
		if gs, ok := g.(string); ok {
			if ws, ok := w.(string); ok && bytes.Equal(bytes.ReplaceAll([]byte(gs), []byte(gotDir), []byte(wantDir)), []byte(ws)) {
				continue
			}
		}
		t.Errorf("at line %d: %v is %v carried, %v in the file's analysis", cut, p, g, w)
	}
}

// leafAt is the leaf of tree v at path p (nil when there is none).
func leafAt(v any, p []any) any {
	for _, k := range p {
		switch x := v.(type) {
		case map[string]any:
			s, _ := k.(string)
			v = x[s]
		case []any:
			i, _ := k.(int)
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// BenchmarkCarriedJudgement is a live judgement on the carried analysis
// late in a long run: the attempts of 2 s at 5,000/s read (10,000 lines
// written since the last judgement), then the summary (a deep copy of what
// is carried, finished). Its cost does not grow with what came before;
// each analysis from the files (AnalyzeSendsCounting, files-after-90%)
// reads everything.
// On a directory of MSGLOAD_BENCH_CARRIED_DIR (run.json and attempts.jsonl:
// BenchmarkAnalyzeNoneBounded's, say) after its first 10 % and after 90 %
// of its lines; without one, on a generated run of 200,000 messages.
//
//	MSGLOAD_BENCH_CARRIED_DIR=/tmp/none3m go test ./reports -run '^$' \
//	  -bench '^BenchmarkCarriedJudgement$' -benchtime 20x
func BenchmarkCarriedJudgement(b *testing.B) {
	src := os.Getenv("MSGLOAD_BENCH_CARRIED_DIR")
	if src == "" {
		src = genStream(200_000, 1, "none", 1).write(b)
	}
	body, err := os.ReadFile(filepath.Join(src, rundir.AttemptsFile))
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.SplitAfter(body, []byte("\n"))
	const step = 10_000
	for _, share := range []int{10, 90} {
		b.Run(fmt.Sprintf("after-%d%%", share), func(b *testing.B) {
			dir := b.TempDir()
			meta, err := os.ReadFile(filepath.Join(src, rundir.MetaFile))
			if err != nil {
				b.Fatal(err)
			}
			writeFile(b, filepath.Join(dir, rundir.MetaFile), meta)
			at := len(lines) * share / 100
			f, err := os.Create(filepath.Join(dir, rundir.AttemptsFile))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			for _, l := range lines[:at] {
				f.Write(l)
			}
			c, err := NewCarried(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if err := c.Read(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				for _, l := range lines[at:min(at+step, len(lines))] {
					f.Write(l)
				}
				at = min(at+step, len(lines))
				b.StartTimer()
				if err := c.Read(); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Summary(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(at), "lines-read")
		})
	}
	// The same judgement from the files, after 90 %: every line read again
	// (the live child's AnalyzeSendsCounting).
	b.Run("files-after-90%", func(b *testing.B) {
		dir := b.TempDir()
		meta, err := os.ReadFile(filepath.Join(src, rundir.MetaFile))
		if err != nil {
			b.Fatal(err)
		}
		writeFile(b, filepath.Join(dir, rundir.MetaFile), meta)
		at := len(lines) * 90 / 100
		writeFile(b, filepath.Join(dir, rundir.AttemptsFile), bytes.Join(lines[:at], nil))
		b.ResetTimer()
		for range b.N {
			if _, err := AnalyzeSendsCounting(dir); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(at), "lines-read")
	})
}

// TestCarriedHoldsNoDriftWhileTheRunGoes: a run still going (run.json
// without its end) has no drift to fit, and the carried analysis keeps no
// window of it — a few kilobytes a minute, copied at every judgement, that
// would grow with a day's soak; a finished run's windows are kept, and
// shared with each summary's copy, not copied.
func TestCarriedHoldsNoDriftWhileTheRunGoes(t *testing.T) {
	for _, going := range []bool{true, false} {
		r := genStream(10_000, 11, "none", 1) // 11 minutes once stretched
		stretch(r, 66)
		if going {
			r.meta.AttackEnd, r.meta.End = time.Time{}, time.Time{}
		}
		src := r.write(t)
		dir := t.TempDir()
		copyRunFiles(t, src, dir)
		writeFile(t, filepath.Join(dir, rundir.AttemptsFile), bytes.Join(attemptLines(t, src), nil))
		c, err := NewCarried(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Read(); err != nil {
			t.Fatal(err)
		}
		s, err := c.Summary()
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		switch n := len(c.a.drift.wins); {
		case going && (n != 0 || s.Drift != nil):
			t.Errorf("a run going: %d windows kept, drift %+v", n, s.Drift)
		case !going && (n < 10 || s.Drift == nil):
			t.Errorf("a finished run of 11 minutes: %d windows kept, drift %+v", n, s.Drift)
		}
	}
}
