package reports

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// lostRun is a run with more lost messages than summary.json lists: 60
// accepted, every fifth delivered in time, every seventh late, one refused.
func lostRun() *run {
	r := passingRun()
	r.meta.Thresholds = nil
	for seq := int64(2); seq <= 60; seq++ {
		r.send(seq, "c1", float64(seq)/2, 200, 0.01)
		switch {
		case seq%5 == 0:
			r.callback(seq, float64(seq)/2+1, "DELIVERED", "sms", true, false)
		case seq%7 == 0:
			r.callback(seq, 75, "DELIVERED", "sms", true, false) // after the deadline (70 s): late
		}
	}
	r.send(61, "c1", 31, 500, 0.01) // refused: not lost
	slices.Reverse(r.attempts)
	return r
}

// rawLost is the lost and late messages as the test reads them from the raw
// files: accepted sends with no terminal callback by the deadline, and those
// of them with one after it.
func rawLost(t *testing.T, dir string, deadline time.Time) (lost, late map[int64]bool) {
	t.Helper()
	lost, late = map[int64]bool{}, map[int64]bool{}
	readLines(t, filepath.Join(dir, rundir.AttemptsFile), func(b []byte) {
		var a rundir.Attempt
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		if a.Op == "send" && a.Code/100 == 2 {
			lost[a.Seq] = true
		}
	})
	readLines(t, filepath.Join(dir, rundir.EventsFile), func(b []byte) {
		var e rundir.Event
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		if c := e.Corr; c != nil && c.Terminal && lost[c.Seq] {
			if e.ReceivedAt.After(deadline) {
				late[c.Seq] = true
			} else {
				delete(lost, c.Seq)
			}
		}
	})
	return lost, late
}

// readLines calls fn with each line of the file at p.
func readLines(t *testing.T, p string, fn func([]byte)) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fn(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// readLostFile is the lines of dir's lost.jsonl, sorted, and its messages.
func readLostFile(t *testing.T, dir string) ([]string, []rundir.LostMessage) {
	t.Helper()
	var lines []string
	var msgs []rundir.LostMessage
	readLines(t, filepath.Join(dir, rundir.LostFile), func(b []byte) {
		var m rundir.LostMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %q: %v", rundir.LostFile, b, err)
		}
		lines, msgs = append(lines, string(b)), append(msgs, m)
	})
	slices.Sort(lines)
	return lines, msgs
}

// TestLostFileListsEveryLostMessage: a build writes lost.jsonl with every
// lost message, once, late ones flagged — delivery.lost and delivery.late of
// them, the very messages the raw files say — mode 0600; the one-pass
// analysis lists the same lines as the bounded one the build took.
func TestLostFileListsEveryLostMessage(t *testing.T) {
	dir := lostRun().write(t)
	if !twoPasses(os.DirFS(dir)) {
		t.Fatal("the run is not analysed in passes: the bounded path goes untested")
	}
	s, _ := buildDir(t, dir)
	deadline, err := time.Parse(time.RFC3339Nano, s.Delivery.Deadline)
	if err != nil {
		t.Fatal(err)
	}
	wantLost, wantLate := rawLost(t, dir, deadline)
	lines, msgs := readLostFile(t, dir)
	gotLost, gotLate := map[int64]bool{}, map[int64]bool{}
	for _, m := range msgs {
		if gotLost[m.Seq] {
			t.Errorf("message %d listed twice", m.Seq)
		}
		gotLost[m.Seq] = true
		if m.Late {
			gotLate[m.Seq] = true
		}
	}
	if int64(len(msgs)) != s.Delivery.Lost || int64(len(gotLate)) != s.Delivery.Late || len(msgs) <= MaxListed || len(gotLate) == 0 {
		t.Errorf("%s: %d messages, %d late; delivery.lost %d, .late %d (want more than %d, some late)", rundir.LostFile, len(msgs), len(gotLate), s.Delivery.Lost, s.Delivery.Late, MaxListed)
	}
	if !seqSetsEqual(gotLost, wantLost) || !seqSetsEqual(gotLate, wantLate) {
		t.Errorf("%s lists %v late %v; the raw files say %v late %v", rundir.LostFile, seqKeys(gotLost), seqKeys(gotLate), seqKeys(wantLost), seqKeys(wantLate))
	}
	if fi, err := os.Stat(filepath.Join(dir, rundir.LostFile)); err != nil || fi.Mode().Perm() != rundir.FileMode {
		t.Errorf("%s: %v, mode %v; want %v", rundir.LostFile, err, fi.Mode().Perm(), rundir.FileMode)
	}
	if once := onePassLostLines(t, dir); !slices.Equal(once, lines) {
		t.Errorf("one pass lists\n%s\nthe bounded analysis\n%s", strings.Join(once, "\n"), strings.Join(lines, "\n"))
	}
	checkLostJQ(t, dir, s.LostJQ(), wantLost, wantLate)
}

