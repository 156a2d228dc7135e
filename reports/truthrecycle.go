package reports

// maxFree is how many emptied idArrivals a truthStream keeps for the next
// ids, and flights a streamRun for the next messages: about as many as are
// in flight at once, and a bound on what is held past their peak.
const maxFree = 1024

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
	if as == nil || len(ts.free) == maxFree {
		return
	}
	for k, x := range as {
		as[k] = x[:0]
	}
	ts.free = append(ts.free, as)
}

// newFlight is a flight of a message of want records: one a landed message
// left when there is one (a flight made for each message held was the most
// of what the analysis of a run with callbacks allocated), its keys' room
// kept.
func (st *streamRun) newFlight(want int) *flight {
	if n := len(st.free); n > 0 {
		f := st.free[n-1]
		st.free = st.free[:n-1]
		*f = flight{want: want, keys: f.keys[:0]}
		return f
	}
	return &flight{want: want}
}

// keepFlight keeps the flight of a landed message for another (up to
// maxFree of them): nothing holds it once it landed (analyzer.cur
// is set anew for each record read).
func (st *streamRun) keepFlight(f *flight) {
	if len(st.free) < maxFree {
		st.free = append(st.free, f)
	}
}
