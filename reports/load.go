package reports

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/rundir"
)

// The load applied is part of the verdict (README, "What a verdict stands
// on"): a run that sent more than planTolerance fewer messages than run.json
// planned, or whose achieved rate is more than planTolerance under the planned
// rate, is incomplete — never pass — with whose limit held it back: the load
// generator's CPU, its cap on messages in flight, or the target.

// planTolerance is how far under its plan (messages or rate) a run may fall
// and still have held it.
const planTolerance = 0.05

// rateSlack is the least time the sends must have overrun their planned span
// for the rate to be under the plan: a run of a few hundred milliseconds
// cannot tell a rate 5 % low from one send a scheduler tick late, and is
// judged by its count alone.
const rateSlack = 100 * time.Millisecond

// loadShort says how the run's load fell short of its plan: its messages, its
// rate, both or neither. A plan of 0 (not known: a replay's rate, an old
// run.json) is not judged; an interrupted run is incomplete already; a merged
// run is judged by its count (each shard by its rate too).
func (s *Summary) loadShort() (count, rate bool) {
	r := s.Requests
	if s.Run.Interrupted {
		return false, false
	}
	// A count plan owes every message (DESIGN: it sends N, late if it must):
	// one fewer is a shortfall. A duration plan may fall planTolerance short,
	// and one message off its edge (the plan rounds the integral of the
	// rate, the pacer sends the hits due by the end).
	missing := r.PlannedCount - r.Messages
	short := float64(r.Messages) < (1-planTolerance)*float64(r.PlannedCount) && (missing > 1 || r.Messages == 0)
	if r.PlanCounted {
		short = missing > 0
	}
	// A run an abortOnFail threshold stopped sent less on purpose, one the
	// disk guard or a failure of msgload's own stopped for a reason of its
	// own: its count is not judged, its rate is (abortReason, diskReason,
	// failedReason).
	count = s.Run.Aborted == nil && s.Run.DiskLow == nil && s.Run.Failed == "" && r.PlannedCount > 0 && short
	// A merged run's rate is judged in each shard, on the machine that sent
	// it (the union's span holds the gaps between the shards' starts).
	if s.Run.Merged == nil && r.PlannedRate > 0 && r.Messages > 1 && r.AchievedRate > 0 && r.AchievedRate < (1-planTolerance)*r.PlannedRate {
		n := float64(r.Messages - 1)
		overrun := n/r.AchievedRate - n/r.PlannedRate
		rate = overrun > rateSlack.Seconds()
	}
	return count, rate
}

// limitHeld says whether respect mode's limiter, not a shortfall, explains a
// load under the plan: the plan puts more messages in one window of a client
// (plus an answer's time) than the limit lets go, within 5 %. It returns the
// rate the limit allows: each client at most the limit per window plus an
// answer's time (attack's windowLimiter counts a window from the answer).
func (s *Summary) limitHeld() (bool, float64) {
	rl, r := s.RateLimit, s.Requests
	if rl.Mode != "respect" || rl.Limit <= 0 || rl.Window <= 0 || s.Run.Clients <= 0 {
		return false, 0
	}
	allowed := float64(s.Run.Clients*rl.Limit) / (rl.Window + r.Latency.P50)
	// What the plan puts in a window as the limiter counts it (from an
	// answer: a window plus an answer's time), at most the whole plan.
	perWindow := min(r.PlannedRate*(rl.Window+r.Latency.P50), float64(r.PlannedCount)) / float64(s.Run.Clients)
	return perWindow > (1-planTolerance)*float64(rl.Limit), allowed
}

// loadReasons are the reasons the load was not held (none when it was).
func (s *Summary) loadReasons() []Reason {
	count, rate := s.loadShort()
	if !count && !rate {
		return nil
	}
	if held, _ := s.limitHeld(); held {
		return nil // deliberate: the headline says the limit held it (loadLine)
	}
	r := s.Requests
	var what []string
	if count {
		what = append(what, s.sentOfPlanned())
	}
	if rate {
		what = append(what, fmt.Sprintf("the rate achieved was %s/s of %s/s planned (%s)", TwoDecimals(r.AchievedRate), TwoDecimals(r.PlannedRate), Percent(r.AchievedRate, r.PlannedRate)))
	}
	limit, why, next := s.whoseLimit()
	whose := WhoseEnvironment
	if limit == limitTarget {
		whose = WhoseService
	}
	text := fmt.Sprintf("the load was not held (more than %g %% under the plan): %s; %s", 100*planTolerance, strings.Join(what, ", "), why)
	return []Reason{{Whose: whose, Verdict: VerdictIncomplete, Limit: limit, Text: text, Next: next}}
}

