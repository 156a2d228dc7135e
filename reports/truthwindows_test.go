package reports

import (
	"os"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestTruthWindowsHoldNoDecisions: a run with a truth whose limiter windows
// are compared with the attacker's decisions keeps no decision per request
// (clients stays empty: no window in run.json, no 429) — they are spilled
// and merged in time order with the windows — and each window's measured
// counts are the attempts sent in it, counted here from the attempts
// themselves; in one pass and in passes, the spill in memory and on disk.
func TestTruthWindowsHoldNoDecisions(t *testing.T) {
	r := genTruthFailover(3_000)
	r.meta.Limit = rundir.Limit{}
	const w = 5 * time.Second
	r.truth.RateLimit.Window = rundir.Duration(w)
	want := map[time.Time]int{}
	for _, a := range r.attempts {
		if is2xx(a.Code) {
			want[t0.Add(a.Sent.Sub(t0).Truncate(w))]++
		}
	}
	for k := range 8 {
		r.truth.Windows = append(r.truth.Windows, rundir.TruthWindow{Client: "c1", Start: at(float64(k * 5)), Accepted: 500})
	}
	dir := r.write(t)
	defer func(n int) { spillChunk = n }(spillChunk)
	for _, chunk := range []int{1 << 17, 16} {
		spillChunk = chunk
		once, err := analyzeOnce(os.DirFS(dir), dir, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		bounded, err := analyze(os.DirFS(dir), dir)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range []*analyzer{once, bounded} {
			if len(a.clients) != 0 {
				t.Errorf("chunk %d, pass %d: decisions kept for %d clients, want none", chunk, i, len(a.clients))
			}
			ws := a.s.Truth.Windows
			if len(ws) != 8 {
				t.Fatalf("chunk %d, pass %d: %d windows, want 8", chunk, i, len(ws))
			}
			for _, x := range ws {
				st, _ := time.Parse(time.RFC3339Nano, x.Start)
				if x.MeasuredAccepted != want[st] || x.MeasuredRefused != 0 {
					t.Errorf("chunk %d, pass %d: window %s measured %d accepted, %d refused; the attempts sent in it: %d, 0", chunk, i, x.Start, x.MeasuredAccepted, x.MeasuredRefused, want[st])
				}
			}
		}
	}
}
