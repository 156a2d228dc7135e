package scenarios

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
)

// WriteText prints the plan for people: per client the messages, the rate
// against the limit and the share of 429 expected; then the totals.
func (p Plan) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	if len(p.Parts) > 0 {
		for _, pp := range p.Parts {
			fmt.Fprintf(ew, "part %s:\n", pp.Name)
			pp.writeOne(ew, "  ")
		}
		fmt.Fprintf(ew, "total: %d messages planned, %d really sent, %d requests with probes and retries, longest part %s, expected 429: %.1f%%\n",
			p.Requests, p.Messages, p.Attempts, shortDuration(roundDuration(p.Duration)), p.Expected429*100)
		fmt.Fprintf(ew, "disk: %s\n", diskText(p.DiskBytes))
		return ew.err
	}
	p.writeOne(ew, "")
	return ew.err
}

func (p Plan) writeOne(w io.Writer, indent string) {
	limit := "no limit"
	if !p.Limit.IsZero() {
		limit = fmt.Sprintf("limit %s per client, mode %s", p.Limit, p.Mode)
		if p.LimitEnforced != p.Limit && !p.LimitEnforced.IsZero() {
			limit += fmt.Sprintf(" (simulator enforces %s)", p.LimitEnforced)
		}
	}
	dur := shortDuration(roundDuration(p.Duration))
	if p.Profile == "replay" {
		dur = "as recorded"
	}
	fmt.Fprintf(w, "%sapi %s, profile %s, %s, mean %.2f/s (peak %.2f/s), %s\n", indent, p.API, p.Profile, dur, p.RatePerSecond, p.PeakPerSecond, limit)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	window := time.Minute
	wname := "1m"
	if !p.Limit.IsZero() {
		window, wname = p.Limit.Per, shortDuration(p.Limit.Per)
	}
	fmt.Fprintf(tw, "%s  client\tmessages\trate per %s\tpeak per %s\tlimit\texpected 429\n", indent, wname, wname)
	for _, c := range p.Clients {
		lim := "-"
		if c.LimitPerWindow > 0 {
			lim = fmt.Sprintf("%g", c.LimitPerWindow)
		}
		peak := "-"
		if c.PeakPerWindow > 0 {
			peak = fmt.Sprintf("%.1f", c.PeakPerWindow)
		}
		fmt.Fprintf(tw, "%s  %s\t%d\t%.1f\t%s\t%s\t%.1f%%\n", indent, c.ID, c.Requests, c.RatePerSecond*window.Seconds(), peak, lim, c.Expected429*100)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "%stotal: %d messages planned, %d really sent", indent, p.Requests, p.Messages)
	if p.Probes > 0 || p.Retries > 0 {
		fmt.Fprintf(w, " (+%d idempotency probes, +%d retries expected: %d requests)", p.Probes, p.Retries, p.Attempts)
	}
	fmt.Fprintf(w, ", expected 429: %.1f%%\n", p.Expected429*100)
	fmt.Fprintf(w, "%sdisk: %s\n", indent, diskText(p.DiskBytes))
}

// diskText says what a run of the plan writes to its directory.
func diskText(b int64) string {
	return fmt.Sprintf("the run directory grows by about %s (more with retries, polls, several callbacks a message)", humanize.Bytes(uint64(max(b, 0))))
}

func roundDuration(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}
