package reports

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
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
// not the file's. With events, events.jsonl is written beside it in the
// same way, and the file's analysis is AnalyzeCounting's.
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
	// Callbacks of a run still going, some duplicated.
	cbGoing := genStream(3_000, 12, "sink", 1)
	cbGoing.meta.AttackEnd, cbGoing.meta.End = time.Time{}, time.Time{}
	dirs["callbacks-going"] = cbGoing.write(t)
	// A soak with callbacks: its messages settled once quiet as they are
	// read (carriedevents.go), not held to the end.
	dirs["callbacks-soak"] = soakCallbacks(3_000, 13, 1).write(t)
	// Soaks whose messages have records after their last send, polls and
	// probes: settled once quiet too.
	dirs["polls-soak"] = soakPolls(3_000, 14).write(t)
	probes := genNotifyProbes(3_000, 15)
	stretch(probes, 66)
	dirs["probes-soak"] = probes.write(t)
	// Written by an attacker (in the order its records end) and a sink (in
	// the order they arrive): these are carried to the end.
	mustCarry := map[bool][]string{
		false: {"none", "none-retries", "none-soak-11m", "none-soak-11m-going", "callbacks", "none-429", "callbacks-429",
			"testdata/sim-ex-sliding", "testdata/sim-sliding-7per5s-bursty", "polls", "none-notify-probes", "polls-soak", "probes-soak"},
		true: {"none", "none-retries", "none-soak-11m-going", "callbacks", "callbacks-going", "callbacks-429", "callbacks-soak",
			"callbacks-replies", "testdata/reorder", "polls", "none-notify-probes", "polls-soak", "probes-soak"},
	}
	// The soaks whose messages are settled once quiet as they are read:
	// most of them before the end.
	soaks := map[string]bool{"callbacks-soak": true, "polls-soak": false, "probes-soak": false} // with events only, or both
	for _, events := range []bool{false, true} {
		carried := map[string]bool{}
		t.Run(fmt.Sprintf("events=%v", events), func(t *testing.T) {
			for name, src := range dirs {
				t.Run(name, func(t *testing.T) {
					lines := fileLines(t, src, rundir.AttemptsFile)
					var evs [][]byte
					if events {
						evs = fileLines(t, src, rundir.EventsFile)
					}
					live, file := t.TempDir(), t.TempDir()
					for _, d := range []string{live, file} {
						copyRunFiles(t, src, d)
					}
					c, err := NewCarried(live, events)
					if err != nil {
						if !ErrNotCarried(err) {
							t.Fatal(err)
						}
						t.Logf("not carried: %v", err)
						return
					}
					defer c.Close()
					if carryAlong(t, c, lines, evs, live, file, uint64(len(lines))) {
						carried[name] = true
					}
					if only, ok := soaks[name]; ok && (events || !only) {
						settled := 0
						for seq := range int64(3_000) {
							settled += c.a.st.settled.get(seq + 1)
						}
						if n := len(c.a.fly); n > 600 || settled < 2_000 {
							t.Errorf("%d messages of 3,000 held at the end, %d settled: the quiet ones were not settled", n, settled)
						}
						t.Logf("%d messages settled as they were read, %d held at the end, %d at most", settled, len(c.a.fly), c.a.st.maxFlying)
					}
					// Without the events, a message that is not probed
					// is settled at its last send (afterLast): only the
					// tenth probed wait until quiet. A reading takes up
					// to a sixth of the file at once, so all of them would
					// be ~650 at most (as with events), the probed ~60.
					if name == "probes-soak" && !events && c.a.st.maxFlying > 150 {
						t.Errorf("%d messages held at most: those no probe follows were held until quiet", c.a.st.maxFlying)
					}
				})
			}
		})
		for _, name := range mustCarry[events] {
			if !carried[name] {
				t.Errorf("events=%v: %s was not carried to its end", events, name)
			}
		}
	}
}

