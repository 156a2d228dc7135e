package render

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// chartSpecs are the charts that apply to the run, in the page's order: a
// chart with nothing to say about the run is not drawn.
func (s view) chartSpecs() []chartSpec {
	c := s.Charts()
	if c == nil {
		c = &reports.ChartSeries{}
	}
	xs := c.Buckets
	toLine := func(name string, ys []float64) line {
		l := line{name: name}
		for i, v := range ys {
			if i < len(xs) {
				l.pts = append(l.pts, [2]float64{xs[i], v})
			}
		}
		return l
	}
	bounds := s.latencyBounds()
	var out []chartSpec
	if len(xs) > 0 && len(c.Codes) > 0 {
		var codes []line
		for _, k := range sortedKeys(c.Codes) {
			codes = append(codes, toLine(k, c.Codes[k]))
		}
		out = append(out, chartSpec{id: "chart-rate", title: "Requests per second by answer", xlabel: "seconds since start", ylabel: "requests/s",
			xunit: unitCount, yunit: unitCount, lines: codes})
		lat := []line{toLine("p50", c.LatP50), toLine("p95", c.LatP95), toLine("p99", c.LatP99)}
		var marks []chartMark
		for _, b := range bounds {
			if b.figure == "requests.latency" {
				marks = append(marks, chartMark{at: b.at, label: "threshold " + b.stat + " < " + b.lit})
			}
		}
		out = append(out, chartSpec{id: "chart-latency", title: "Request latency percentiles over time", xlabel: "seconds since start", ylabel: "latency",
			xunit: unitCount, yunit: unitSeconds, lines: lat, marks: marks, note: latencyGapNote(c.LatCensored)})
	}
	// The sliding window only tells something of a limit that refused or was exceeded.
	if c.Limit > 0 && len(c.Window) > 0 && (s.RateLimit.Rejected429 > 0 || s.RateLimit.ExcessAccepted > 0) {
		var win []line
		for _, k := range sortedKeys(c.Window) {
			win = append(win, line{name: k, pts: c.Window[k]})
		}
		out = append(out, chartSpec{id: "chart-window", title: "Accepted per sliding window, per client", xlabel: "seconds since start", ylabel: "accepted in window",
			xunit: unitCount, yunit: unitCount, lines: win, marks: []chartMark{{at: c.Limit, label: "limit " + num(c.Limit), limit: true}}})
	}
	if s.Delivery.Measured && len(c.DeliveryCDF) > 0 {
		var cdf []line
		for _, k := range sortedKeys(c.DeliveryCDF) {
			cdf = append(cdf, line{name: s.channelLabel(k), pts: c.DeliveryCDF[k]})
		}
		var marks []chartMark
		for _, b := range bounds {
			switch b.figure {
			case "delivery.latency":
				marks = append(marks, chartMark{at: b.at, vertical: true, label: "threshold " + b.stat + " < " + b.lit})
			case "delivery.by_channel":
				marks = append(marks, chartMark{at: b.at, vertical: true, label: b.channel + " " + b.stat + " < " + b.lit})
			}
		}
		out = append(out, chartSpec{id: "chart-delivery", title: "Delivery latency distribution per channel (cumulative)", xlabel: "latency", ylabel: "share delivered",
			xunit: unitSeconds, yunit: unitShare, lines: cdf, marks: marks})
	}
	if s.Delivery.Measured && s.Run.DeliveryVia == "sink" && len(c.Events) > 0 && len(xs) > 0 {
		var ev []line
		for _, k := range sortedKeys(c.Events) {
			ev = append(ev, toLine(k, c.Events[k]))
		}
		out = append(out, chartSpec{id: "chart-events", title: "Callbacks and webhooks per second", xlabel: "seconds since start", ylabel: "events/s",
			xunit: unitCount, yunit: unitCount, lines: ev})
	}
	// The funnel is a cascade's: a chain of more than one channel that delivered something.
	if c.Chain > 1 && funnelHasData(c.Funnel) {
		out = append(out, chartSpec{id: "chart-funnel", title: "Failover funnel: messages reaching each channel", isFunnel: true, funnel: c.Funnel})
	}
	return out
}

// latencyGapNote says what a gap in the request latency chart means when
// some are not for want of requests: n points whose rank fell among
// requests with no answer (reports.ChartSeries.LatCensored), "" when none.
func latencyGapNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("A gap means no requests, or a percentile among requests with no answer, whose latency is unknown (%s).", plural(int64(n), "point"))
}

func funnelHasData(f []funnelStage) bool {
	for _, st := range f {
		if st.Reached > 0 || st.Terminal > 0 {
			return true
		}
	}
	return false
}

// writeChartLinks shows in report.md the SVG file of each chart that applies,
// written beside it by WriteFiles (a whole run's report.md reaches a part's
// through partChartLinks).
func (s view) writeChartLinks(b *strings.Builder) {
	specs := s.chartSpecs()
	if len(specs) == 0 {
		return
	}
	b.WriteString("\n### Charts\n\n")
	for _, c := range specs {
		fmt.Fprintf(b, "![%s](%s)\n\n", mdEscape(c.title), rundir.ChartFile(c.id))
		if c.note != "" {
			fmt.Fprintf(b, "%s\n\n", mdEscape(c.note))
		}
	}
}

// partChartLinks points the chart links of a part's report.md, written for
// its own directory, at that directory from the whole run's.
func partChartLinks(md, partDir string) string {
	return strings.ReplaceAll(md, "](chart-", "]("+filepath.Base(partDir)+"/chart-")
}
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
