package reports

// maxFreeArrivals is how many emptied idArrivals a truthStream keeps for
// the next ids: about the calls in flight at once, and a bound on what it
// holds past their peak.
const maxFreeArrivals = 1024

// newArrivals is an empty idArrivals for a call id: one a judged id left
// when there is one, so that holding the calls in flight makes no map and
// no slice a call (they were 0.6 of the 3.5 GB of garbage of a report on a
// 10-minute run with callbacks and a truth: issue 23).
func (ts *truthStream) newArrivals() idArrivals {
	if n := len(ts.free); n > 0 {
		as := ts.free[n-1]
		ts.free = ts.free[:n-1]
		return as
	}
	return idArrivals{}
}

// recycle empties the arrivals of a judged id for another. Its keys stay,
// each with no arrival: every reader of an idArrivals (followSteps,
// duplicateArrivals, sortArrivals) takes a key with none as a key absent,
// and the (channel, state) keys are few.
func (ts *truthStream) recycle(as idArrivals) {
	if as == nil || len(ts.free) == maxFreeArrivals {
		return
	}
	for k, x := range as {
		as[k] = x[:0]
	}
	ts.free = append(ts.free, as)
}
