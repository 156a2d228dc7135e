package reports

import (
	"net/http"
	"slices"
	"sort"

	"github.com/msgload/msgload/rundir"
)

// The truth's limiter windows are set beside what the attacker saw in them
// (truthWindows). The attacker's decisions are not kept for that: each is
// spilled as it is read (windowDecision: when, whose, accepted or refused,
// 16 bytes in a sortedSpill, on disk past a chunk) and merged in time order
// with the windows, each client's in order of their start — memory holds the
// windows and the spill's chunk, not a record per request (issue 23).

// decRec is one rate-limit decision the truth's windows count: its send
// time, its client (winClients' index) and whether it was accepted (else a
// 429).
type decRec struct {
	t        int64
	client   uint32
	accepted bool
}

// newDecisionSpill spills the decisions in order of their send time.
func newDecisionSpill() *sortedSpill[decRec] {
	return &sortedSpill[decRec]{chunk: max(spillChunk/4, 1), size: 16,
		cmp: func(x, y decRec) int { return cmpInt(x.t, y.t) },
		put: func(b []byte, v decRec) {
			putInts(b, v.t, int64(v.client)<<1|int64(b2int(v.accepted)))
		},
		get: func(b []byte) decRec {
			x := getInts(b, 2)
			return decRec{t: x[0], client: uint32(x[1] >> 1), accepted: x[1]&1 == 1}
		}}
}

func b2int(v bool) int {
	if v {
		return 1
	}
	return 0
}

// windowDecision spills at when it is a decision the truth's windows count:
// a request of a client (not a token), sent at a sane time, answered 2xx
// or 429 — as decision keeps them.
func (a *analyzer) windowDecision(at *rundir.Attempt) {
	if a.wins == nil || at.Op == "token" || at.Client == "" || !sane(at.Sent) {
		return
	}
	ok := is2xx(at.Code)
	if !ok && at.Code != http.StatusTooManyRequests {
		return
	}
	i, found := a.winClients[at.Client]
	if !found {
		i = uint32(len(a.winClients))
		a.winClients[at.Client] = i
	}
	if err := a.wins.add(decRec{t: at.Sent.UnixNano(), client: i, accepted: ok}); err != nil && a.winErr == nil {
		a.winErr = err
	}
}

// truthWindows sets the limiter's true decisions per window beside what the
// attacker saw in the same windows (by send time: informative only, a request
// near a window's edge may be decided in the next one), w the windows'
// length (ns).
func (a *analyzer) truthWindows(windows []rundir.TruthWindow, w int64, r *truthReport) error {
	rows := make([]truthWindow, len(windows))
	for i, tw := range windows {
		rows[i] = truthWindow{Client: tw.Client, Start: ts(tw.Start), Accepted: tw.Accepted, Refused: tw.Refused}
	}
	if w > 0 && a.wins != nil {
		if err := a.countInWindows(windows, w, rows); err != nil {
			return err
		}
	}
	for _, row := range rows {
		if row.MeasuredAccepted != row.Accepted || row.MeasuredRefused != row.Refused {
			r.WindowMismatches++
		}
	}
	r.Windows = append(r.Windows, rows...)
	sort.SliceStable(r.Windows, func(i, j int) bool {
		x, y := r.Windows[i], r.Windows[j]
		if x.Client != y.Client {
			return x.Client < y.Client
		}
		return x.Start < y.Start
	})
	return nil
}

// countInWindows counts the spilled decisions into rows (windows' order):
// the decisions come in time order, so each client's next window only moves
// forward.
func (a *analyzer) countInWindows(windows []rundir.TruthWindow, w int64, rows []truthWindow) error {
	byClient := make([][]int, len(a.winClients)) // per client index: its windows, by start
	for i, tw := range windows {
		if c, ok := a.winClients[tw.Client]; ok {
			byClient[c] = append(byClient[c], i)
		}
	}
	for _, idx := range byClient {
		slices.SortStableFunc(idx, func(x, y int) int { return windows[x].Start.Compare(windows[y].Start) })
	}
	next := make([]int, len(byClient))
	for d := range a.wins.sorted() {
		idx := byClient[d.client]
		k := next[d.client]
		for k < len(idx) && windows[idx[k]].Start.UnixNano()+w <= d.t {
			k++
		}
		next[d.client] = k
		if k == len(idx) || windows[idx[k]].Start.UnixNano() > d.t {
			continue
		}
		if d.accepted {
			rows[idx[k]].MeasuredAccepted++
		} else {
			rows[idx[k]].MeasuredRefused++
		}
	}
	if a.winErr != nil {
		return a.winErr
	}
	return a.wins.err
}