// whoseLimit tells whose limit held the load back, from what attempts.jsonl
// and run.json record. Messages needed in flight to hold the plan are the
// planned rate × the mean answer time (Little's law). When they are more than
// the cap allows even at its default, the target answers slower than the plan
// allows; when sends waited for the cap (capped) and a higher cap would have
// carried the plan, the cap is the limit; when sends left late without the
// cap, or waited for a cap the mean answer time would not fill (the answers
// were handled late: a busy machine), the machine running msgload could not
// keep up (its CPU).
func (s *Summary) whoseLimit() (limit, why, next string) {
	r := s.Requests
	need := r.PlannedRate * r.Latency.Mean
	answers := fmt.Sprintf("answers took %s on average: at %s/s about %.0f messages are in flight", dur(r.Latency.Mean), TwoDecimals(r.PlannedRate), need)
	slow := r.Capped > 0 && r.Latency.Has() && need > float64(max(r.MaxInFlight, rundir.DefaultMaxInFlight))
	switch {
	case slow && s.Run.Target == "embedded":
		// The embedded simulator answers from msgload's own process: its
		// slowness is the machine's, not a service's.
		return limitCPU,
			fmt.Sprintf("the machine running msgload and the embedded simulator could not keep up (%s, over the cap of %d; %s sends waited for it)", answers, r.MaxInFlight, strconv.FormatInt(r.Capped, 10)),
			cpuNext
	case slow:
		return limitTarget,
			fmt.Sprintf("the target's limit: it answered slower than the plan allows (%s, over the cap of %d; %s sends waited for it)", answers, r.MaxInFlight, strconv.FormatInt(r.Capped, 10)),
			"the target cannot carry this plan: lower the rate, or find why it answers slowly"
	case r.Capped > 0 && r.Latency.Has() && need > float64(r.MaxInFlight):
		return limitInFlight,
			fmt.Sprintf("the load generator's cap on messages in flight held it (%s sends waited for one of its %d slots; %s)", strconv.FormatInt(r.Capped, 10), r.MaxInFlight, answers),
			fmt.Sprintf("raise load.maxInFlight (now %d) above %.0f, or lower the rate", r.MaxInFlight, need)
	}
	if r.Capped > 0 {
		return limitCPU,
			fmt.Sprintf("the load generator's CPU held it: %s sends waited for the in-flight cap of %d, which the answers alone would not fill (%s)", strconv.FormatInt(r.Capped, 10), r.MaxInFlight, answers),
			cpuNext
	}
	if r.Late == 0 {
		return limitStopped, "the load generator stopped before its plan was sent (no send was late or waited for the in-flight cap)",
			"see msgload's log for why the attack ended early, and run again"
	}
	return limitCPU,
		fmt.Sprintf("the load generator's CPU held it: %s left more than %s late (send lag p99 %s) without the in-flight cap being reached", Plural(r.Late, "send"), lateAfter, r.SendLag.Show(r.SendLag.P99)),
		cpuNext
}

// GeneratorLimit reports whether limit (Reason.Limit) is the load
// generator's own — its CPU or its in-flight cap — not the target's.
func GeneratorLimit(limit string) bool { return limit == limitCPU || limit == limitInFlight }

// cpuNext is what to do when the machine running msgload could not keep up.
const cpuNext = "give msgload more CPU (a quieter machine), lower the rate, or split the load over processes (msgload run --shard I/N)"

// sentOfPlanned is "sent 2,682 of 120,000 planned messages (2.2 %)".
func (s *Summary) sentOfPlanned() string {
	r := s.Requests
	return fmt.Sprintf("sent %s of %s planned %ss (%s)", Thousands(r.Messages), Thousands(r.PlannedCount), s.Noun(), Percent(float64(r.Messages), float64(r.PlannedCount)))
}

// LoadLine is the headline's sentence on the load applied: planned against
// sent, and why the two differ when they do.
func (s *Summary) LoadLine() string {
	r := s.Requests
	if r.PlannedCount <= 0 {
		return ""
	}
	line := strings.ToUpper(s.sentOfPlanned()[:1]) + s.sentOfPlanned()[1:]
	count, rate := s.loadShort()
	switch held, allowed := s.limitHeld(); {
	case (count || rate) && held:
		line += fmt.Sprintf(", at %s/s: respect mode held the load to the limit (about %s/s for %d clients), as planned", TwoDecimals(r.AchievedRate), TwoDecimals(allowed), s.Run.Clients)
	case rate:
		line += fmt.Sprintf(", at %s/s of %s/s planned", TwoDecimals(r.AchievedRate), TwoDecimals(r.PlannedRate))
	}
	return line + "."
}

// Percent is a/b as "2.2 %" (one decimal; "0 %" of nothing).
func Percent(a, b float64) string {
	if b <= 0 {
		return "0 %"
	}
	return strconv.FormatFloat(100*a/b, 'f', 1, 64) + " %"
}

// Thousands writes n with a comma every three digits: 120,000.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
