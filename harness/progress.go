package harness

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Counters is a snapshot of a run, shown while it goes.
type Counters struct {
	Phase       string // attack, grace
	Sent        int64  // messages sent (first attempts)
	Accepted    int64
	RateLimited int64 // 429 answers
	Errors      int64 // other failures and unknown outcomes
	Callbacks   int64 // events received by the sink
	Elapsed     time.Duration
	Left        time.Duration // until the attack (or the grace period) ends; 0 when unknown
}

func (c Counters) String() string {
	left := "?"
	if c.Left > 0 {
		left = c.Left.Round(time.Second).String()
	}
	return fmt.Sprintf("%-6s sent %d  accepted %d  429 %d  errors %d  callbacks %d  elapsed %s  left %s",
		c.Phase, c.Sent, c.Accepted, c.RateLimited, c.Errors, c.Callbacks, c.Elapsed.Round(time.Second), left)
}

// progress shows Counters: a live bar on a terminal, a plain line every few
// seconds otherwise (CI logs).
type progress struct {
	snap   func() Counters
	bar    *progressbar.ProgressBar
	w      io.Writer
	every  time.Duration
	stopc  chan struct{}
	doneWg sync.WaitGroup
}

// newProgress starts showing snap on w until stop. planned is the number of
// messages the attack will send (0 when unknown: a spinner).
func newProgress(w io.Writer, tty bool, planned int64, snap func() Counters) *progress {
	p := &progress{snap: snap, w: w, every: 5 * time.Second, stopc: make(chan struct{})}
	if tty {
		max := planned
		if max <= 0 {
			max = -1
		}
		p.bar = progressbar.NewOptions64(max,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetWidth(20),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish(),
		)
		p.every = 250 * time.Millisecond
	}
	p.doneWg.Add(1)
	go p.loop()
	return p
}

func (p *progress) loop() {
	defer p.doneWg.Done()
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-p.stopc:
			return
		case <-t.C:
			p.show()
		}
	}
}

func (p *progress) show() {
	c := p.snap()
	if p.bar == nil {
		fmt.Fprintln(p.w, c.String())
		return
	}
	p.bar.Describe(c.String())
	_ = p.bar.Set64(c.Sent)
}

// stop ends the display and prints the last state as a plain line.
func (p *progress) stop() {
	close(p.stopc)
	p.doneWg.Wait()
	if p.bar != nil {
		_ = p.bar.Finish()
	}
	fmt.Fprintln(p.w, p.snap().String())
}
