package reports

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// The summary.json types are package summary's, the contract that scenario
// validation and CI scripts read without linking the analysis or the
// writers; reports names them as before, so the analysis and the writers read
// unchanged.
type (
	runInfo      = summary.RunInfo
	percentiles  = summary.Percentiles
	rateLimit    = summary.RateLimit
	clientLimit  = summary.ClientLimit
	retryAfter   = summary.RetryAfter
	headers      = summary.Headers
	algorithm    = summary.Algorithm
	failover     = summary.Failover
	funnelStage  = summary.FunnelStage
	failoverStep = summary.FailoverStep
	incoming     = summary.Incoming
	truthReport  = summary.TruthReport
	truthStep    = summary.TruthStep
	truthWindow  = summary.TruthWindow
	outcomes     = summary.Outcomes
	drift        = summary.Drift
	opFigure     = summary.OpFigure
	errorRow     = summary.ErrorRow
	compiled     = summary.Compiled

	// Requests is summary.Requests.
	Requests = summary.Requests
	// Idempotency is summary.Idempotency.
	Idempotency = summary.Idempotency
	// Delivery is summary.Delivery.
	Delivery = summary.Delivery
	// Threshold is summary.Threshold.
	Threshold = summary.Threshold
	// Reason is summary.Reason.
	Reason = summary.Reason
)

const (
	schemaVersion = summary.SchemaVersion
	noData        = summary.NoData
	notMeasured   = summary.NotMeasured
)

var (
	dur            = summary.Dur
	showRate       = summary.ShowRate
	deliveryCounts = summary.DeliveryCounts
)

// errBadSummary means a summary.json could not be read as a summary.
var errBadSummary = errors.New("bad summary")

// Summary is a run's summary.json (summary.Summary, the figures) with what
// the analysis and the writers keep beside it while a report is built.
type Summary struct {
	summary.Summary

	// Whole is the whole run's summary when this summary.json was of kind
	// run (a run with parts): only Verdict, VerdictReasons, ok and a few Run
	// fields are then filled here.
	Whole *RunSummary `json:"-" expr:"-"`

	charts         *charts   // time series for report.html; not part of summary.json
	thresholdExprs []string  // from run.json
	problems       []string  // raw files missing or unreadable: the verdict is error
	early          []Reason  // reasons found while reading (a shard killed or missing, a run with no end), with whose they are
	sinkDoubt      string    // the sink's log is doubtful and messages have no final status: what sinkLogReason said (storage.go)
	missing        []string  // the raw files behind problems: their figures have no data (nodata.go)
	memoryNoData   string    // why drift.memory_slope is null in a run long enough for drift (targetmem.go)
	dir            string    // the run directory it was read from, for the reasons' commands
	ops            opsRec    // the errors table's index while the attempts are read (ops.go)
	baseline       *baseline // the comparison against --baseline, for the card and compare.json (baseline.go)
}

// OK reports whether the verdict is pass: every threshold held on figures that
// have data, messages were sent and accepted, the run was complete and its raw
// files were there. A summary without a verdict is not OK.
func (s *Summary) OK() bool { return s.Verdict == VerdictPass }

// ReadSummary reads a summary.json.
func ReadSummary(path string) (*Summary, error) {
	b, err := rundir.ReadFile(path, rundir.MaxDocBytes)
	if err != nil {
		return nil, fmt.Errorf("read summary: %w", err)
	}
	s, err := parseSummary(b)
	if err != nil {
		return nil, fmt.Errorf("read summary %q: %w", path, err)
	}
	return s, nil
}

// parseSummary decodes a summary.json body.
func parseSummary(b []byte) (*Summary, error) {
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		var kind struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(b, &kind) != nil || kind.Kind != KindRun {
			return nil, fmt.Errorf("%w: %v", errBadSummary, err)
		}
	}
	if s.Schema == 0 {
		return nil, fmt.Errorf("%w: no schema version (not a msgload summary.json?)", errBadSummary)
	}
	if s.Schema > schemaVersion {
		return nil, fmt.Errorf("%w: schema %d is newer than this msgload (%d)", errBadSummary, s.Schema, schemaVersion)
	}
	if s.Kind == KindRun {
		return parseRunSummary(b)
	}
	if s.Verdict == "" { // schema 1: ok meant "every threshold held"
		switch {
		case s.Run.Interrupted:
			s.Verdict = VerdictIncomplete
		case s.Passed:
			s.Verdict = VerdictPass
		default:
			s.Verdict = verdictFail
		}
		s.VerdictReasons = []string{"summary.json of schema 1 has no verdict: read from ok and run.interrupted"}
	}
	s.Passed = s.Verdict == VerdictPass
	return &s, nil
}

// JSON is s as summary.json holds it: indented, ending in a newline.
func (s *Summary) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