// soakCallbacks is genStream's run with callbacks (retryMax) made 66 times as long
// (3,000 messages in 198 s, as stretch makes them) with each callback as
// long after its message's first send as before (a delivery takes as long
// in a soak), events.jsonl in the order they arrived, as a sink writes it.
func soakCallbacks(n int, seed uint64, retryMax int) *run {
	r := genStream(n, seed, "sink", retryMax)
	first := map[int64]time.Time{}
	for _, a := range r.attempts {
		first[a.Seq] = a.FirstSent
	}
	stretch(r, 66)
	for _, a := range r.attempts {
		if a.Attempt == 1 {
			shift := a.FirstSent.Sub(first[a.Seq])
			for i := range r.events {
				if e := &r.events[i]; e.Corr != nil && e.Corr.Seq == a.Seq {
					e.ReceivedAt, e.Corr.FirstSent = e.ReceivedAt.Add(shift), a.FirstSent
				}
			}
		}
	}
	slices.SortStableFunc(r.events, func(x, y rundir.Event) int { return x.ReceivedAt.Compare(y.ReceivedAt) })
	return r
}

// soakPolls is genStream's run via poll made 66 times as long, as
// soakCallbacks makes one with callbacks, and timed as an attacker times
// it: a retry sent after its attempt's answer and the backoff, each poll
// as long after the answer that accepted its message as before,
// attempts.jsonl in the order the answers came, as an attacker writes it.
func soakPolls(n int, seed uint64) *run {
	r := genStream(n, seed, "poll", 1)
	after := make([]time.Duration, len(r.attempts))
	accepted := map[int64]time.Time{}
	for i, a := range r.attempts {
		if a.Op == "check_status" {
			after[i] = a.Sent.Sub(accepted[a.Seq])
		} else if is2xx(a.Code) {
			accepted[a.Seq] = a.Sent
		}
	}
	stretch(r, 66)
	next := map[int64]time.Time{} // a message's next send
	for i := range r.attempts {
		a := &r.attempts[i]
		switch {
		case a.Op == "check_status":
			a.Intended, a.Sent = accepted[a.Seq].Add(after[i]), accepted[a.Seq].Add(after[i])
		default:
			if t, ok := next[a.Seq]; ok {
				a.Intended, a.Sent = t, t
			}
			next[a.Seq] = time.Unix(0, answeredAt(a)).Add(r.meta.Retry.Backoff.D())
			if is2xx(a.Code) {
				accepted[a.Seq] = a.Sent
			}
		}
	}
	slices.SortStableFunc(r.attempts, func(x, y rundir.Attempt) int { return cmp.Compare(answeredAt(&x), answeredAt(&y)) })
	return r
}

// carryAlong writes lines into live's attempts.jsonl in random lengths
// (seed), each with half of the next line torn after it, and file's with
// the whole lines alone — and evs (the carried analysis reads events: not
// nil) into events.jsonl the same way, as far into them as into lines; at
// each length it reads c and checks its summary against the file's
// analysis (sameLeaves), twice. It says whether c was carried to the end;
// a carrying stopped must say ErrNotCarried, and give no summary after.
func carryAlong(t *testing.T, c *Carried, lines, evs [][]byte, live, file string, seed uint64) bool {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 41))
	analyze := AnalyzeSendsCounting
	if evs != nil {
		analyze = AnalyzeCounting
	}
	cut := 0
	for cut < len(lines) {
		cut = min(len(lines), cut+1+rng.IntN(len(lines)/6+1))
		writeTorn(t, rundir.AttemptsFile, lines, cut, live, file)
		if evs != nil {
			// The sink a little behind or ahead of the attacker.
			ev := len(evs) * cut / len(lines)
			if cut < len(lines) {
				ev = max(0, min(len(evs), ev+rng.IntN(len(evs)/50+1)-len(evs)/100))
			}
			writeTorn(t, rundir.EventsFile, evs, ev, live, file)
		}
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
		if !sameAsFile(t, c, analyze, cut, live, file) {
			return false
		}
	}
	return true
}

// sameAsFile checks c's summary, twice in a row (a judgement changes
// nothing it carries), against analyze of file, whose lines live's are at
// cut; it says whether they agreed.
func sameAsFile(t *testing.T, c *Carried, analyze func(string) (*Summary, error), cut int, live, file string) bool {
	t.Helper()
	got, err := c.Summary()
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Summary()
	if err != nil {
		t.Fatal(err)
	}
	want, err := analyze(file)
	if err != nil {
		t.Fatal(err)
	}
	sameLeaves(t, cut, summaryTree(t, got), summaryTree(t, want), live, file)
	sameLeaves(t, cut, summaryTree(t, again), summaryTree(t, got), live, live)
	return !t.Failed()
}

