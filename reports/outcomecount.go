package reports

import (
	"maps"
	"slices"
	"sort"

	"github.com/msgload/msgload/rundir"
)

// countOutcome adds to o a message that ended with final status state.
func countOutcome(o *outcomes, state string) {
	if state == "" {
		state = "none"
	}
	o.ByState[state]++
	switch state {
	case rundir.StateDelivered, rundir.StateSeen:
		o.Delivered++
	case rundir.StateNotDelivered, rundir.NotifyUndelivered:
		o.NotDelivered++
	case rundir.StateFailed:
		o.Failed++
	case rundir.StateExpired:
		o.Expired++
	default:
		o.OtherFinal++
	}
}

// Noun is what the API sends: "notification" or "message".
func (s *Summary) Noun() string {
	if s.Run.API == rundir.APINotify {
		return "notification"
	}
	return "message"
}

// SortedStates orders final states: the rank of stateRank (worst first), then by name.
func SortedStates(m map[string]int64) []string {
	ks := slices.Sorted(maps.Keys(m))
	sort.SliceStable(ks, func(i, j int) bool {
		ri, oki := stateRank[ks[i]]
		rj, okj := stateRank[ks[j]]
		if oki != okj {
			return oki
		}
		return ri < rj
	})
	return ks
}
