package rundir

// The failover rule of messaging-api.md, shared by the attacker (when to stop
// polling), the sink (a callback's Terminal and failover steps) and the
// reports (polled runs, failover steps). A message's scenario names its
// channels in order (its chain); a final state short of delivery on a channel
// before the last means the awaited condition_status did not come, and the
// service goes on with the next item.

// shortOfDelivery reports whether state is final without a delivery.
func shortOfDelivery(state string) bool {
	return state == "NOT_DELIVERED" || state == "FAILED" || state == "EXPIRED"
}

// FailsOver reports whether a status record of state on the channel at index
// i of a chain of n channels sends the message on to the next channel (i < 0:
// the channel is not in the chain).
func FailsOver(state string, i, n int) bool {
	return shortOfDelivery(state) && i >= 0 && i < n-1
}

// EndsMessage reports whether a status record of state on the channel at
// index i of a chain of n channels ends the message: a delivery (DELIVERED,
// SEEN) always, a final state short of it unless it fails over.
func EndsMessage(state string, i, n int) bool {
	return state == "DELIVERED" || state == "SEEN" || shortOfDelivery(state) && !FailsOver(state, i, n)
}
