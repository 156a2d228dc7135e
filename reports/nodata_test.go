package reports

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// build concludes a hand-built run and returns the summary and summary.json
// (the report files are reports/render's, tested there).
func build(t *testing.T, r *run) (*Summary, map[string]string) {
	t.Helper()
	return buildDir(t, r.write(t))
}

// buildDir is build of a run directory already written.
func buildDir(t *testing.T, dir string) (*Summary, map[string]string) {
	t.Helper()
	s, err := conclude(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	return s, map[string]string{rundir.SummaryFile: string(b)}
}

// conclude is what a build does for the analysis: Conclude, then
// summary.json written.
func conclude(dir string) (*Summary, error) {
	s, err := Conclude(dir)
	if err != nil {
		return nil, err
	}
	b, err := s.JSON()
	if err != nil {
		return nil, err
	}
	return s, rundir.WriteFile(filepath.Join(dir, rundir.SummaryFile), b)
}

func threshold(t *testing.T, s *Summary, expr string) Threshold {
	t.Helper()
	for _, th := range s.Thresholds {
		if th.Expr == expr {
			return th
		}
	}
	t.Fatalf("no threshold %q in %+v", expr, s.Thresholds)
	return Threshold{}
}

func requireNoData(t *testing.T, s *Summary, expr string) {
	t.Helper()
	th := threshold(t, s, expr)
	if th.OK || len(th.NoData) == 0 || !strings.HasPrefix(th.Error, "no data") {
		t.Errorf("%q: %+v, want a failure for no data", expr, th)
	}
}

// Every request failed: nothing was accepted, so "delivery.lost == 0" has no
// data and cannot pass.
func TestNothingAcceptedLostHasNoData(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Thresholds = []string{"delivery.lost == 0", "delivery.expected == 0"}
	for i := range 4 {
		r.send(int64(i+1), "c1", float64(i), 503, 0.01)
	}
	s, _ := build(t, r)
	requireNoData(t, s, "delivery.lost == 0")
	if th := threshold(t, s, "delivery.expected == 0"); !th.OK {
		t.Errorf("expected is data (0 accepted): %+v", th)
	}
}

// A summary.json written before `measured` and nulls existed reads as before.
func TestParseOldSummary(t *testing.T) {
	for via, want := range map[string]bool{"sink": true, "poll": true, "none": false} {
		s, err := parseSummary([]byte(`{"schema":1,"ok":true,"delivery":{"via":"` + via + `","expected":3,"lost":1,"latency":{"count":2,"p50":0.5}}}`))
		if err != nil {
			t.Fatal(err)
		}
		if s.Delivery.Measured != want || s.Delivery.Expected != 3 || s.Delivery.Latency.P50 != 0.5 {
			t.Errorf("via %s: %+v", via, s.Delivery)
		}
	}
}

// A latency read through a computed path cannot be checked for data before
// evaluation: such a threshold is refused when it is compiled; fixed paths and
// counts are accepted.
func TestComputedLatencyPathRefused(t *testing.T) {
	for src, refused := range map[string]bool{
		`all(values(delivery.by_channel), .p95 < 1s)`:      true,
		`delivery.by_channel[run.api].p95 < 1s`:            true,
		`all(delivery.failover.steps, .time.p95 < 1s)`:     true,
		`delivery.by_channel["sms"].p95 < 1s`:              false,
		`delivery.failover.steps[0].time.p50 < 1s`:         false,
		`all(values(delivery.by_channel), .count > 0)`:     false,
		`sum(map(rate_limit.clients, .rejected_429)) == 0`: false,
	} {
		_, err := summary.CompileThreshold(src)
		if got := err != nil; got != refused {
			t.Errorf("%s: error %v, want refused %v", src, err, refused)
		}
		if refused && !errors.Is(err, summary.ErrBadThreshold) {
			t.Errorf("%s: %v, want ErrBadThreshold", src, err)
		}
	}
}