// writeTorn writes the first cut of lines into live's file name with half
// of the next torn after them, and into file's without it: a last line
// with no end is not read until it has one (the file's analysis would
// count it as a line that does not decode: a bad_lines figure, which no
// live threshold reads).
func writeTorn(t *testing.T, name string, lines [][]byte, cut int, live, file string) {
	t.Helper()
	whole := bytes.Join(lines[:cut], nil)
	torn := whole
	if cut < len(lines) {
		torn = append(slices.Clip(whole), lines[cut][:len(lines[cut])/2]...)
	}
	writeFile(t, filepath.Join(live, name), torn)
	writeFile(t, filepath.Join(file, name), whole[:bytes.LastIndexByte(whole, '\n')+1])
}

// FuzzCarried: whatever attempts.jsonl holds — lines that decode, lines
// that do not, a message's records in any order, copies of lines — the
// carried analysis, fed it in random lengths, gives the file's analysis at
// every length, or stops with ErrNotCarried: never other figures. Seeds in
// testdata/fuzz/FuzzCarried: a run's lines with retries, a line repeated,
// a record after its message's last, garbage.
func FuzzCarried(f *testing.F) {
	f.Add([]byte("{\"seq\":1,\"op\":\"send\",\"attempt\":1,\"code\":500,\"class\":\"http_5xx\",\"sent\":\"2026-11-23T15:36:16Z\"}\n{\"seq\":1,\"op\":\"send\",\"attempt\":2,\"code\":200,\"class\":\"ok\",\"sent\":\"2026-11-23T15:36:17Z\"}\n"), uint64(1))
	meta := must(json.Marshal(genStream(0, 1, "none", 2).meta))
	f.Fuzz(func(t *testing.T, body []byte, seed uint64) {
		lines := bytes.SplitAfter(body, []byte("\n"))
		fuzzCarry(t, meta, lines, lines, nil, seed)
	})
}

// fuzzCarry carries a run of run.json meta along (carryAlong) with the
// lines of attempts and of evs (nil: the sends alone); fuzzed, the lines
// of the fuzzed file, of which more than 256 or 64 KB are not tried (each
// length is analysed twice).
func fuzzCarry(t *testing.T, meta []byte, fuzzed, attempts, evs [][]byte, seed uint64) {
	defer func(b, l int64) { onePassBytes, onePassLines = b, l }(onePassBytes, onePassLines)
	onePassBytes, onePassLines = 0, 0
	if n := len(fuzzed); n > 256 || len(bytes.Join(fuzzed, nil)) > 64<<10 {
		return
	}
	live, file := t.TempDir(), t.TempDir()
	for _, d := range []string{live, file} {
		writeFile(t, filepath.Join(d, rundir.MetaFile), meta)
	}
	c, err := NewCarried(live, evs != nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	carryAlong(t, c, attempts, evs, live, file, seed)
}

// TestFlightCopiedWhole: a carried analysis's summary copies the messages
// held by hand (copyHeld: a flight, its keys, its msgDelivery when m.d is
// its own); a reference added to flight, msg or msgDelivery would be
// shared between the carried state and the copy a judgement finishes.
func TestFlightCopiedWhole(t *testing.T) {
	copied := map[string]bool{"flight.keys": true, "msg.d": true}
	for _, typ := range []reflect.Type{reflect.TypeFor[flight](), reflect.TypeFor[msg](), reflect.TypeFor[msgDelivery]()} {
		for f := range typ.Fields() {
			switch f.Type.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Chan, reflect.Func, reflect.Interface, reflect.String, reflect.UnsafePointer:
				if name := typ.Name() + "." + f.Name; !copied[name] {
					t.Errorf("%s is a %s: copyHeld shares it between the carried state and a judgement's copy", name, f.Type.Kind())
				}
			}
		}
	}
}

