package reports

import (
	"reflect"

	"github.com/msgload/msgload/reports/summary"
)

// A threshold passes only on figures that have data. Before a threshold is
// evaluated, every summary field its expression reads by a fixed path
// (delivery.latency.p95, delivery.by_channel["sms"].p99, delivery.lost) is
// looked up in the summary; when one of them has no data the threshold fails
// with the reason "no data", without being evaluated:
//
//   - a percentile, max or mean of a latency object whose count is 0 (a map
//     key that is absent, such as a channel nothing was delivered on, counts);
//   - a delivery count (and idempotency.duplicate_deliveries) when delivery is
//     not measured (delivery: none);
//   - delivery.received, .lost and .late when no message was accepted (there
//     was nothing to deliver or lose);
//   - requests.error_rate when no request was made, requests.achieved_rate
//     when no message was sent;
//   - idempotency.mismatches when no resend was answered with an id to
//     compare with its message's first (idempotency.compared 0): a scenario
//     with no probes and no retry answered 2xx tested nothing;
//   - rate_limit.excess_accepted and .max_accepted_per_window when the run
//     knows no limit window (no limit: in the scenario): nothing was counted;
//   - rate_limit.retry_after.missing, .invalid, .too_short and .too_long
//     when no request was refused 429 (a Retry-After is a 429's);
//   - the counts over the sink's events (delivery.duplicates, .malformed,
//     .unauthorized, .unmatched, idempotency.duplicate_deliveries) when
//     delivery is via the sink and it logged no event at all.
//
// A latency figure that is only a lower bound (p95_at_least: its rank falls
// among the messages with no final status by the end of the wait) fails
// every threshold that reads it, whatever the comparison (lowerBound): the
// safe rule. `p95 < X` cannot be known to hold; `p95 > X` could be, when the
// bound already exceeds X, but such a threshold is not judged on a bound.

// noData says why the figure at path p has no data in s, or "".
func (s *Summary) noData(p []any) string {
	if len(p) == 0 {
		return ""
	}
	if why := s.missingRaw(p); why != "" {
		return why
	}
	if why := summary.Unmeasured(p, s.Delivery.Via); why != "" {
		return why
	}
	if why := s.driftNoData(p); why != "" {
		return why
	}
	if len(p) == 2 && p[0] == "delivery" || len(p) == 2 && p[0] == "idempotency" && p[1] == "duplicate_deliveries" {
		name, _ := p[1].(string)
		counted := name == "duplicate_deliveries"
		for _, k := range deliveryCounts {
			counted = counted || k == name
		}
		switch {
		case counted && !s.Delivery.Measured:
			return "delivery is not measured (delivery: " + s.Delivery.Via + ")"
		case p[0] == "delivery" && (name == "received" || name == "lost" || name == "late") && s.Delivery.Expected == 0:
			return "no message was accepted, so none could be delivered or lost"
		}
	}
	if why := s.noEvents(p); why != "" {
		return why
	}
	if len(p) == 2 && p[0] == "rate_limit" && (p[1] == "excess_accepted" || p[1] == "max_accepted_per_window") && s.RateLimit.Window <= 0 {
		return "the run knows no rate limit (limit: in the scenario) to count the accepted against"
	}
	if len(p) == 3 && p[0] == "rate_limit" && p[1] == "retry_after" && s.RateLimit.Rejected429 == 0 {
		if name, _ := p[2].(string); name == "missing" || name == "invalid" || name == "too_short" || name == "too_long" {
			return "no request was refused 429, so no Retry-After could be checked"
		}
	}
	if len(p) == 2 && p[0] == "idempotency" && p[1] == "mismatches" && !s.Idempotency.MismatchesMeasured() {
		return "no resend was answered with an id to compare (idempotency.compared 0: " + Plural(s.Idempotency.Probes, "probe") + " sent; idempotency: { probes: N% } in the scenario resends under the same key)"
	}
	if len(p) == 2 && p[0] == "requests" && p[1] == "error_rate" && s.Requests.Total == 0 {
		return "no request was made"
	}
	if len(p) == 2 && p[0] == "requests" && p[1] == "achieved_rate" && s.Requests.Messages == 0 {
		return "no message was sent"
	}
	if pv, name, ok := s.latencyAt(p); ok && summary.LatencyFigure[name] && pv.Count == 0 {
		return "nothing was recorded (count 0)"
	}
	return ""
}

// eventCounts are the figures counted over the sink's events: with no
// event at all none of them could be observed.
var eventCounts = map[[2]string]bool{
	{"delivery", "duplicates"}: true, {"delivery", "malformed"}: true, {"delivery", "unauthorized"}: true,
	{"delivery", "unmatched"}: true, {"idempotency", "duplicate_deliveries"}: true,
}

// noEvents says why a figure counted over the sink's events has no data: a
// run with delivery via the sink whose sink logged no event at all (the
// service sent nothing, or could not reach it). delivery.duplicates == 0
// passed on such a run, every message lost.
func (s *Summary) noEvents(p []any) string {
	if len(p) != 2 || s.Delivery.Via != "sink" || !s.Delivery.Measured || s.Delivery.Events > 0 {
		return ""
	}
	a, _ := p[0].(string)
	b, _ := p[1].(string)
	if !eventCounts[[2]string{a, b}] {
		return ""
	}
	return "the sink logged no event at all (delivery.events 0): no callback came, so none could be observed"
}

// lowerBound says why the latency figure at path p (label, as written) is
// only a lower bound in s (a percentile whose rank falls among the messages
// without a final status, a max or mean with any such message), or "" when
// it is not.
func (s *Summary) lowerBound(p []any, label string) string {
	if pv, name, ok := s.latencyAt(p); ok && summary.LatencyFigure[name] && pv.Count > 0 {
		return pv.LowerBoundWhy(name, label)
	}
	return ""
}

// latencyAt returns the latency object whose figure name the path p reads
// (delivery.latency.p95: delivery.latency and "p95"), when p ends in one.
func (s *Summary) latencyAt(p []any) (percentiles, string, bool) {
	v := reflect.ValueOf(s.Summary)
	for i, e := range p {
		if v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return percentiles{}, "", false // evaluation reports it
			}
			v = v.Elem()
		}
		if v.Type() == reflect.TypeFor[percentiles]() && i == len(p)-1 {
			name, _ := e.(string)
			return v.Interface().(percentiles), name, true
		}
		switch v.Kind() {
		case reflect.Struct:
			name, _ := e.(string)
			f, ok := fieldByExpr(v.Type(), name)
			if !ok {
				return percentiles{}, "", false
			}
			v = v.Field(f)
		case reflect.Map:
			key, ok := e.(string)
			if !ok || v.Type().Key().Kind() != reflect.String {
				return percentiles{}, "", false
			}
			mv := v.MapIndex(reflect.ValueOf(key).Convert(v.Type().Key()))
			if !mv.IsValid() {
				mv = reflect.Zero(v.Type().Elem()) // an absent key reads as zero
			}
			v = mv
		case reflect.Slice, reflect.Array:
			idx, ok := e.(int)
			if idx < 0 {
				idx += v.Len()
			}
			if !ok || idx < 0 || idx >= v.Len() {
				return percentiles{}, "", false
			}
			v = v.Index(idx)
		default:
			return percentiles{}, "", false
		}
	}
	return percentiles{}, "", false
}

func fieldByExpr(t reflect.Type, name string) (int, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("expr")
		if tag == "" {
			tag = f.Name
		}
		if tag == name {
			return i, true
		}
	}
	return 0, false
}
