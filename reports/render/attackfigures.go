package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// attackFigures adds to kf the rows about sends the attacker delayed or did
// not make, when there are any.
func (s view) attackFigures(kf []keyFigure) []keyFigure {
	r := s.Requests
	if r.Capped > 0 {
		kf = append(kf, keyFigure{"sends delayed by the in-flight cap", fmt.Sprintf("%d (at most %d messages in flight: answers, retry waits or the respect limiter held them longer than the plan allows)", r.Capped, r.MaxInFlight)})
	}
	if len(r.GaveUp) > 0 {
		kf = append(kf, keyFigure{"sends given up", gaveUpText(r.GaveUp)})
	}
	return kf
}

// gaveUpNames says each Attempt.GaveUp reason in words.
var gaveUpNames = map[string]string{
	"retry_after_past_end": "Retry-After past the run's end",
	"backoff_past_end":     "backoff past the run's end",
	"limit_past_end":       "rate-limit window past the run's end",
	"stopped":              "interrupted while waiting",
}

// gaveUpText is "N (gave up: reason n, …)" with the reasons in a fixed order.
func gaveUpText(m map[string]int64) string {
	var total int64
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		total += m[k]
		name := gaveUpNames[k]
		if name == "" {
			name = k
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, m[k]))
	}
	return fmt.Sprintf("%d (gave up: %s)", total, strings.Join(parts, ", "))
}