// FuzzCarriedEvents: whatever events.jsonl holds beside a run's sends —
// callbacks of its messages in any order and at any time, copies, replies,
// callbacks of other runs, lines that do not decode — the carried analysis
// with events, fed both files in random lengths, gives AnalyzeCounting's
// figures at every length, or stops with ErrNotCarried. Seeds in
// testdata/fuzz/FuzzCarriedEvents: a delivery and its copy, a callback
// 30 s after its message's end, a reply, another run's callback, garbage.
func FuzzCarriedEvents(f *testing.F) {
	r := genStream(40, 3, "sink", 1)
	stretch(r, 200) // 8 s: messages quiet before the end
	src := r.write(f)
	meta := must(os.ReadFile(filepath.Join(src, rundir.MetaFile)))
	attempts := fileLines(f, src, rundir.AttemptsFile)
	f.Add(bytes.Join(fileLines(f, src, rundir.EventsFile), nil), uint64(1))
	f.Fuzz(func(t *testing.T, body []byte, seed uint64) {
		evs := bytes.SplitAfter(body, []byte("\n"))
		fuzzCarry(t, meta, evs, attempts, evs, seed)
	})
}

// FuzzCarriedAfterSends: whatever attempts.jsonl holds in a run whose
// messages have records after their last send — polls (delivery via poll),
// idempotency probes (probes: true) — in any order and at any time, the
// carried analysis of the sends (settled once quiet: carriedevents.go),
// fed them in random lengths, gives AnalyzeSendsCounting's figures at every
// length, or stops with ErrNotCarried. Seeds in
// testdata/fuzz/FuzzCarriedAfterSends: a run's polls and probes, a poll
// 30 s after its message's end, a probe before its send.
func FuzzCarriedAfterSends(f *testing.F) {
	polls := genStream(30, 4, "poll", 1)
	stretch(polls, 300) // 9 s: messages quiet before the end
	probes := genNotifyProbes(30, 5)
	stretch(probes, 300)
	var metas [2][]byte
	for i, r := range []*run{polls, probes} {
		src := r.write(f)
		metas[i] = must(os.ReadFile(filepath.Join(src, rundir.MetaFile)))
		f.Add(bytes.Join(fileLines(f, src, rundir.AttemptsFile), nil), uint64(i+1), i == 1)
	}
	f.Fuzz(func(t *testing.T, body []byte, seed uint64, probes bool) {
		meta := metas[0]
		if probes {
			meta = metas[1]
		}
		lines := bytes.SplitAfter(body, []byte("\n"))
		fuzzCarry(t, meta, lines, lines, nil, seed)
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestCarriedStopsAtARecordItDidNotForesee: a copy of a line of a message
// already settled (a second writer, a file copied into itself) would change
// a figure counted: the carrying stops there, never counts it.
func TestCarriedStopsAtARecordItDidNotForesee(t *testing.T) {
	src := genStream(200, 3, "none", 0).write(t)
	lines := attemptLines(t, src)
	live := t.TempDir()
	copyRunFiles(t, src, live)
	c, err := NewCarried(live, false)
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

// TestCarriedStopsAtACallbackAfterItsEnd: with events, a message is
// settled once quiet after the status that ends it; a copy of one of its
// callbacks that comes after (a duplicate later than carriedQuiet) would
// change a figure counted (delivery.duplicates): the carrying stops there.
// The same copy of a message not settled yet is read, as the file's
// analysis reads it.
func TestCarriedStopsAtACallbackAfterItsEnd(t *testing.T) {
	src := soakCallbacks(600, 14, 1).write(t)
	c, live, file := carriedBeside(t, src)
	attempts, events := fileLines(t, src, rundir.AttemptsFile), fileLines(t, src, rundir.EventsFile)
	body := bytes.Join(events, nil)
	for _, d := range []string{live, file} {
		writeFile(t, filepath.Join(d, rundir.AttemptsFile), bytes.Join(attempts, nil))
		writeFile(t, filepath.Join(d, rundir.EventsFile), body)
	}
	if err := c.Read(); err != nil {
		t.Fatal(err)
	}
	var settled, held []byte // a callback of a message settled, and of one held
	for _, l := range events {
		var e rundir.Event
		if json.Unmarshal(l, &e) != nil || e.Corr == nil || e.Corr.Seq <= 0 {
			continue
		}
		if c.a.st.settled.get(e.Corr.Seq) > 0 {
			settled = l
		} else if c.a.fly[e.Corr.Seq] != nil && held == nil {
			held = l
		}
	}
	if settled == nil || held == nil {
		t.Fatalf("no callback of a message settled (%q) or held (%q)", settled, held)
	}
	body = append(body, held...)
	for _, d := range []string{live, file} {
		writeFile(t, filepath.Join(d, rundir.EventsFile), body)
	}
	if err := c.Read(); err != nil {
		t.Fatalf("a copy of a callback of a message held: %v", err)
	}
	got, err := c.Summary()
	if err != nil {
		t.Fatal(err)
	}
	want, err := AnalyzeCounting(file)
	if err != nil {
		t.Fatal(err)
	}
	if got.Delivery.Duplicates != want.Delivery.Duplicates {
		t.Fatalf("%d duplicates carried, %d in the file's analysis", got.Delivery.Duplicates, want.Delivery.Duplicates)
	}
	writeFile(t, filepath.Join(live, rundir.EventsFile), append(body, settled...))
	if err := c.Read(); !ErrNotCarried(err) {
		t.Fatalf("a copy of a callback of a message settled read as %v", err)
	}
	if s, err := c.Summary(); !ErrNotCarried(err) {
		t.Fatalf("a summary after the carrying stopped: %v, %v", s, err)
	}
}

// TestCarriedQuietByTheReadersClock: a callback stamped an hour ahead of
// the others (a sink on a host whose clock runs ahead, writing in the order
// they come) neither makes every message read before it quiet at once nor
// holds every message read after it: a record's time is taken as the
// reader's clock when it was read at most. The run is read as it is
// written, in steps of 2 s of its own time, the reader's clock at each step
// the newest time written (the stamped callback's own before it was
// stamped); it is carried to its end, with the file's analysis at every
// step, and most messages are settled as they are read. A copy of the
// callback read just before the stamped one, 5 s after it, is the check that
// it can fail: read with the reader's clock an hour ahead too (the records'
// clock alone, as before), the stamp makes that callback's message quiet
// before its copy comes, and the carrying stops there.
func TestCarriedQuietByTheReadersClock(t *testing.T) {
	// No retries: genStream sends one 0.1 s after its attempt, before a
	// timeout's answer, which no attacker does. attempts.jsonl in the order
	// the answers came, as an attacker writes it.
	r := soakCallbacks(600, 16, 0)
	slices.SortStableFunc(r.attempts, func(x, y rundir.Attempt) int { return cmp.Compare(answeredAt(&x), answeredAt(&y)) })
	callback := func(i int) bool {
		e := r.events[i]
		return e.Kind == rundir.KindCallback && e.Corr != nil && e.Corr.Seq > 0
	}
	ahead := len(r.events) / 4
	for ahead < len(r.events) && !callback(ahead) {
		ahead++
	}
	before := ahead - 1 // the callback read just before the stamped one, of another message
	for before >= 0 && (!callback(before) || r.events[before].Corr.Seq == r.events[min(ahead, len(r.events)-1)].Corr.Seq) {
		before--
	}
	if ahead == len(r.events) || before < 0 {
		t.Fatal("no callbacks to stamp ahead and to copy")
	}
	stampSeq, copySeq := r.events[ahead].Corr.Seq, r.events[before].Corr.Seq
	dup := r.events[before]
	dup.ReceivedAt = dup.ReceivedAt.Add(5 * time.Second)
	at := slices.IndexFunc(r.events, func(e rundir.Event) bool { return e.ReceivedAt.After(dup.ReceivedAt) })
	if at < 0 {
		at = len(r.events)
	}
	r.events = slices.Insert(r.events, at, dup)
	times := make([]int64, 0, len(r.attempts)+len(r.events)) // each line's time, attempts then events
	for i := range r.attempts {
		times = append(times, answeredAt(&r.attempts[i]))
	}
	for _, e := range r.events {
		times = append(times, e.ReceivedAt.UnixNano())
	}
	ahead = slices.IndexFunc(r.events, func(e rundir.Event) bool {
		return e.Corr != nil && e.Corr.Seq == stampSeq && e.Kind == rundir.KindCallback
	})
	r.events[ahead].ReceivedAt = r.events[ahead].ReceivedAt.Add(time.Hour)
	src := r.write(t)
	attempts, events := fileLines(t, src, rundir.AttemptsFile), fileLines(t, src, rundir.EventsFile)
	attempts, events = attempts[:len(attempts)-1], events[:len(events)-1] // the empty rest after the last newline
	if len(attempts) != len(r.attempts) || len(events) != len(r.events) {
		t.Fatalf("%d and %d lines written for %d attempts and %d events", len(attempts), len(events), len(r.attempts), len(r.events))
	}
	// written is how many of lines (times ts) a writer has written by wall:
	// in its order, a line after one not yet due waiting for it.
	written := func(ts []int64, wall int64) int {
		n := 0
		for n < len(ts) && ts[n] <= wall {
			n++
		}
		return n
	}
	first, last := slices.Min(times), slices.Max(times)
	for _, skew := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("reader-ahead=%v", skew), func(t *testing.T) {
			c, live, file := carriedBeside(t, src)
			var newest int64 // the newest time of a line written, the stamped one's own
			c.clock = func() time.Time { return time.Unix(0, newest).Add(skew) }
			for wall := first; ; wall += int64(2 * time.Second) {
				na, ne := written(times[:len(attempts)], wall), written(times[len(attempts):], wall)
				for _, ts := range [][]int64{times[:na], times[len(attempts) : len(attempts)+ne]} {
					for _, x := range ts {
						newest = max(newest, x)
					}
				}
				for _, f := range []struct {
					name  string
					lines [][]byte
				}{{rundir.AttemptsFile, attempts[:na]}, {rundir.EventsFile, events[:ne]}} {
					for _, d := range []string{live, file} {
						writeFile(t, filepath.Join(d, f.name), bytes.Join(f.lines, nil))
					}
				}
				if err := c.Read(); err != nil {
					if !ErrNotCarried(err) || skew == 0 {
						t.Fatalf("stopped at %d attempts and %d events of %d and %d: %v", na, ne, len(attempts), len(events), err)
					}
					if want := fmt.Sprintf("message %d", copySeq); !strings.Contains(err.Error(), want) {
						t.Fatalf("stopped at %d events of %d, not at the copy of %s's callback: %v", ne, len(events), want, err)
					}
					t.Logf("the reader's clock ahead too: carried to %d events of %d: %v", ne, len(events), err)
					return
				}
				if !sameAsFile(t, c, AnalyzeCounting, na, live, file) {
					return
				}
				if na == len(attempts) && ne == len(events) && wall > last+int64(carriedQuiet) {
					break
				}
			}
			if skew != 0 {
				t.Fatal("the reader's clock an hour ahead: carried to the end, the copy of a callback after its message was made quiet read as if held")
			}
			settled := 0
			for seq := range int64(600) {
				settled += c.a.st.settled.get(seq + 1)
			}
			if settled < 500 {
				t.Errorf("%d of 600 messages settled as they were read: the stamp held the rest", settled)
			}
			t.Logf("%d messages settled as they were read, %d held at the end", settled, len(c.a.fly))
		})
	}
}

// carriedBeside copies the run in src but its attempts and events into two
// directories, live and file, and starts the carried analysis with events
// of live (closed when the test ends): the test writes the lines into both,
// and file is what the file's analysis reads.
func carriedBeside(t *testing.T, src string) (c *Carried, live, file string) {
	t.Helper()
	live, file = t.TempDir(), t.TempDir()
	copyRunFiles(t, src, live)
	copyRunFiles(t, src, file)
	c, err := NewCarried(live, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, live, file
}

// attemptLines are the lines of dir's attempts.jsonl, each with its newline.
func attemptLines(t *testing.T, dir string) [][]byte {
	t.Helper()
	return fileLines(t, dir, rundir.AttemptsFile)
}

// fileLines are the lines of dir's file name, each with its newline (none
// when there is no such file).
func fileLines(t testing.TB, dir, name string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return [][]byte{}
	}
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))
}

