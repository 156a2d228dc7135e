package reports

import "fmt"

// A call the simulator started before the deadline can reach the sink after
// it: the sink stamps its arrival somewhere between the call's start and its
// answer (TruthCallback.At, Done), and a busy machine can hold it in transit
// for seconds. The measurement counts a message lost by the sink's stamp
// (DESIGN.md: no end within grace), so the truth's lost is a range by the
// same definition: a message surely arrived by the deadline when an ending
// call was answered by it (sure: the upper bound of lost), maybe when one
// started by it (maybe: the lower bound). A call in transit at the deadline
// lies between the two: the machine's, never a disagreement.

// lostByTruth reports whether a message whose ending calls, as judgement fg
// saw them, have end (messageFate.end) had no end by the deadline dl.
func (fg *truthFigures) lostByTruth(end [3]int64, dl int64) bool {
	if end[0] == 0 {
		return true
	}
	if fg.isMaybe {
		return end[0] > dl // started after it: it cannot have arrived by it
	}
	return end[1] > dl // not answered by it: it may have arrived after it
}

// noteTransit counts an answered call in transit at the deadline: started
// by it, answered after it (the sink may have logged it on either side).
func (ts *truthStream) noteTransit(at, done int64) {
	if dl := ts.a.deadline; !dl.IsZero() && at <= dl.UnixNano() && done > dl.UnixNano() {
		ts.inTransit++
	}
}

// mayHaveLogged says why a true figure is a range: the unanswered calls,
// and the answered ones in transit at the deadline.
func (ts *truthStream) mayHaveLogged(unanswered int64) string {
	s := Plural(unanswered, "call") + " the sink may or may not have logged"
	if ts.inTransit > 0 {
		s += fmt.Sprintf(", %s in transit at the deadline (the sink may have logged it before or after it)", Plural(ts.inTransit, "call"))
	}
	return s
}
