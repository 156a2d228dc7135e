package reports

import (
	"io/fs"
	"os"
	"strings"

	"github.com/msgload/msgload/rundir"
)

// The sends alone (issue 23). The figures of what the run sent — requests.*,
// rate_limit.*, idempotency.* but duplicate_deliveries — come from
// attempts.jsonl and run.json only (missingRaw names what comes from the
// other files); a run with callbacks has twice as many bytes of events as of
// attempts, and an analysis reads them all again each time. AnalyzeSends is
// Analyze with the sink's events.jsonl and the simulator's truth hidden, as
// a run directory that lacked them would read (maskFS): the same analysis,
// the same figures of the sends, from a third of the bytes. The live loop
// judges an abortOnFail threshold on the sends with it (harness/livechild.go)
// so that its judgement, and the stop, come sooner in a long soak; the
// delivery figures of such an analysis say their file is missing, and the
// summary is shown to nobody.

// sendsHidden are the files AnalyzeSends does not read.
var sendsHidden = map[string]bool{rundir.EventsFile: true, rundir.TruthStreamFile: true, rundir.TruthFile: true}

// AnalyzeSends is Analyze of the run directory's sends alone: every figure
// that fromSends says comes from them is the one Analyze gives.
func AnalyzeSends(dir string) (*Summary, error) {
	return AnalyzeFS(maskFS{os.DirFS(dir), sendsHidden}, dir)
}

// AnalyzeSendsCounting is AnalyzeSends stopped after the pass of a bounded
// analysis that counts (stream.go: the census, then the analysis whose hists
// only count; the third pass, which keeps the values of the buckets holding
// each wanted rank and checks the ids answered twice, is not read). Its
// summary has every figure of the sends that pass gives exactly (every
// count, share, max and mean), each percentile's span (summary.Spans: the
// bucket holding its rank; its value NaN) and no id collision
// (TestCountingPassFigures): it is for a live judgement of thresholds that
// read only those (LiveThreshold.Counted), at two passes' cost instead of
// three — the judgement comes sooner in a long soak. A run small enough to
// be read once, or not analysed in passes, gets the whole analysis.
func AnalyzeSendsCounting(dir string) (*Summary, error) {
	return analyzeCounting(maskFS{os.DirFS(dir), sendsHidden}, dir)
}

// AnalyzeCounting is AnalyzeSendsCounting of the sends and the sink's
// events, the simulator's truth alone hidden: the figures of both that the
// counting pass gives (delivery's counts among them), for a live judgement
// of a threshold on delivery.duplicates, delivery.malformed or
// delivery.unauthorized that the carried analysis does not judge.
func AnalyzeCounting(dir string) (*Summary, error) {
	return analyzeCounting(maskFS{os.DirFS(dir), eventsHidden}, dir)
}

// analyzeCounting is the counting pass of the run in fsys (above).
func analyzeCounting(fsys fs.FS, dir string) (*Summary, error) {
	if !twoPasses(fsys) || readOnce(fsys, nil) {
		return AnalyzeFS(fsys, dir)
	}
	a, err := analyzeBounded(fsys, dir, nil, true)
	if err != nil {
		return nil, err
	}
	return a.s, nil
}

// Counted says whether the counting pass (AnalyzeSendsCounting) gives the
// figure at path p: exactly, or for a percentile (p50, p90, p95, p99) its
// span, at whose every value a live threshold is judged (spans.go). Not
// given: a percentile's lower bound as written (_at_least), a drift slope
// (its windows' percentiles), idempotency.id_collisions (the ids answered
// twice are checked in the third pass).
func Counted(p []any) bool {
	if len(p) == 0 {
		return false
	}
	last, _ := p[len(p)-1].(string)
	switch {
	case strings.HasSuffix(last, "_at_least"), strings.HasSuffix(last, "_slope"),
		len(p) == 2 && p[0] == "idempotency" && last == "id_collisions":
		return false
	}
	return true
}

// fromEvents says whether the figure at path p comes from the sink's
// events.jsonl.
func fromEvents(p []any) bool {
	head, _ := p[0].(string)
	return head == "delivery" || head == "outcomes" || head == "incoming" ||
		head == "idempotency" && len(p) > 1 && p[1] == "duplicate_deliveries"
}

// fromTruth says whether the figure at path p comes from the simulator's
// truth.
func fromTruth(p []any) bool {
	head, _ := p[0].(string)
	return head == "truth"
}

// fromSends says whether the figure at path p comes from the records of the
// sends alone (AnalyzeSends): those of requests, rate_limit and idempotency
// but the sink's duplicate_deliveries.
func fromSends(p []any) bool {
	if len(p) == 0 || fromEvents(p) {
		return false
	}
	head, _ := p[0].(string)
	return head == "requests" || head == "rate_limit" || head == "idempotency"
}
