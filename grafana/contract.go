package grafana

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Metric types of ContractMetrics.
const (
	Counter   = "counter"
	Gauge     = "gauge"
	Histogram = "histogram"
)

// ContractMetrics is the list of metric names the dashboards are built on
// (DESIGN.md "Metrics" and the task contract), with their types. The tests
// check dashboards against the metrics the packages really register; this list
// is what they must register at least.
var ContractMetrics = map[string]string{
	// attack
	"msgload_requests_total":               Counter,
	"msgload_request_duration_seconds":     Histogram,
	"msgload_messages_sent_total":          Counter,
	"msgload_retries_total":                Counter,
	"msgload_rate_limited_total":           Counter,
	"msgload_requests_in_flight":           Gauge,
	"msgload_planned_requests_per_second":  Gauge,
	"msgload_late_starts_total":            Counter,
	"msgload_send_lag_seconds":             Histogram,
	"msgload_idempotency_probes_total":     Counter,
	"msgload_idempotency_mismatches_total": Counter,
	"msgload_retry_after_seconds":          Histogram,
	"msgload_token_requests_total":         Counter,
	"msgload_run_info":                     Gauge,
	"msgload_run_start_timestamp_seconds":  Gauge,
	"msgload_run_end_timestamp_seconds":    Gauge,
	// sink
	"msgload_sink_events_total":                Counter,
	"msgload_delivery_latency_seconds":         Histogram,
	"msgload_sink_duplicates_total":            Counter,
	"msgload_sink_unmatched_total":             Counter,
	"msgload_sink_malformed_total":             Counter,
	"msgload_sink_unauthorized_total":          Counter,
	"msgload_sink_refused_total":               Counter,
	"msgload_sink_incoming_total":              Counter,
	"msgload_sink_failover_steps_total":        Counter,
	"msgload_sink_log_write_duration_seconds":  Histogram,
	"msgload_sink_log_batch_size":              Histogram,
	"msgload_sink_correlation_evictions_total": Counter, // added by sink beyond the contract
	// sim
	"msgload_sim_requests_total":            Counter,
	"msgload_sim_request_duration_seconds":  Histogram,
	"msgload_sim_rate_limited_total":        Counter,
	"msgload_sim_messages_accepted_total":   Counter,
	"msgload_sim_deliveries_pending":        Gauge,
	"msgload_sim_status_changes_total":      Counter,
	"msgload_sim_callbacks_total":           Counter,
	"msgload_sim_callback_duration_seconds": Histogram,
	"msgload_sim_faults_total":              Counter,
	"msgload_sim_idempotent_replays_total":  Counter,
	"msgload_sim_tokens_issued_total":       Counter,
}

// ErrNoMetricName is returned for a selector that names no metric: every
// dashboard query must say which metric it reads.
var ErrNoMetricName = errors.New("selector without a metric name")

// SeriesNames lists the series names a set of metric families exposes to
// Prometheus: a histogram adds _bucket, _sum and _count (and keeps its own
// name for native histograms). Values are the family names.
func SeriesNames(types map[string]string) map[string]string {
	out := map[string]string{}
	for name, typ := range types {
		out[name] = name
		if typ == Histogram {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				out[name+s] = name
			}
		}
	}
	return out
}

// FamilyTypes turns gathered metric families into name → type.
func FamilyTypes(mfs []*dto.MetricFamily) map[string]string {
	out := map[string]string{}
	for _, mf := range mfs {
		t := strings.ToLower(mf.GetType().String())
		if t == "gauge_histogram" {
			t = Histogram
		}
		out[mf.GetName()] = t
	}
	return out
}

// MetricNames parses a PromQL expression and lists the metric names its
// selectors read, sorted and without repeats.
func MetricNames(expr string) ([]string, error) {
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
			bad = fmt.Errorf("%w: %s", ErrNoMetricName, vs.String())
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
