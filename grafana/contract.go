package grafana

import (
	"errors"
	"fmt"
	"sort"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Metric types of contractMetrics.
const (
	counter   = "counter"
	gauge     = "gauge"
	histogram = "histogram"
)

// contractMetrics is the list of metric names the dashboards are built on
// (DESIGN.md "Metrics" and the task contract), with their types. The tests
// check dashboards against the metrics the packages really register; this list
// is what they must register at least.
var contractMetrics = map[string]string{
	// attack
	"msgload_requests_total":               counter,
	"msgload_request_duration_seconds":     histogram,
	"msgload_messages_sent_total":          counter,
	"msgload_retries_total":                counter,
	"msgload_rate_limited_total":           counter,
	"msgload_requests_in_flight":           gauge,
	"msgload_planned_requests_per_second":  gauge,
	"msgload_late_starts_total":            counter,
	"msgload_send_lag_seconds":             histogram,
	"msgload_idempotency_probes_total":     counter,
	"msgload_idempotency_mismatches_total": counter,
	"msgload_retry_after_seconds":          histogram,
	"msgload_token_requests_total":         counter,
	"msgload_run_info":                     gauge,
	"msgload_run_start_timestamp_seconds":  gauge,
	"msgload_run_end_timestamp_seconds":    gauge,
	"msgload_run_disk_free_bytes":          gauge, // harness: the run directory's disk
	"msgload_run_disk_reserve_bytes":       gauge,
	// sink
	"msgload_sink_events_total":                counter,
	"msgload_delivery_latency_seconds":         histogram,
	"msgload_sink_duplicates_total":            counter,
	"msgload_sink_unmatched_total":             counter,
	"msgload_sink_malformed_total":             counter,
	"msgload_sink_unauthorized_total":          counter,
	"msgload_sink_refused_total":               counter,
	"msgload_sink_write_errors_total":          counter,
	"msgload_sink_incoming_total":              counter,
	"msgload_sink_failover_steps_total":        counter,
	"msgload_sink_log_write_duration_seconds":  histogram,
	"msgload_sink_log_batch_size":              histogram,
	"msgload_sink_correlation_evictions_total": counter, // added by sink beyond the contract
	// sim
	"msgload_sim_requests_total":            counter,
	"msgload_sim_request_duration_seconds":  histogram,
	"msgload_sim_rate_limited_total":        counter,
	"msgload_sim_messages_accepted_total":   counter,
	"msgload_sim_deliveries_pending":        gauge,
	"msgload_sim_status_changes_total":      counter,
	"msgload_sim_callbacks_total":           counter,
	"msgload_sim_callback_duration_seconds": histogram,
	"msgload_sim_faults_total":              counter,
	"msgload_sim_idempotent_replays_total":  counter,
	"msgload_sim_tokens_issued_total":       counter,
}

// errNoMetricName is returned for a selector that names no metric: every
// dashboard query must say which metric it reads.
var errNoMetricName = errors.New("selector without a metric name")

// seriesNames lists the series names a set of metric families exposes to
// Prometheus: a histogram adds _bucket, _sum and _count (and keeps its own
// name for native histograms). Values are the family names.
func seriesNames(types map[string]string) map[string]string {
	out := map[string]string{}
	for name, typ := range types {
		out[name] = name
		if typ == histogram {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				out[name+s] = name
			}
		}
	}
	return out
}

// metricNames parses a PromQL expression and lists the metric names its
// selectors read, sorted and without repeats.
func metricNames(expr string) ([]string, error) {
	e, err := parser.ParseExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", expr, err)
	}
	seen := map[string]bool{}
	var bad error
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		if name == "" {
			for _, m := range vs.LabelMatchers {
				if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
					name = m.Value
				}
			}
		}
		if name == "" {
			bad = fmt.Errorf("%w: %s", errNoMetricName, vs.String())
			return nil
		}
		seen[name] = true
		return nil
	})
	if bad != nil {
		return nil, bad
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}
