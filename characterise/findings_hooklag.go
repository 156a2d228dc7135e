package characterise

import (
	"fmt"

	"github.com/msgload/msgload/reports"
)

// hookLag is how far the embedded simulator itself fell behind the delays
// it drew over the callback probe's run (truth.sim_lag's max, seconds): 0
// against a real target, or when the truth does not say.
func (st *state) hookLag() float64 {
	pd := st.data[probeHookRetry]
	if !st.base.Target.Embedded || pd == nil || pd.sum == nil || pd.sum.Truth == nil || pd.sum.Truth.SimLag == nil {
		return 0
	}
	return pd.sum.Truth.SimLag.Max
}

// busyHookWhy is the environment's reason the sender seemed still to retry
// when the wait ended ("" when it gave up, or the simulator kept its
// delays): the embedded simulator's calls started late by more than a
// wait's slack, and each late call stretches the waits the next one is
// expected after — its lag, not the sender's schedule, may be why.
func (st *state) busyHookWhy() string {
	sc := st.hook
	if sc == nil || sc.series == 0 || sc.gaveUp {
		return ""
	}
	lag := st.hookLag()
	if lag <= waitSlack.Seconds() {
		return ""
	}
	return tooBusy(fmt.Sprintf("the embedded simulator's callbacks started up to %.1f s late (truth.sim_lag), stretching the waits the sender's schedule is read from", lag))
}

// doubtHook gives the rules of when the sender gives up the environment's
// reason when the simulator's lag may explain why it seemed not to.
func (st *state) doubtHook(fs []reports.Finding) {
	why := st.busyHookWhy()
	if why == "" {
		return
	}
	for i, f := range fs {
		if f.Value == reports.CannotTell && (f.Rule == RuleHookAttempts || f.Rule == RuleHookGivesUpAfter) {
			fs[i].Because = why + " (" + f.Because + ")"
		}
	}
}
