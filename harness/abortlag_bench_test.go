package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// abortLagSource: messaging at RATE/s for up to 20 minutes on the embedded
// simulator, every message called back, a tenth of the sends answered 500,
// and an abortOnFail bound on the count of 500s that the run crosses late,
// after a long history for each live analysis to read again.
const abortLagSource = `
name: abortlag
api: messaging
target: embedded
sink: embedded
load: { profile: constant, rate: %d/s, duration: 20m }
message:
  recipient: "+7999{0000000-9999999}"
  text: "al {{.Seq}}"
  scenario: [ { channel: sms, sender: msgload } ]
delivery: { via: sink, grace: 10s }
sim:
  seed: 7
  rateLimit: { rate: 100000000/1m }
  faults: { error500: 10%% }
  callbacks: { duplicate: %s }
  profiles: { sms: { median: 200ms, p95: 1s, outcomes: { DELIVERED: 100%% } } }
thresholds:
  - { expr: '%s < %d', abortOnFail: true }
`

// BenchmarkAbortLag measures how soon an abortOnFail threshold stops the
// sends once it can no longer pass, late in a long run: the bound on the
// count of 500s is crossed when the BOUND-th 500 is answered (read from
// attempts.jsonl), and run.json's aborted.at says when the run stopped the
// sends. The lag is the live analysis's: the attacker's flush (at most a
// second), then up to two analyses of everything sent so far (one under
// way when the bound is crossed, the next that sees it). Reported as
// s-to-stop, with the messages sent by then.
//
//	MSGLOAD_BENCH_ABORT_RATE=1000 MSGLOAD_BENCH_ABORT_BOUND=54000 \
//	  go test ./harness -run '^$' -bench '^BenchmarkAbortLag$' -benchtime 1x -timeout 30m
//
// (1,000/s, a tenth answered 500: the bound crossed at about minute 9.)
// The default is 200/s crossing at about 50 s.
//
// MSGLOAD_BENCH_ABORT_ON=duplicates bounds delivery.duplicates instead, a
// tenth of the callbacks sent twice: crossed when the BOUND-th second
// arrival of a message's status reaches the sink (read from events.jsonl
// here: the sink takes every call of this run, so each is a duplicate).
func BenchmarkAbortLag(b *testing.B) {
	rate := benchEnvInt(b, "MSGLOAD_BENCH_ABORT_RATE", 200)
	bound := benchEnvInt(b, "MSGLOAD_BENCH_ABORT_BOUND", 1000)
	figure, dup, crossings := `requests.codes["500"]`, "0", answered500
	if os.Getenv("MSGLOAD_BENCH_ABORT_ON") == "duplicates" {
		figure, dup, crossings = "delivery.duplicates", "10%", secondArrivals
	}
	for range b.N {
		src := fmt.Sprintf(abortLagSource, rate, dup, figure, bound)
		p, stderr := runSource(b, "abortlag.yaml", "", src)
		if p.Err != nil || p.Summary == nil || p.Summary.Run.Aborted == nil {
			b.Fatalf("run not aborted: %v\n%s", p.Err, stderr)
		}
		answered, err := crossings(p.Dir)
		if err != nil {
			b.Fatal(err)
		}
		start, err := time.Parse(time.RFC3339Nano, p.Summary.Run.Start)
		if err != nil {
			b.Fatal(err)
		}
		slices.SortFunc(answered, func(x, y time.Time) int { return x.Compare(y) })
		if len(answered) < bound {
			b.Fatalf("%d counted of %s, under the bound %d", len(answered), figure, bound)
		}
		crossed := answered[bound-1]
		lag := p.Summary.Run.Aborted.At.Sub(crossed)
		b.ReportMetric(lag.Seconds(), "s-to-stop")
		b.ReportMetric(float64(p.Summary.Requests.Messages), "messages")
		b.ReportMetric(crossed.Sub(start).Seconds(), "s-crossed")
		b.Logf("%s < %d crossed %.1f s into the run; stopped %.1f s later; %d messages sent, %d planned a second; verdict %s",
			figure, bound, crossed.Sub(start).Seconds(), lag.Seconds(), p.Summary.Requests.Messages, rate, p.Summary.Verdict)
		if strings.Contains(stderr, "read the files again") {
			b.Logf("the carrying stopped: %s", stderr)
		}
	}
}

// answered500 are the times the run's 500s were answered.
func answered500(dir string) ([]time.Time, error) {
	var answered []time.Time
	err := rundir.ReadJSONL(filepath.Join(dir, rundir.AttemptsFile), func(at rundir.Attempt) error {
		if at.Code == 500 {
			answered = append(answered, at.Sent.Add(time.Duration(at.Latency*float64(time.Second))))
		}
		return nil
	}, nil)
	return answered, err
}

// secondArrivals are the times of every arrival of a callback's status
// (message, state, channel) after its first: the duplicates of a run whose
// sink took every call.
func secondArrivals(dir string) ([]time.Time, error) {
	seen := map[[3]string]bool{}
	var dups []time.Time
	err := rundir.ReadJSONL(filepath.Join(dir, rundir.EventsFile), func(e rundir.Event) error {
		if e.Kind != rundir.KindCallback || e.Corr == nil || e.Corr.Seq <= 0 {
			return nil
		}
		k := [3]string{strconv.FormatInt(e.Corr.Seq, 10), e.Corr.State, e.Corr.Channel}
		if seen[k] {
			dups = append(dups, e.ReceivedAt)
		}
		seen[k] = true
		return nil
	}, nil)
	return dups, err
}

// benchEnvInt is an integer from the environment, def when unset.
func benchEnvInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
