// tracewaits reads a Go execution trace (MSGLOAD_TRACE=FILE msgload run …)
// and prints the spans in which a goroutine was runnable but not running for
// at least -min: how many, how many overlapped a collector's mark phase, the
// stacks they waited at, and for the longest what ran meanwhile. It is how
// attack/README.md ("Where a send waits for a core") found that the short
// stalls of a 5,000/s run are mostly the collector's.
//
//	go run . -min 2ms FILE
//
// A module of its own, so that msgload's does not depend on
// golang.org/x/exp/trace.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

func main() {
	minWait := flag.Duration("min", 2*time.Millisecond, "the shortest wait for a core reported")
	longest := flag.Int("longest", 10, "how many of the longest waits to show with what ran meanwhile")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: tracewaits [-min 2ms] [-longest 10] TRACE")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracewaits:", err)
		os.Exit(1)
	}
	defer f.Close()
	r, err := read(f, trace.Time(*minWait))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracewaits:", err)
		os.Exit(1)
	}
	r.print(os.Stdout, *minWait, *longest)
}

// span is a goroutine's time in one state, and the stack it left it at.
type span struct {
	g        trace.GoID
	from, to trace.Time
	stack    string
}

type result struct {
	t0    trace.Time
	waits []span // runnable for at least min, longest first
	runs  []span // running for at least 1 ms
	marks []span // the collector's mark phases
}

func read(in io.Reader, minWait trace.Time) (*result, error) {
	tr, err := trace.NewReader(in)
	if err != nil {
		return nil, err
	}
	res := &result{}
	runnable := map[trace.GoID]span{}
	running := map[trace.GoID]trace.Time{}
	var markFrom trace.Time
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if res.t0 == 0 {
			res.t0 = ev.Time()
		}
		switch ev.Kind() {
		case trace.EventRangeBegin:
			if ev.Range().Name == "GC concurrent mark phase" {
				markFrom = ev.Time()
			}
		case trace.EventRangeEnd:
			if ev.Range().Name == "GC concurrent mark phase" && markFrom != 0 {
				res.marks = append(res.marks, span{from: markFrom, to: ev.Time()})
			}
		case trace.EventStateTransition:
			st := ev.StateTransition()
			if st.Resource.Kind != trace.ResourceGoroutine {
				continue
			}
			g := st.Resource.Goroutine()
			from, to := st.Goroutine()
			if to == trace.GoRunnable {
				runnable[g] = span{g: g, from: ev.Time(), stack: frames(ev.Stack(), 6)}
			}
			if from == trace.GoRunnable && to == trace.GoRunning {
				if w, ok := runnable[g]; ok && ev.Time()-w.from >= minWait {
					w.to = ev.Time()
					res.waits = append(res.waits, w)
				}
				delete(runnable, g)
			}
			if to == trace.GoRunning {
				running[g] = ev.Time()
			}
			if from == trace.GoRunning {
				if t, ok := running[g]; ok && ev.Time()-t >= trace.Time(time.Millisecond) {
					res.runs = append(res.runs, span{g: g, from: t, to: ev.Time(), stack: frames(ev.Stack(), 8)})
				}
				delete(running, g)
			}
		}
	}
	sort.SliceStable(res.waits, func(i, j int) bool {
		return res.waits[i].to-res.waits[i].from > res.waits[j].to-res.waits[j].from
	})
	return res, nil
}

// frames is a stack's innermost n functions, without their packages' paths.
func frames(st trace.Stack, n int) string {
	var b []string
	for f := range st.Frames() {
		fn := f.Func
		if i := strings.LastIndex(fn, "/"); i >= 0 {
			fn = fn[i+1:]
		}
		if b = append(b, fn); len(b) == n {
			break
		}
	}
	return strings.Join(b, " < ")
}

func overlaps(a, b span) bool { return a.from < b.to && a.to > b.from }

func ms(t trace.Time) float64 { return float64(t) / 1e6 }

func (r *result) print(out io.Writer, minWait time.Duration, longest int) {
	var marked trace.Time
	for _, m := range r.marks {
		marked += m.to - m.from
	}
	inMark := 0
	byStack := map[string]int{}
	for _, w := range r.waits {
		for _, m := range r.marks {
			if overlaps(w, m) {
				inMark++
				break
			}
		}
		byStack[w.stack]++
	}
	fmt.Fprintf(out, "collections: %d mark phases, %.1f ms in all\n", len(r.marks), ms(marked))
	fmt.Fprintf(out, "waits for a core of %v or more: %d, %d of them in a mark phase\n", minWait, len(r.waits), inMark)
	stacks := make([]string, 0, len(byStack))
	for s := range byStack {
		stacks = append(stacks, s)
	}
	sort.Slice(stacks, func(i, j int) bool { return byStack[stacks[i]] > byStack[stacks[j]] })
	for i, s := range stacks {
		if i == 12 {
			break
		}
		fmt.Fprintf(out, "  %6d  waited at %s\n", byStack[s], s)
	}
	for i, w := range r.waits {
		if i == longest {
			break
		}
		fmt.Fprintf(out, "\n%.3fs goroutine %d waited %.1f ms at %s\n", ms(w.from-r.t0)/1e3, w.g, ms(w.to-w.from), w.stack)
		for _, m := range r.marks {
			if overlaps(w, m) {
				fmt.Fprintf(out, "  mark phase %.3f-%.3fs\n", ms(m.from-r.t0)/1e3, ms(m.to-r.t0)/1e3)
			}
		}
		for _, s := range r.runs {
			if overlaps(w, s) {
				fmt.Fprintf(out, "  goroutine %d ran %.1f ms, to %s\n", s.g, ms(s.to-s.from), s.stack)
			}
		}
	}
}
