package sim

import (
	"slices"
	"sync"
	"time"

	"github.com/msgload/msgload/rundir"
)

// truthRec keeps the ground truth, bounded: at most cap messages and 4×cap
// callback records; windows are few (clients × windows of the run).
type truthRec struct {
	mu        sync.Mutex
	rl        rundir.TruthRateLimit
	epoch     time.Time
	windows   map[windowKey]*rundir.TruthWindow
	order     []windowKey
	msgs      []rundir.TruthMessage
	cbs       []rundir.TruthCallback
	cap       int
	truncated bool
}

type windowKey struct {
	client string
	idx    int64
}

func newTruth(rl RateLimit, cap int, epoch time.Time) *truthRec {
	return &truthRec{
		rl:      rundir.TruthRateLimit{Requests: rl.Requests, Window: rundir.Duration(rl.Window), Algorithm: rl.Algorithm},
		epoch:   epoch,
		windows: map[windowKey]*rundir.TruthWindow{},
		cap:     cap,
	}
}

// decision counts one limiter decision for client at now.
func (t *truthRec) decision(client string, now time.Time, accepted bool) {
	if t.rl.Window <= 0 {
		return
	}
	w := t.rl.Window.D()
	idx := int64(now.Sub(t.epoch) / w)
	k := windowKey{client, idx}
	t.mu.Lock()
	defer t.mu.Unlock()
	tw := t.windows[k]
	if tw == nil {
		tw = &rundir.TruthWindow{Client: client, Start: t.epoch.Add(time.Duration(idx) * w).UTC()}
		t.windows[k] = tw
		t.order = append(t.order, k)
	}
	if accepted {
		tw.Accepted++
	} else {
		tw.Refused++
	}
}

// full reports whether the message records are at their cap.
func (t *truthRec) full() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.msgs) >= t.cap
}

// message records an accepted message; it returns its index or -1 when full.
func (t *truthRec) message(m rundir.TruthMessage) int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.msgs) >= t.cap {
		t.truncated = true
		return -1
	}
	t.msgs = append(t.msgs, m)
	return int32(len(t.msgs) - 1)
}

func (t *truthRec) step(idx int32, s rundir.TruthStep, final bool) {
	if idx < 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m := &t.msgs[idx]
	m.Steps = append(m.Steps, s)
	if final {
		m.Final = s.State
	}
}

func (t *truthRec) setFinal(idx int32, state string) {
	if idx < 0 {
		return
	}
	t.mu.Lock()
	t.msgs[idx].Final = state
	t.mu.Unlock()
}

func (t *truthRec) sent(idx int32) {
	if idx < 0 {
		return
	}
	t.mu.Lock()
	t.msgs[idx].Sends++
	t.mu.Unlock()
}

func (t *truthRec) callback(c rundir.TruthCallback) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.cbs) >= 4*t.cap {
		t.truncated = true
		return
	}
	t.cbs = append(t.cbs, c)
}

// snapshot copies the truth so far.
func (t *truthRec) snapshot() rundir.Truth {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := rundir.Truth{
		RateLimit: t.rl,
		Windows:   make([]rundir.TruthWindow, 0, len(t.order)),
		Messages:  make([]rundir.TruthMessage, len(t.msgs)),
		Callbacks: slices.Clone(t.cbs),
		Truncated: t.truncated,
	}
	if out.Callbacks == nil {
		out.Callbacks = []rundir.TruthCallback{}
	}
	for _, k := range t.order {
		out.Windows = append(out.Windows, *t.windows[k])
	}
	for i, m := range t.msgs {
		m.Steps = slices.Clone(m.Steps)
		out.Messages[i] = m
	}
	return out
}
