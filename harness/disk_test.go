package harness

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// diskSource: a 10-minute plan against the embedded simulator, nothing in
// it failing.
const diskSource = `
name: disk
api: notify
target: embedded
load: { profile: constant, rate: 20/s, duration: 10m }
limit: { rate: 100000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x" }
delivery: { via: none }
sim: { rateLimit: { rate: 100000/1m } }
thresholds:
  - "requests.total > 0"
`

// fillingDisk is a disk whose free space drops from high to low after the
// guard's first looks (the run's start and checkDisk included); it keeps
// the paths it was asked about.
type fillingDisk struct {
	calls     atomic.Int64
	after     int64
	high, low uint64
	mu        sync.Mutex
	paths     []string
}

func (d *fillingDisk) free(path string) (uint64, error) {
	d.mu.Lock()
	d.paths = append(d.paths, path)
	d.mu.Unlock()
	if d.calls.Add(1) > d.after {
		return d.low, nil
	}
	return d.high, nil
}

// A run whose disk runs low stops its sends, as a first Ctrl-C does, and
// ends with everything written: run.json has its end and disk_low, the
// reports are there, and the verdict is incomplete for the environment's
// reason — not pass, though nothing the service did failed, and not an
// error. The plan's size beyond the free space was warned of at the start.
// Nothing here is timed: the bound is a tenth of the plan (a minute of
// sends) where the disk ran low after about 3 seconds.
func TestDiskLowStopsTheRun(t *testing.T) {
	s, err := scenarios.Parse("disk.yaml", "", []byte(diskSource), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	reserve := int64(295 << 20)
	disk := &fillingDisk{after: 4, high: 300 << 20, low: 290 << 20}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a safety net: stops the run as an interrupt, which fails below
	defer cancel()
	var stderr strings.Builder
	lw := &lockedWriter{w: &stderr}
	out := t.TempDir()
	res, err := Run(ctx, Options{Scenario: s, Out: out, Stderr: lw, DiskReserve: reserve, DiskFree: disk.free})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Parts[0]
	sum := p.Summary
	if p.Err != nil || sum == nil {
		t.Fatalf("run: %v\n%s", p.Err, stderr.String())
	}
	var b strings.Builder
	render.Terminal(&b, sum)
	planned := sum.Requests.PlannedCount
	if res.Interrupted || sum.Run.Interrupted || planned != 12000 || sum.Requests.Messages*10 > planned || sum.Requests.Messages == 0 {
		t.Fatalf("interrupted %v, sent %d of %d planned: want stopped by the disk long before its plan\n%s\n%s", res.Interrupted, sum.Requests.Messages, planned, b.String(), stderr.String())
	}
	d := sum.Run.DiskLow
	if d == nil || d.Free != 290<<20 || d.Reserve != uint64(reserve) || d.Path != p.Dir {
		t.Fatalf("run.disk_low %+v, want 290 MiB free under 295 at %s\n%s", d, p.Dir, b.String())
	}
	if sum.Verdict != reports.VerdictIncomplete || res.OK() {
		t.Fatalf("verdict %s: want incomplete\n%s", sum.Verdict, b.String())
	}
	x := reasonOf(sum, "the run's disk ran low")
	if x == nil || x.Whose != reports.WhoseEnvironment || !strings.Contains(x.Text, "its sends were stopped") {
		t.Fatalf("reasons %q", sum.VerdictReasons)
	}
	m := readMeta(t, p.Dir)
	if m.End.IsZero() || m.DiskLow == nil || m.Interrupted {
		t.Errorf("run.json: end %v, disk_low %+v, interrupted %v", m.End, m.DiskLow, m.Interrupted)
	}
	for _, f := range []string{rundir.SummaryFile, "report.html", "report.md", "junit.xml"} {
		if _, err := os.Stat(filepath.Join(p.Dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	e := stderr.String()
	if !strings.Contains(e, "the plan writes about") || !strings.Contains(e, "less than the 295 MiB reserve: no new sends") {
		t.Errorf("stderr does not warn of the plan's size and tell the stop:\n%s", e)
	}
	disk.mu.Lock()
	defer disk.mu.Unlock()
	if disk.paths[0] != out || disk.paths[len(disk.paths)-1] != p.Dir {
		t.Errorf("the guard looked at %q, want the output directory first, then the run's", disk.paths)
	}
}

// A run whose output directory's disk has less free than the reserve does
// not start: an error that says so, and no run directory. A reserve of none
// (negative) starts it, and the guard never looks.
func TestDiskReserveRefusesTheRun(t *testing.T) {
	s, err := scenarios.Parse("disk.yaml", "", []byte(strings.Replace(diskSource, "duration: 10m", "duration: 1s", 1)), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "runs") // not there yet: its parent's disk is asked
	disk := &fillingDisk{high: 100 << 20, low: 100 << 20}
	_, err = Run(context.Background(), Options{Scenario: s, Out: out, DiskFree: disk.free})
	if !errors.Is(err, ErrDiskReserve) || !strings.Contains(err.Error(), "100 MiB free, less than the 256 MiB") {
		t.Fatalf("err %v, want ErrDiskReserve naming the free space and the default reserve", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s made for a run refused: %v", out, err)
	}
	if disk.paths[0] != filepath.Dir(out) {
		t.Errorf("asked %q, want the nearest directory that exists", disk.paths)
	}
	var stderr strings.Builder
	lw := &lockedWriter{w: &stderr}
	none := &fillingDisk{high: 100 << 20, low: 100 << 20}
	res, err := Run(context.Background(), Options{Scenario: s, Out: out, DiskReserve: -1, DiskFree: none.free, Stderr: lw})
	if err != nil || res.Parts[0].Summary == nil || res.Parts[0].Summary.Run.DiskLow != nil {
		t.Fatalf("no reserve: %v %+v\n%s", err, res, stderr.String())
	}
	if n := none.calls.Load(); n != 0 {
		t.Errorf("the guard looked %d times with no reserve", n)
	}
}

// The plan's size of a run (scenarios.Plan.DiskBytes, what msgload
// validate prints and the disk guard warns by) is about what a run of it
// writes: within a quarter of the raw files of a run of each API, with
// callbacks and the embedded simulator's truth and without.
func TestPlanSizesTheDisk(t *testing.T) {
	const messaging = `
name: size-messaging
api: messaging
target: embedded
load: { profile: constant, rate: 50/s, requests: 150 }
message:
  recipient: "+7999{0000000-9999999}"
  text: "size {{.Seq}}"
  scenario: [ { channel: sms, sender: msgload } ]
delivery: { via: sink, grace: 10s }
sim: { profiles: { sms: { median: 100ms, p95: 300ms, outcomes: { DELIVERED: 100% } } } }
`
	const notify = `
name: size-notify
api: notify
target: embedded
load: { profile: constant, rate: 50/s, requests: 150 }
limit: { rate: 100000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x" }
delivery: { via: none }
sim: { rateLimit: { rate: 100000/1m } }
`
	for _, src := range []string{messaging, notify} {
		s, err := scenarios.Parse("size.yaml", "", []byte(src), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		t.Run(s.Name, func(t *testing.T) {
			var stderr strings.Builder
			res, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: &lockedWriter{w: &stderr}})
			if err != nil || res.Parts[0].Summary == nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			dir := res.Parts[0].Dir
			// The plan's size is of a plan held and every callback come: on a
			// busy machine that missed either, the verdict must say so and the
			// size says nothing.
			if sum := res.Parts[0].Summary; sum.Requests.Messages < 150 || sum.Delivery.Lost > 0 {
				if sum.Verdict == reports.VerdictPass {
					t.Fatalf("%d of 150 messages sent, %d lost, yet the verdict passes", sum.Requests.Messages, sum.Delivery.Lost)
				}
				t.Logf("the machine did not keep up (%d of 150 sent, %d lost; %s): the size is not compared", sum.Requests.Messages, sum.Delivery.Lost, sum.Verdict)
				return
			}
			var raw int64
			for _, f := range []string{rundir.AttemptsFile, rundir.ResultsFile, rundir.EventsFile, rundir.TruthStreamFile} {
				if st, err := os.Stat(filepath.Join(dir, f)); err == nil {
					raw += st.Size()
				}
			}
			plan := s.Plan().DiskBytes
			if r := float64(raw) / float64(plan); r < 0.75 || r > 1.25 {
				t.Errorf("the plan says %d bytes, the run's raw files are %d (%.2f×)", plan, raw, r)
			}
			t.Logf("plan %d bytes, raw files %d", plan, raw)
		})
	}
}

// On a real disk that fills — a 3 MiB tmpfs, mounted when the test may
// (root) — a run at 300/s with callbacks and the embedded simulator's truth
// keeps 1 MiB free: its sends stop within the first 3 MiB, and everything is
// written in what is left: run.json with disk_low, the reports, verdict
// incomplete. Without the guard the same disk ended the run as an error
// with no report (the attempt log could not be written).
func TestDiskLowOnARealDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
	src := strings.NewReplacer("rate: 20/s, duration: 10m", "rate: 300/s, duration: 60s", "delivery: { via: none }", "delivery: { via: sink, grace: 10s }").Replace(diskSource)
	s, err := scenarios.Parse("disk.yaml", "", []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	res, err := Run(context.Background(), Options{Scenario: s, Out: filepath.Join(mnt, "runs"), Stderr: &lockedWriter{w: &stderr}, DiskReserve: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Parts[0]
	if p.Err != nil || p.Summary == nil {
		t.Fatalf("part: %v\n%s", p.Err, stderr.String())
	}
	sum := p.Summary
	if sum.Run.DiskLow == nil || sum.Verdict != reports.VerdictIncomplete || sum.Requests.Messages >= sum.Requests.PlannedCount {
		t.Fatalf("disk_low %+v, verdict %s, sent %d of %d\n%s", sum.Run.DiskLow, sum.Verdict, sum.Requests.Messages, sum.Requests.PlannedCount, stderr.String())
	}
	for _, f := range []string{rundir.SummaryFile, "report.html", "report.md", "junit.xml", rundir.MetaFile} {
		if st, err := os.Stat(filepath.Join(p.Dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// The part's disk is on /metrics with the run's labels: the free space read
// at each scrape (a disk that fills reads lower at the next), and the
// reserve.
func TestDiskOnMetrics(t *testing.T) {
	disk := &fillingDisk{after: 1, high: 5 << 30, low: 300 << 20}
	reg := prometheus.NewRegistry()
	r := &partRun{id: "run-1", dir: t.TempDir(), reg: reg, o: &Options{DiskFree: disk.free, DiskReserve: 256 << 20}}
	r.registerDisk()
	for _, want := range []float64{5 << 30, 300 << 20} {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, mf := range mfs {
			m := mf.GetMetric()[0]
			if l := m.GetLabel(); len(l) != 1 || l[0].GetName() != "run_id" || l[0].GetValue() != "run-1" {
				t.Errorf("%s labels %v, want run_id=run-1", mf.GetName(), l)
			}
			got[mf.GetName()] = m.GetGauge().GetValue()
		}
		if got["msgload_run_disk_free_bytes"] != want || got["msgload_run_disk_reserve_bytes"] != 256<<20 {
			t.Errorf("scraped %v, want free %v and the reserve", got, want)
		}
	}
}
