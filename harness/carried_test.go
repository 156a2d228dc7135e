package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// TestJudgementsAreCarried: the live loop judges a threshold on the sends
// on the analysis it carries from one judgement to the next
// (reports.Carried): each judgement reads only what was written since the
// last, and its value is the file's analysis of the file as it is then
// (reports.AnalyzeSendsCounting, computed here). A record the carried
// analysis did not foresee (a copy of a settled message's line) ends the
// carrying, says so on stderr, and the judgements go on in a child, from
// the files — the same value.
func TestJudgementsAreCarried(t *testing.T) {
	src := filepath.Join("..", "reports", "testdata", "runs", "reorder")
	lines := bytes.SplitAfter(must(os.ReadFile(filepath.Join(src, rundir.AttemptsFile))), []byte("\n"))
	dir := t.TempDir()
	for _, f := range []string{rundir.MetaFile, rundir.EventsFile} {
		if err := os.WriteFile(filepath.Join(dir, f), must(os.ReadFile(filepath.Join(src, f))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	total := 0 // a line a record
	for _, b := range lines {
		if len(bytes.TrimSpace(b)) > 0 {
			total++
		}
	}
	l, stderr := judgingLoop(t, dir, "sink", "requests.total < "+strconv.Itoa(total))
	th := l.rules[0].th
	judge := func(body []byte, read string) reports.LiveState {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, rundir.AttemptsFile), body, 0o644); err != nil {
			t.Fatal(err)
		}
		reply, err := l.analyze([]int{0}, false)
		if err != nil {
			t.Fatal(err)
		}
		if reply.Read != read {
			t.Fatalf("judged on %q, want %q\n%s", reply.Read, read, stderr.String())
		}
		want, err := reports.AnalyzeSendsCounting(dir)
		if err != nil {
			t.Fatal(err)
		}
		st := reply.States[0]
		if !st.Known || st.Value != float64(want.Requests.Total) {
			t.Fatalf("judged %+v, the file's analysis counts %d requests", st, want.Requests.Total)
		}
		return st
	}
	half := len(lines) / 2
	if st := judge(bytes.Join(lines[:half], nil), "carried"); !st.OK {
		t.Fatalf("half the requests: %+v", st)
	}
	// With a rule it does not judge (the ids answered twice): that one in
	// a child, the other still carried, each state in its place.
	other, err := reports.CompileLive("idempotency.id_collisions < 1000000", "sink")
	if err != nil {
		t.Fatal(err)
	}
	l.rules = append(l.rules, liveRule{th: other})
	reply, err := l.analyze([]int{0, 1}, false)
	if err != nil {
		t.Fatal(err)
	}
	want, err := reports.AnalyzeSends(dir)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Read != "carried, and sends" || len(reply.States) != 2 ||
		reply.States[0].Expr != th.Expr() || reply.States[0].Value != float64(want.Requests.Total) ||
		reply.States[1].Expr != other.Expr() || !reply.States[1].Known || reply.States[1].Value != float64(want.Idempotency.IDCollisions) {
		t.Fatalf("judged on %q: %+v; the file's analysis counts %d requests, %d ids answered twice", reply.Read, reply.States, want.Requests.Total, want.Idempotency.IDCollisions)
	}
	l.rules = l.rules[:1]
	torn := append(bytes.Join(lines, nil), lines[1][:len(lines[1])/2]...) // a line being written: not read yet
	if st := judge(torn, "carried"); st.OK || !st.Final {
		t.Fatalf("every request: %+v", st)
	}
	if stderr.Len() > 0 {
		t.Fatalf("stderr while carried: %s", stderr.String())
	}
	// A copy of the line of a message accepted at once: settled at it.
	i := slices.IndexFunc(lines, func(b []byte) bool {
		return bytes.Contains(b, []byte(`"code":200`)) && bytes.Contains(b, []byte(`"attempt":1,`))
	})
	if i < 0 {
		t.Fatal("no send accepted at once in the run")
	}
	judge(append(bytes.Join(lines, nil), lines[i]...), "counts")
	if !strings.Contains(stderr.String(), "live judgements read the files again from now on") {
		t.Errorf("the carrying stopped and nothing said so: %q", stderr.String())
	}
}

// judgingLoop is a live loop of a part whose directory is dir, with the
// one abortOnFail threshold expr (delivery via via), not started: a
// test calls its analyze; its stderr is returned. Skipped with no
// executable to run a child analysis in.
func judgingLoop(t *testing.T, dir, via, expr string) (*liveLoop, *strings.Builder) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("no executable to run the live analysis in: %v", err)
	}
	th, err := reports.CompileLive(expr, via)
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	r := &partRun{dir: dir, s: &scenarios.Scenario{Name: "x"}, o: &Options{Stderr: &lockedWriter{w: stderr}, Now: time.Now}, stops: &sendStop{cancel: func() {}}}
	l := &liveLoop{r: r, rules: []liveRule{{th: th}}, exe: exe, done: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	t.Cleanup(func() { l.dropCarried(nil) })
	return l, stderr
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestDeliveryJudgementsAreCarried: a threshold on a count of the sink's
// (delivery.duplicates) is judged on the carried analysis too, which then
// reads events.jsonl beside attempts.jsonl as they are written
// (reports.NewCarried with events); each value is the whole analysis's of
// the files as they are then (reports.Analyze, computed here), and a last
// line being written of either file is not read yet.
func TestDeliveryJudgementsAreCarried(t *testing.T) {
	// The reorder run of the embedded simulator: callbacks, duplicates
	// among them, and replies.
	src := filepath.Join("..", "reports", "testdata", "runs", "reorder")
	all, err := reports.Analyze(src)
	if err != nil {
		t.Fatal(err)
	}
	if all.Delivery.Duplicates < 2 {
		t.Fatalf("the run has %d duplicates: nothing to judge", all.Delivery.Duplicates)
	}
	judgeAlong(t, src, "sink", "delivery.duplicates", float64(all.Delivery.Duplicates), func(s *reports.Summary) float64 { return float64(s.Delivery.Duplicates) })
}

// TestPollsAndProbesAreCarried: runs whose messages have records after
// their last send, as the attacker writes them against the embedded
// simulator — messages delivered via poll (a message's polls) with
// retries, and notifications with idempotency probes (sequential,
// concurrent, in flight with the first send, and with a changed body) —
// are judged live on the carried analysis, which settles their messages
// once quiet (reports.NewCarried): at 30 %, 60 % and 100 % of their files,
// with two thresholds each, each value the whole analysis's of the whole
// lines then.
func TestPollsAndProbesAreCarried(t *testing.T) {
	runs := []struct{ name, via, src string }{
		{"polls", "poll", `name: polls
api: messaging
target: embedded
load: { rate: 40/s, requests: 120 }
message: { recipient: "+79990000001", text: "x {{.Seq}}", scenario: [ { channel: sms, sender: msgload } ] }
delivery: { via: poll, pollInterval: 200ms, grace: 5s }
retry: { on: [500], max: 2, backoff: 50ms }
sim:
  faults: { error500: 10% }
  profiles:
    sms: { median: 300ms, p95: 800ms, outcomes: { DELIVERED: 90%, NOT_DELIVERED: 10% } }
`},
		{"probes", "none", `name: probes
api: notify
target: embedded
load: { rate: 40/s, requests: 120 }
limit: { rate: 100000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
idempotency: { probes: 30%, concurrent: 2, inFlight: 2, changedBody: true }
delivery: { via: none }
sim: { rateLimit: { rate: 100000/1m } }
`},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			p, stderr := runSource(t, r.name+".yaml", t.TempDir(), r.src)
			if p.Err != nil {
				t.Fatalf("%v\n%s", p.Err, stderr)
			}
			probes := 0
			if err := rundir.ReadJSONL(filepath.Join(p.Dir, rundir.AttemptsFile), func(a rundir.Attempt) error {
				if a.Probe != "" {
					probes++
				}
				return nil
			}, nil); err != nil {
				t.Fatal(err)
			}
			all, err := reports.Analyze(p.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if r.via == "poll" && (all.Delivery.Received == 0 || all.Idempotency.Retries == 0) || r.via == "none" && probes == 0 {
				t.Fatalf("%d statuses polled, %d retries, %d probes: the test proves nothing", all.Delivery.Received, all.Idempotency.Retries, probes)
			}
			t.Logf("%d requests, %d retries, %d probes, %d statuses received", all.Requests.Total, all.Idempotency.Retries, probes, all.Delivery.Received)
			judgeAlong(t, p.Dir, r.via, "requests.total", float64(all.Requests.Total), func(s *reports.Summary) float64 { return float64(s.Requests.Total) })
			if r.via == "poll" {
				judgeAlong(t, p.Dir, r.via, "delivery.malformed", 1, func(s *reports.Summary) float64 { return float64(s.Delivery.Malformed) })
			} else {
				judgeAlong(t, p.Dir, r.via, "idempotency.probes", float64(all.Idempotency.Probes), func(s *reports.Summary) float64 { return float64(s.Idempotency.Probes) })
			}
		})
	}
}

