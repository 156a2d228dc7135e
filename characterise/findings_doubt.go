package characterise

import (
	"fmt"
	"slices"
	"time"

	"github.com/msgload/msgload/reports"
)

// fitDoubt says why the limiter fit's names are not claimed when the burst
// probe's answers were slow, "" when they were quick. The fit bounds every
// decision by its send and its answer, and among models that contradict as
// few decisions it prefers the one that also holds at the send times alone:
// sound while the answers come quicker than the cold burst's spacing, not
// when the network holds them longer (latency jitter: each decision
// anywhere in a wide interval). Through toxiproxy's jitter it named a
// bucket's rate 10 % off, and a fixed window for a bucket whose 429s used
// quota: the algorithm, limit and capacity are then cannot tell, and the
// straddle judged by them. Against the embedded simulator the reason is
// the environment's (busyEmbedded; judgeEnvironment makes the run incomplete).
func (st *state) fitDoubt() string {
	median, spacing, slow := st.burstAnswers()
	switch {
	case !slow:
		return ""
	case st.base.Target.Embedded:
		return busyEmbedded(median, spacing)
	}
	return fmt.Sprintf("the answers took %s (median), longer than the cold burst's spacing (%s): the fit's decisions could lie anywhere in that time, and models that differ only in decisions that close fit alike",
		median.Round(time.Millisecond), spacing)
}

// burstAnswers is the burst probe's median answer time against its cold
// burst's spacing; slow when the median is the longer.
func (st *state) burstAnswers() (median, spacing time.Duration, slow bool) {
	pd := st.data[probeBurst]
	if pd == nil {
		return 0, 0, false
	}
	lat := make([]float64, 0, len(pd.attempts))
	for _, a := range pd.attempts {
		if a.Code != 0 {
			lat = append(lat, a.Latency)
		}
	}
	if len(lat) == 0 {
		return 0, 0, false
	}
	slices.Sort(lat)
	median = time.Duration(lat[(len(lat)-1)/2] * float64(time.Second))
	spacing = time.Duration(float64(time.Second) / st.plan.BurstRate)
	return median, spacing, median > spacing
}

// busyEmbedded is the environment's reason for slow answers of the embedded
// simulator: it runs in msgload's own process, so its answers are slow only
// when the machine is (never the service's).
func busyEmbedded(median, spacing time.Duration) string {
	return tooBusy(fmt.Sprintf("the embedded simulator answered the burst in a median of %s against the %s spacing",
		median.Round(time.Millisecond), spacing))
}

// tooBusy is the one wording of the environment's reason when the machine,
// not the service, left a probe's figures in doubt.
func tooBusy(why string) string {
	return "the machine was too busy: " + why + "; rerun on a quieter machine"
}

// environmentWhy is the environment's reason a probe's run must not pass
// ("" when none): the embedded simulator's slow burst answers (busyEmbedded;
// a real target's are the service's), its late or unanswered resends
// (busyResends), its late callbacks (busyHookWhy), a sustained level's
// bunched sends (bunchedWhy, against any target: the generator's).
func (st *state) environmentWhy(probe string) string {
	switch probe {
	case probeBurst:
		if !st.base.Target.Embedded {
			return "" // a real target's slow answers are the service's
		}
		if median, spacing, slow := st.burstAnswers(); slow {
			return busyEmbedded(median, spacing)
		}
	case probeIdempotency:
		return st.busyResends()
	case probeHookRetry:
		return st.busyHookWhy()
	case probeSustain:
		return st.bunchedWhy()
	}
	return ""
}

// judgeEnvironment makes a probe's run incomplete, for the environment,
// when environmentWhy has a reason: its findings are then cannot tell for
// the machine's sake, and a characterisation that could not tell them for
// that must not pass.
func (st *state) judgeEnvironment(cp *reports.ContractProbe) {
	if cp.Verdict != reports.VerdictPass {
		return
	}
	if why := st.environmentWhy(cp.Name); why != "" {
		cp.Verdict, cp.Reasons = reports.VerdictIncomplete, append(slices.Clip(cp.Reasons), why) // not the summary's own slice
	}
}

// doubtedFit is the limit, capacity and algorithm the fit named, each
// cannot tell (the fit's value in the reason) when the answer times leave
// them in doubt (fitDoubt).
func (st *state) doubtedFit(verdict string, limit, windowS, capacity float64, evidence []string) []reports.Finding {
	fs := []reports.Finding{limitFinding(verdict, limit, windowS, capacity, evidence), capacityFinding(verdict, limit, capacity, evidence),
		found(RuleAlgorithm, probeBurst, verdict, evidence...)}
	if why := st.fitDoubt(); why != "" {
		for i, f := range fs {
			fs[i] = cannot(f.Rule, probeBurst, why+" (the fit's: "+f.Value+")", evidence...)
		}
	}
	return fs
}
