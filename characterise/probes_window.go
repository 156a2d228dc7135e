package characterise

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	"github.com/msgload/msgload/replay"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// probeWindow resends notifications after a ladder of delays: how long the
// service keeps an externalId.
const probeWindow = "idempotency-window"

// windowFile is the recording the window probe replays, in the
// characterisation's directory.
const windowFile = "idempotency-window.jsonl"

// windowShare is the most of the budget the window probe takes (2 requests
// a step of its ladder).
const windowShare = 0.05

// windowLadder is the window probe's delays: 1 s doubled up to the longest
// window waited out (--max-window, the last step exactly it), as many as
// the budget's share allows (the shortest first: what it cannot afford is
// said as "cannot tell, because only up to X").
func windowLadder(o Options) []time.Duration {
	var ds []time.Duration
	for d := time.Second; ; d *= 2 {
		ds = append(ds, min(d, o.MaxWindow))
		if d >= o.MaxWindow {
			break
		}
	}
	return ds[:min(len(ds), int(float64(o.Budget)*windowShare/2))]
}

// windowProbe is the plan's window probe, ok false when the budget allows
// no step.
func windowProbe(o Options, s *scenarios.Scenario) (Probe, bool) {
	ds := windowLadder(o)
	if len(ds) == 0 {
		return Probe{}, false
	}
	last := ds[len(ds)-1]
	return Probe{Name: probeWindow, Requests: int64(2 * len(ds)), Takes: last + grace(s) + time.Second, ladder: ds,
		What: fmt.Sprintf("%d notifications at once, each resent with its externalId after %s", len(ds), ladderText(ds))}, true
}

func ladderText(ds []time.Duration) string {
	var b bytes.Buffer
	for i, d := range ds {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(shortDur(d))
	}
	return b.String()
}

// windowScenario makes s the window probe's: a replay of a recording that
// sends one notification a step at once (a millisecond apart, in the
// ladder's order) and resends each with its externalId after its delay —
// the replay folds the resend into its message's attempts. The recording is
// written into dir.
func windowScenario(s *scenarios.Scenario, pr Probe, dir string) error {
	path := filepath.Join(dir, windowFile)
	to := s.Message.Recipient
	if !rundir.IsMSISDN(to) {
		to = "+79990000000" // the first of the default pattern's
	}
	var reqs []replay.Synthetic
	send := func(i int, at time.Duration) {
		body, _ := json.Marshal(map[string]any{"recipient": map[string]string{"value": to}, "notificationText": fmt.Sprintf("window %d", i+1),
			"externalId": fmt.Sprintf("window-%d", i+1)})
		reqs = append(reqs, replay.Synthetic{At: at, Method: http.MethodPost, Path: rundir.RouteNotifications, Body: body})
	}
	for i := range pr.ladder {
		send(i, time.Duration(i)*time.Millisecond)
	}
	for i, d := range pr.ladder {
		send(i, time.Duration(i)*time.Millisecond+d)
	}
	if err := replay.WriteSynthetic(path, time.Now().UTC(), "characterise", reqs); err != nil {
		return fmt.Errorf("characterise: %w", err)
	}
	s.Load = scenarios.LoadSpec{Profile: "replay", File: path, Speed: 1, ExternalIDs: "new", MaxInFlight: s.Load.MaxInFlight}
	s.MaxMessages = pr.Requests // the pacer's hits, resends included
	return nil
}

// RuleWindow is how long the service keeps an externalId: seconds, within
// the finding's interval.
const RuleWindow = "idempotency.window"

// windowFinding: each step's resend answered with its first's
// notificationId (kept) or another (forgotten). The key was made between
// the first's send and its answer, and tried between the resend's send and
// its answer: a step kept says the window is at least its delay less the
// first's latency, one forgotten at most its delay plus the resend's.
func (st *state) windowFinding() reports.Finding {
	pd := st.data[probeWindow]
	switch {
	case pd == nil || pd.sum == nil:
		return cannot(RuleWindow, probeWindow, "the window probe did not run or wrote no report (the budget allowed no step)")
	case pd.verdict == reports.VerdictError:
		return cannot(RuleWindow, probeWindow, distrusted)
	}
	lo, hi := 0.0, math.Inf(1)
	var ev []string
	for _, w := range windowSteps(pd.attempts) {
		d := w.resend.Sent.Sub(w.first.Sent).Seconds()
		switch {
		case w.first.NotificationID == w.resend.NotificationID:
			lo = max(lo, d-w.first.Latency)
			ev = append(ev, fmt.Sprintf("resent after %.2fs: the same notificationId (kept)", d))
		default:
			hi = min(hi, d+w.resend.Latency)
			ev = append(ev, fmt.Sprintf("resent after %.2fs: another notificationId (forgotten)", d))
		}
	}
	longest := shortDur(st.ran[probeWindow].ladder[len(st.ran[probeWindow].ladder)-1])
	switch {
	case len(ev) == 0:
		return cannot(RuleWindow, probeWindow, "no step's first send and resend were both answered 2xx")
	case math.IsInf(hi, 1):
		f := cannot(RuleWindow, probeWindow, "kept at every delay tried: the budget and --max-window allowed only up to "+longest, ev...)
		f.Low = &lo
		return f
	case lo > hi:
		return cannot(RuleWindow, probeWindow, "kept after a longer delay than one it was forgotten after", ev...)
	}
	f := interval(RuleWindow, probeWindow, lo, hi, ev...)
	f.Value = fmt.Sprintf("%.1fs..%.1fs", lo, hi)
	return f
}

// windowStep is one key of the window probe: its first send and its resend.
type windowStep struct{ first, resend rundir.Attempt }

// windowSteps is the steps whose first send and resend were both answered
// 2xx with a notificationId, by seq.
func windowSteps(as []rundir.Attempt) []windowStep {
	by := map[int64]*windowStep{}
	for _, a := range as {
		if !is2xx(a.Code) || a.NotificationID == "" || a.Probe != "" {
			continue
		}
		if by[a.Seq] == nil {
			by[a.Seq] = &windowStep{}
		}
		if a.Attempt == 1 {
			by[a.Seq].first = a
		} else {
			by[a.Seq].resend = a
		}
	}
	var out []windowStep
	for _, seq := range slices.Sorted(maps.Keys(by)) {
		if s := by[seq]; s.first.NotificationID != "" && s.resend.NotificationID != "" {
			out = append(out, *s)
		}
	}
	return out
}
