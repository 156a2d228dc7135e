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
	l, stderr := judgingLoop(t, dir, "requests.total < "+strconv.Itoa(total))
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
// one abortOnFail threshold expr (delivery via the sink), not started: a
// test calls its analyze; its stderr is returned. Skipped with no
// executable to run a child analysis in.
func judgingLoop(t *testing.T, dir, expr string) (*liveLoop, *strings.Builder) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("no executable to run the live analysis in: %v", err)
	}
	th, err := reports.CompileLive(expr, "sink")
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
	attempts := bytes.SplitAfter(must(os.ReadFile(filepath.Join(src, rundir.AttemptsFile))), []byte("\n"))
	events := bytes.SplitAfter(must(os.ReadFile(filepath.Join(src, rundir.EventsFile))), []byte("\n"))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, rundir.MetaFile), must(os.ReadFile(filepath.Join(src, rundir.MetaFile))), 0o644); err != nil {
		t.Fatal(err)
	}
	all, err := reports.Analyze(src)
	if err != nil {
		t.Fatal(err)
	}
	if all.Delivery.Duplicates < 2 {
		t.Fatalf("the run has %d duplicates: nothing to judge", all.Delivery.Duplicates)
	}
	l, stderr := judgingLoop(t, dir, "delivery.duplicates < "+strconv.FormatInt(all.Delivery.Duplicates, 10))
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
	// judged is what the whole analysis counts of the files' whole lines.
	judged := func() int64 {
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
		return s.Delivery.Duplicates
	}
	for _, share := range []float64{0.3, 0.6, 1} {
		write(share)
		reply, err := l.analyze([]int{0}, false)
		if err != nil {
			t.Fatal(err)
		}
		want := judged()
		st := reply.States[0]
		if reply.Read != "carried" || !st.Known || st.Value != float64(want) {
			t.Fatalf("at %.0f%% of the files: judged on %q: %+v; the whole analysis counts %d duplicates\n%s", share*100, reply.Read, st, want, stderr.String())
		}
		if fails := share == 1; st.OK == fails || st.Final != fails {
			t.Fatalf("at %.0f%% of the files: %+v", share*100, st)
		}
	}
	if stderr.Len() > 0 {
		t.Fatalf("stderr while carried: %s", stderr.String())
	}
}