// judgeAlong writes the run in src into a directory of its own at 30 %,
// 60 % and 100 % of its attempts.jsonl and events.jsonl, each with half of
// its next line after it (being written), and judges the abortOnFail
// threshold "figure < bound" (delivery via) on it each time: it must be
// judged on the carried analysis with the value fig gives of the whole
// analysis of the whole lines (reports.Analyze, computed here), and fail
// (for good) at 100 % exactly when that value reaches bound.
func judgeAlong(t *testing.T, src, via, figure string, bound float64, fig func(*reports.Summary) float64) {
	t.Helper()
	attempts := bytes.SplitAfter(must(os.ReadFile(filepath.Join(src, rundir.AttemptsFile))), []byte("\n"))
	events := bytes.SplitAfter(must(os.ReadFile(filepath.Join(src, rundir.EventsFile))), []byte("\n"))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, rundir.MetaFile), must(os.ReadFile(filepath.Join(src, rundir.MetaFile))), 0o644); err != nil {
		t.Fatal(err)
	}
	l, stderr := judgingLoop(t, dir, via, figure+" < "+strconv.FormatFloat(bound, 'f', -1, 64))
	// write puts the first share of each file's lines in dir, with half of
	// the next line of each after them (being written).
	write := func(share float64) {
		for _, f := range []struct {
			name  string
			lines [][]byte
		}{{rundir.AttemptsFile, attempts}, {rundir.EventsFile, events}} {
			n := int(float64(len(f.lines)) * share)
			body := bytes.Join(f.lines[:n], nil)
			if n < len(f.lines) {
				body = append(body, f.lines[n][:len(f.lines[n])/2]...)
			}
			if err := os.WriteFile(filepath.Join(dir, f.name), body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// judged is the whole analysis's figure of the files' whole lines.
	judged := func() float64 {
		whole := t.TempDir()
		for _, f := range []string{rundir.MetaFile, rundir.AttemptsFile, rundir.EventsFile} {
			b := must(os.ReadFile(filepath.Join(dir, f)))
			if err := os.WriteFile(filepath.Join(whole, f), b[:bytes.LastIndexByte(b, '\n')+1], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, err := reports.Analyze(whole)
		if err != nil {
			t.Fatal(err)
		}
		return fig(s)
	}
	for _, share := range []float64{0.3, 0.6, 1} {
		write(share)
		reply, err := l.analyze([]int{0}, false)
		if err != nil {
			t.Fatal(err)
		}
		want := judged()
		st := reply.States[0]
		if reply.Read != "carried" || !st.Known || st.Value != want {
			t.Fatalf("%s at %.0f%% of the files: judged on %q: %+v; the whole analysis gives %g\n%s", figure, share*100, reply.Read, st, want, stderr.String())
		}
		if fails := want >= bound; st.OK == fails || share == 1 && st.Final != fails {
			t.Fatalf("%s at %.0f%% of the files: %+v", figure, share*100, st)
		}
	}
	if stderr.Len() > 0 {
		t.Fatalf("stderr while carried: %s", stderr.String())
	}
}
