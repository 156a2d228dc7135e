package reports

import (
	"slices"
	"strconv"
	"testing"

	"github.com/msgload/msgload/reports/limitfit/limitfittest"
	"github.com/msgload/msgload/rundir"
)

// clumpedRun is one client against a fixed window of 10 per 10 s written
// here, which advertises ra(t) as Retry-After for a refusal decided at t: 5
// requests a second, and every 3.7 s a clump of 15 at 100/s in which the
// 8th waits 50 ms on the way — the service decides the sends after it
// first, so it may be refused after a later send was accepted, and it is
// answered with the clump, after them.
func clumpedRun(ra func(lim *limitfittest.Fixed, t float64) string) *run {
	type req struct{ sent, at, lat float64 }
	var reqs []req
	for _, s := range limitfittest.Steady(5, 0, 40) {
		reqs = append(reqs, req{s, s + 0.001, 0.002})
	}
	for c := 0.05; c < 40; c += 3.7 {
		for i, s := range limitfittest.Steady(100, c, c+0.15) {
			if i == 7 {
				reqs = append(reqs, req{s, s + 0.05, 0.06})
				continue
			}
			reqs = append(reqs, req{s, s + 0.001, 0.002})
		}
	}
	slices.SortStableFunc(reqs, func(a, b req) int { return cmpF(a.at, b.at) })
	lim := &limitfittest.Fixed{Limit: 10, W: 10, Cur: -1}
	r := newRun(rundir.APINotify)
	r.meta.Planned.Requests = int64(len(reqs))
	for i, q := range reqs {
		code := 200
		if !lim.Allow(q.at) {
			code = 429
		}
		a := r.send(int64(i+1), "c1", q.sent, code, q.lat)
		if code == 429 {
			a.RetryAfter = ra(lim, q.at)
		}
	}
	slices.SortStableFunc(r.attempts, func(a, b rundir.Attempt) int { return a.Sent.Compare(b.Sent) })
	return r
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestRetryAfterOutOfOrder: a Retry-After is judged against the first
// request sent after the 429 was answered — not one sent while it was on
// its way, which the service may have decided before it (it took the last
// slot the refusal missed) — and the answer times are allowed for. An
// exact Retry-After (whole seconds, rounded up) is right every time; one
// of 60 s is too long and one of 1 s too short, in the same traffic.
func TestRetryAfterOutOfOrder(t *testing.T) {
	exact := func(lim *limitfittest.Fixed, t float64) string { return strconv.Itoa(int(lim.RetryAfter(t))) }
	for _, tc := range []struct {
		name        string
		ra          func(*limitfittest.Fixed, float64) string
		short, long bool
	}{
		{"exact", exact, false, false},
		{"too long", func(*limitfittest.Fixed, float64) string { return "60" }, false, true},
		{"too short", func(*limitfittest.Fixed, float64) string { return "1" }, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Analyze(clumpedRun(tc.ra).write(t))
			if err != nil {
				t.Fatal(err)
			}
			ra := s.RateLimit.RetryAfter
			if ra.Present == 0 || (ra.TooShort > 0) != tc.short || (ra.TooLong > 0) != tc.long {
				t.Errorf("%+v: want too short %v, too long %v", ra, tc.short, tc.long)
			}
			if !tc.short && !tc.long && ra.Correct != ra.Present {
				t.Errorf("%+v: want all %d right", ra, ra.Present)
			}
		})
	}
}
