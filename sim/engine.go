package sim

import (
	"container/heap"
	"sync"
	"time"
)

// The delivery engine keeps every future event (a status change due, a
// callback held back or retried, a record to forget) in one heap ordered by
// due time. One scheduler goroutine sleeps until the earliest event and runs
// it; HTTP calls go to a bounded pool of senders. Nothing starts a goroutine
// or a timer per message, so a million pending deliveries cost only memory.

type event struct {
	at  int64 // Unix nanoseconds
	job job
}

// job is what an event runs: a *message step, a *notification's terminal
// status, a *callbackJob to send, or a record to forget.
type job interface {
	run(s *Server, now time.Time)
}

// forget removes an idempotency key at the end of its retention.
type forget struct {
	key idemKey
}

type eventHeap []event

func (h eventHeap) Len() int           { return len(h) }
func (h eventHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h eventHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)        { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	n := len(old)
	ev := old[n-1]
	old[n-1] = event{}
	*h = old[:n-1]
	return ev
}

type engine struct {
	mu     sync.Mutex
	events eventHeap
	wake   chan struct{}
	done   chan struct{}
	exited chan struct{}
	run    func(ev event) // runs one due event, on the scheduler goroutine
}

func newEngine(run func(event)) *engine {
	e := &engine{wake: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{}), run: run}
	go e.loop()
	return e
}

// at schedules ev at t.
func (e *engine) at(t time.Time, j job) {
	ev := event{at: t.UnixNano(), job: j}
	e.mu.Lock()
	heap.Push(&e.events, ev)
	first := e.events[0].at == ev.at
	e.mu.Unlock()
	if first {
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

func (e *engine) loop() {
	defer close(e.exited)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		e.mu.Lock()
		if len(e.events) == 0 {
			e.mu.Unlock()
			select {
			case <-e.wake:
				continue
			case <-e.done:
				return
			}
		}
		now := time.Now().UnixNano()
		if e.events[0].at <= now {
			ev := heap.Pop(&e.events).(event)
			e.mu.Unlock()
			e.run(ev)
			select {
			case <-e.done:
				return
			default:
			}
			continue
		}
		wait := time.Duration(e.events[0].at - now)
		e.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-e.wake:
		case <-e.done:
			return
		}
	}
}

// halt tells the scheduler to stop; exited is closed when it has.
func (e *engine) halt() {
	select {
	case <-e.done:
	default:
		close(e.done)
	}
}
