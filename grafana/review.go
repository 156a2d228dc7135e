package grafana

import (
	"fmt"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// boundedLabels are the label names msgload metrics may carry (DESIGN.md
// "Metrics"): each takes a bounded set of values. No URL, no error text.
var boundedLabels = map[string]bool{
	"api": true, "operation": true, "code": true, "client": true, "channel": true,
	"state": true, "kind": true, "result": true, "fault": true, "route": true,
	"reason": true, "from": true, "to": true, "run_id": true, "scenario": true,
	"part": true, // the harness labels each part of a multi-part scenario
	// msgload_run_info's shard of a sharded run: I/N, as many values as the
	// run has shards.
	"shard": true,
}

// reviewFamilies checks gathered metric families against the conventions
// promlint does not know: the msgload_ prefix, labels from boundedLabels only,
// and latency histograms (names ending _seconds) with classic buckets and a
// native schema, so both kinds of Prometheus get a distribution. It returns one
// line per problem.
func reviewFamilies(mfs []*dto.MetricFamily) []string {
	var out []string
	for _, mf := range mfs {
		name := mf.GetName()
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") || strings.HasPrefix(name, "promhttp_") {
			continue
		}
		if !strings.HasPrefix(name, "msgload_") {
			out = append(out, fmt.Sprintf("%s: name without the msgload_ prefix", name))
		}
		seen := map[string]bool{}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if !boundedLabels[l.GetName()] && !seen[l.GetName()] {
					seen[l.GetName()] = true
					out = append(out, fmt.Sprintf("%s: label %q is not one of the bounded labels", name, l.GetName()))
				}
			}
			if mf.GetType() == dto.MetricType_HISTOGRAM && strings.HasSuffix(name, "_seconds") {
				h := m.GetHistogram()
				if len(h.GetBucket()) == 0 {
					out = append(out, fmt.Sprintf("%s: latency histogram without classic buckets", name))
				}
				if h.Schema == nil {
					out = append(out, fmt.Sprintf("%s: latency histogram without native buckets (NativeHistogramBucketFactor)", name))
				}
			}
		}
	}
	return out
}
