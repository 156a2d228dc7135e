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
// the environment's (busyEmbedded; judgeBusy makes the run incomplete).
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
	return fmt.Sprintf("the machine was too busy: the embedded simulator answered the burst in a median of %s against the %s spacing; rerun on a quieter machine",
		median.Round(time.Millisecond), spacing)
}

// judgeBusy makes the burst probe's run incomplete, for the environment,
// when the embedded simulator answered it slower than its spacing: its
// fit's names are then cannot tell (fitDoubt), and a characterisation that
// could not tell them for the machine's sake must not pass. A real
// target's slow answers are the service's: its run stands.
func (st *state) judgeBusy(cp *reports.ContractProbe) {
	if cp.Name != probeBurst || !st.base.Target.Embedded || cp.Verdict != reports.VerdictPass {
		return
	}
	if median, spacing, slow := st.burstAnswers(); slow {
		cp.Verdict = reports.VerdictIncomplete
		cp.Reasons = append(slices.Clip(cp.Reasons), busyEmbedded(median, spacing)) // not the summary's own slice
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