// onePassLostLines is the sorted lines the one-pass analysis of dir lists.
func onePassLostLines(t *testing.T, dir string) []string {
	t.Helper()
	out := t.TempDir()
	lost, err := createLostList(out)
	if err != nil {
		t.Fatal(err)
	}
	defer lost.abort()
	a, err := analyzeListing(os.DirFS(dir), dir, false, nil, lost)
	if err != nil {
		t.Fatal(err)
	}
	if err := lost.commit(a.s.Delivery.Measured); err != nil {
		t.Fatal(err)
	}
	lines, _ := readLostFile(t, out)
	return lines
}

// checkLostJQ runs the reports' jq line in dir: it must print the answers
// of exactly the lost messages, late ones flagged.
func checkLostJQ(t *testing.T, dir, line string, wantLost, wantLate map[int64]bool) {
	t.Helper()
	jq, err := exec.LookPath("jq")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("jq is not on PATH; CI must have it (.ci/run installs it)")
		}
		t.Skip("jq is not on PATH: the report's jq line is not run (install jq; required when CI=true)")
	}
	cmd := exec.Command("sh", "-c", strings.Replace(line, "jq ", jq+" ", 1))
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	got, late := map[int64]bool{}, map[int64]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var a struct {
			Seq  int64
			Late bool
			TxID string `json:"tx_id"`
		}
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if a.TxID != "tx-"+itoa(a.Seq) {
			t.Errorf("message %d: tx_id %q", a.Seq, a.TxID)
		}
		got[a.Seq] = true
		if a.Late {
			late[a.Seq] = true
		}
	}
	if !seqSetsEqual(got, wantLost) || !seqSetsEqual(late, wantLate) {
		t.Errorf("the jq line lists %v late %v; want %v late %v\n%s", seqKeys(got), seqKeys(late), seqKeys(wantLost), seqKeys(wantLate), line)
	}
}

// TestLostFileOnlyByABuild: a live checkpoint (Analyze, PartialJSON, WriteCheckpoint)
// writes no lost.jsonl; a build of a run whose delivery was not measured
// removes the one of an earlier build (nothing was waited for: none lost).
func TestLostFileOnlyByABuild(t *testing.T) {
	dir := lostRun().write(t)
	s, err := Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	js, err := s.PartialJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteCheckpoint(dir, js); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, rundir.LostFile)
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("a checkpoint wrote %s (%v)", rundir.LostFile, err)
	}
	buildDir(t, dir)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("a build wrote no %s: %v", rundir.LostFile, err)
	}
	r := lostRun()
	r.meta.Delivery.Via = "none"
	r.events = nil
	none := r.write(t)
	if err := os.WriteFile(filepath.Join(none, rundir.LostFile), []byte(`{"seq":1,"late":false}`+"\n"), rundir.FileMode); err != nil {
		t.Fatal(err)
	}
	buildDir(t, none)
	if _, err := os.Stat(filepath.Join(none, rundir.LostFile)); !os.IsNotExist(err) {
		t.Errorf("delivery none: %s left (%v)", rundir.LostFile, err)
	}
}

func seqSetsEqual(a, b map[int64]bool) bool {
	return len(a) == len(b) && !slices.ContainsFunc(seqKeys(a), func(k int64) bool { return !b[k] })
}

func seqKeys(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
