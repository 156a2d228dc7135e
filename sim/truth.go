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
	msgs      chunked[rundir.TruthMessage]
	cbs       chunked[rundir.TruthCallback]
	cap       int
	truncated bool
}

type windowKey struct {
	client string
	idx    int64
}

func newTruth(rl RateLimit, cap int, epoch time.Time) *truthRec {
	return &truthRec{
		rl: rundir.TruthRateLimit{Requests: rl.Requests, Window: rundir.Duration(rl.Window), Algorithm: rl.Algorithm,
			CountFailures: &rl.CountFailures, Count429: &rl.Count429},
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
	return t.msgs.len() >= t.cap
}

// message records an accepted message; it returns its index or -1 when full.
func (t *truthRec) message(m rundir.TruthMessage) int32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.msgs.len() >= t.cap {
		t.truncated = true
		return -1
	}
	return int32(t.msgs.add(m))
}

func (t *truthRec) step(idx int32, s rundir.TruthStep, final bool) {
	if idx < 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.msgs.at(int(idx))
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
	t.msgs.at(int(idx)).Final = state
	t.mu.Unlock()
}

func (t *truthRec) sent(idx int32) {
	if idx < 0 {
		return
	}
	t.mu.Lock()
	t.msgs.at(int(idx)).Sends++
	t.mu.Unlock()
}

func (t *truthRec) callback(c rundir.TruthCallback) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cbs.len() >= 4*t.cap {
		t.truncated = true
		return
	}
	t.cbs.add(c)
}

// snapshot copies the truth so far.
func (t *truthRec) snapshot() rundir.Truth {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := rundir.Truth{
		RateLimit: t.rl,
		Windows:   make([]rundir.TruthWindow, 0, len(t.order)),
		Messages:  t.msgs.slice(),
		Callbacks: t.cbs.slice(),
		Truncated: t.truncated,
	}
	for _, k := range t.order {
		out.Windows = append(out.Windows, *t.windows[k])
	}
	for i := range out.Messages {
		out.Messages[i].Steps = slices.Clone(out.Messages[i].Steps)
	}
	return out
}

// chunked is an append-only list in fixed-size chunks: appending never
// copies what is already there (a million truth records grown as one slice
// cost a copy of the whole each time it grew, and a heap twice its size).
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const chunkLen = 4096

func (c *chunked[T]) len() int { return c.n }

// add appends v and returns its index.
func (c *chunked[T]) add(v T) int {
	if c.n%chunkLen == 0 {
		c.chunks = append(c.chunks, make([]T, 0, chunkLen))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
	return c.n - 1
}

func (c *chunked[T]) at(i int) *T { return &c.chunks[i/chunkLen][i%chunkLen] }

// slice copies the list into one slice (never nil).
func (c *chunked[T]) slice() []T {
	out := make([]T, 0, c.n)
	for _, ch := range c.chunks {
		out = append(out, ch...)
	}
	return out
}