// copyRunFiles copies the files of the run in src but attempts.jsonl and
// events.jsonl to dst.
func copyRunFiles(t *testing.T, src, dst string) {
	t.Helper()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() || e.Name() == rundir.AttemptsFile || e.Name() == rundir.EventsFile {
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
		if p[0] == "rate_limit" || limits && verdictPath(p) || joinedReply(p) {
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

// joinedReply says whether p is a figure of the replies joined to their
// messages (incoming.replies, incoming.reply_latency), which the carried
// analysis does not join (carriedevents.go).
func joinedReply(p []any) bool {
	return len(p) > 1 && p[0] == "incoming" && (p[1] == "replies" || p[1] == "reply_latency")
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
// of its lines; without one, on a generated run of 200,000 messages. A
// directory with events.jsonl (a run with callbacks: scripts/soak-callbacks.sh's)
// is judged with its events too (events-after-…: each op reads a 300th of
// each file, 2 s of a 10-minute run), against AnalyzeCounting
// (files-events-after-90%, the child's judgement when the run is not
// carried) and Analyze (files-all-after-90%: the child's before the
// events were carried).
//
//	MSGLOAD_BENCH_CARRIED_DIR=/tmp/none3m go test ./reports -run '^$' \
//	  -bench '^BenchmarkCarriedJudgement$' -benchtime 20x
func BenchmarkCarriedJudgement(b *testing.B) {
	src := os.Getenv("MSGLOAD_BENCH_CARRIED_DIR")
	if src == "" {
		src = genStream(200_000, 1, "none", 1).write(b)
	}
	files := [][][]byte{fileLines(b, src, rundir.AttemptsFile)}
	steps := []int{10_000}
	if evs := fileLines(b, src, rundir.EventsFile); len(evs) > 1 {
		files = append(files, evs)
		steps = []int{len(files[0])/300 + 1, len(evs)/300 + 1}
	}
	names := []string{rundir.AttemptsFile, rundir.EventsFile}
	events := len(files) > 1
	prefix := map[bool]string{false: "", true: "events-"}[events]
	// start is a directory with run.json and each file's first share %,
	// open for appending.
	start := func(b *testing.B, share int) (string, []*os.File, []int) {
		dir := b.TempDir()
		meta, err := os.ReadFile(filepath.Join(src, rundir.MetaFile))
		if err != nil {
			b.Fatal(err)
		}
		writeFile(b, filepath.Join(dir, rundir.MetaFile), meta)
		var fs []*os.File
		var at []int
		for i, lines := range files {
			n := len(lines) * share / 100
			writeFile(b, filepath.Join(dir, names[i]), bytes.Join(lines[:n], nil))
			f, err := os.OpenFile(filepath.Join(dir, names[i]), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { f.Close() })
			fs, at = append(fs, f), append(at, n)
		}
		return dir, fs, at
	}
	for _, share := range []int{10, 90} {
		b.Run(fmt.Sprintf("%safter-%d%%", prefix, share), func(b *testing.B) {
			dir, fs, at := start(b, share)
			c, err := NewCarried(dir, events)
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
				for i, lines := range files {
					next := min(at[i]+steps[i], len(lines))
					fs[i].Write(bytes.Join(lines[at[i]:next], nil))
					at[i] = next
				}
				b.StartTimer()
				if err := c.Read(); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Summary(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(at[0]), "lines-read")
			if events {
				b.ReportMetric(float64(len(c.a.fly)), "held")
			}
		})
	}
	// The same judgement from the files, after 90 %: every line read again
	// (the live child's AnalyzeSendsCounting; with events, AnalyzeCounting,
	// and Analyze).
	analyses := map[string]func(string) (*Summary, error){"files-after-90%": AnalyzeSendsCounting}
	if events {
		analyses = map[string]func(string) (*Summary, error){"files-events-after-90%": AnalyzeCounting, "files-all-after-90%": Analyze}
	}
	for name, analyze := range analyses {
		b.Run(name, func(b *testing.B) {
			dir, _, at := start(b, 90)
			b.ResetTimer()
			for range b.N {
				if _, err := analyze(dir); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(at[0]), "lines-read")
		})
	}
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
		c, err := NewCarried(dir, false)
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
