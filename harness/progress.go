package harness

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// counters is a snapshot of a run, shown while it goes.
type counters struct {
	Phase       string // attack, grace
	Planned     int64  // messages the attack plans (the scenario's, or its rate over its duration); 0 when unknown
	Sent        int64  // messages sent (first attempts)
	Accepted    int64
	RateLimited int64 // 429 answers
	Errors      int64 // other failures and unknown outcomes
	Callbacks   int64 // events received by the sink
	Elapsed     time.Duration
	Left        time.Duration // until the attack ends by its plan; 0 when unknown
	GraceLeft   time.Duration // until the grace wait ends at the latest (it ends sooner when everything arrived)
	Live        []string      // the parts' live verdicts of their abortOnFail thresholds ("thresholds ok", "… FAILING")
}

// String is the progress line: one count (messages sent of those planned) and
// one estimate of the time left in the phase ("≤" in the grace wait, which
// ends as soon as every final status arrived).
func (c counters) String() string {
	sent := fmt.Sprint(c.Sent)
	if c.Planned > 0 {
		sent += "/" + fmt.Sprint(c.Planned)
	}
	eta := "?"
	switch {
	case c.Phase == "grace" && c.GraceLeft > 0:
		eta = "≤" + c.GraceLeft.Round(time.Second).String()
	case c.Phase != "grace" && c.Left > 0:
		eta = c.Left.Round(time.Second).String()
	}
	line := fmt.Sprintf("%-6s sent %s  accepted %d  429 %d  errors %d  callbacks %d  elapsed %s  ETA %s",
		c.Phase, sent, c.Accepted, c.RateLimited, c.Errors, c.Callbacks, c.Elapsed.Round(time.Second), eta)
	if len(c.Live) > 0 {
		line += "  " + strings.Join(c.Live, "; ")
	}
	return line
}

// progress shows Counters: on a terminal one line redrawn in place (a bar for
// the share sent, then the counters), a plain line every few seconds otherwise
// (CI logs). The bar draws no count and no time of its own: the line has one
// of each.
type progress struct {
	snap   func() counters
	bar    *progressbar.ProgressBar
	w      io.Writer
	every  time.Duration
	stopc  chan struct{}
	doneWg sync.WaitGroup
}

// newProgress starts showing snap on w until stop. planned is the number of
// messages the attack will send (0 when unknown: a spinner).
func newProgress(w io.Writer, tty bool, planned int64, snap func() counters) *progress {
	p := &progress{snap: snap, w: w, every: 5 * time.Second, stopc: make(chan struct{})}
	if tty {
		max := planned
		if max <= 0 {
			max = -1
		}
		p.bar = progressbar.NewOptions64(max,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetWidth(20),
			// No throttle of its own: show draws every 250 ms, and a throttled
			// bar would draw the description and the count of different ticks.
			progressbar.OptionThrottle(0),
			progressbar.OptionSetPredictTime(false), // the line's ETA is the one estimate
			progressbar.OptionSetElapsedTime(false),
			progressbar.OptionShowDescriptionAtLineEnd(),
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
	if c.Planned > 0 && c.Sent > c.Planned {
		p.bar.ChangeMax64(c.Sent) // more than the estimate at this rate: the bar stays full
	}
	// The bar's percentage is of the same count as the line's "sent".
	_ = p.bar.Set64(c.Sent)
	p.bar.Describe(strings.TrimSpace(c.String()))
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
