package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// Kinds of summary.json: a part's (every run without parts is one part) and a
// whole run's, at the top of a run with parts.
const (
	kindPart = "part"
	KindRun  = "run"
)

// RunSummary is the summary.json at the top of a run with parts: the whole
// run's verdict (the worst part's), every part's verdict and key figures, and
// the totals over the parts. Documented in README.md ("The whole run").
type RunSummary struct {
	Schema         int          `json:"schema"`
	Kind           string       `json:"kind"` // KindRun
	Passed         bool         `json:"ok"`   // Verdict == "pass"
	Verdict        string       `json:"verdict"`
	VerdictReasons []string     `json:"verdict_reasons"` // every part's, "<part>: <reason>"
	Reasons        []Reason     `json:"reasons"`         // the same, whose each is and what to do (Summary.Reasons)
	Run            wholeRunInfo `json:"run"`
	Parts          []partResult `json:"parts"`
	Totals         totals       `json:"totals"`

	summaries []*Summary // the parts' summaries, nil for a part without one
}

// wholeRunInfo is what the whole run is: its id, scenario and build, the
// earliest start and latest end of its parts.
type wholeRunInfo struct {
	ID          string `json:"id"`
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version"`
	Commit      string `json:"commit,omitempty"`
	CommitTime  string `json:"commit_time,omitempty"`
	Host        string `json:"host,omitempty"`
	Start       string `json:"start,omitempty"`
	End         string `json:"end,omitempty"`
	Interrupted bool   `json:"interrupted"`
}

// partResult is one part of the whole run: its verdict and key figures.
type partResult struct {
	Name             string      `json:"name"`
	Dir              string      `json:"dir"` // relative to the run directory
	API              string      `json:"api"`
	Verdict          string      `json:"verdict"`
	VerdictReasons   []string    `json:"verdict_reasons"`
	Reasons          []Reason    `json:"reasons"`
	Requests         int64       `json:"requests"`
	ErrorRate        *float64    `json:"error_rate"` // null: no request was made
	RequestLatency   percentiles `json:"request_latency"`
	DeliveryLatency  percentiles `json:"delivery_latency"`
	Outcomes         outcomes    `json:"outcomes"`
	Thresholds       int         `json:"thresholds"`
	ThresholdsFailed int         `json:"thresholds_failed"`
}

// totals are sums over the parts that have a summary.
type totals struct {
	Requests         int64    `json:"requests"`
	Outcomes         outcomes `json:"outcomes"`
	Thresholds       int      `json:"thresholds"`
	ThresholdsFailed int      `json:"thresholds_failed"`
	PartsPassed      int      `json:"parts_passed"`
	Parts            int      `json:"parts"`
}

// PartInput is one part handed to BuildRun: its directory and its summary, or
// why it has none.
type PartInput struct {
	Name    string
	Dir     string
	Summary *Summary // nil when the part has no report
	Err     error    // why, when Summary is nil
}

// NewRunSummary puts the parts of a run together: the whole verdict is the
// worst part verdict; a part without a summary is incomplete when the run was
// interrupted and error otherwise.
func NewRunSummary(dir string, parts []PartInput, interrupted bool) *RunSummary {
	w := &RunSummary{Schema: schemaVersion, Kind: KindRun, VerdictReasons: []string{}, Reasons: []Reason{}, Parts: []partResult{}}
	w.Run.Interrupted = interrupted
	w.Totals.Outcomes.ByState, w.Totals.Outcomes.Refused = map[string]int64{}, map[string]int64{}
	w.Totals.Outcomes.Measured = true
	name, desc, _ := scenarioName(dir)
	w.Run.Scenario, w.Run.Description = name, desc
	var vs []string
	for _, p := range parts {
		rel, err := filepath.Rel(dir, p.Dir)
		if err != nil {
			rel = p.Dir
		}
		pr := partResult{Name: p.Name, Dir: filepath.ToSlash(rel), VerdictReasons: []string{}, Reasons: []Reason{}}
		s := p.Summary
		w.summaries = append(w.summaries, s)
		w.Totals.Parts++
		if s == nil {
			pr.Verdict = NoReportVerdict(interrupted)
			why := "the part has no report"
			if p.Err != nil {
				why = "the part could not finish: " + p.Err.Error()
			}
			pr.VerdictReasons = append(pr.VerdictReasons, why)
			pr.Reasons = append(pr.Reasons, reason(WhoseEnvironment, pr.Verdict, why, "see the part's log, and run again"))
		} else {
			pr.API, pr.Verdict, pr.VerdictReasons = s.Run.API, s.Verdict, append(pr.VerdictReasons, s.VerdictReasons...)
			pr.Reasons = append(pr.Reasons, s.ReasonList()...)
			pr.Requests = s.Requests.Total
			if s.Requests.Total > 0 {
				pr.ErrorRate = &s.Requests.ErrorRate
			}
			pr.RequestLatency, pr.DeliveryLatency, pr.Outcomes = s.Requests.Latency, s.Delivery.Latency, s.Outcomes
			for _, t := range s.Thresholds {
				pr.Thresholds++
				if !t.OK {
					pr.ThresholdsFailed++
				}
			}
			w.addTotals(s, pr)
			w.takeRunInfo(s)
		}
		if pr.Verdict == VerdictPass {
			w.Totals.PartsPassed++
		}
		for _, r := range pr.VerdictReasons {
			w.VerdictReasons = append(w.VerdictReasons, p.Name+": "+r)
		}
		for _, r := range pr.Reasons {
			r.Text = p.Name + ": " + r.Text
			w.Reasons = append(w.Reasons, r)
		}
		vs = append(vs, pr.Verdict)
		w.Parts = append(w.Parts, pr)
	}
	w.Verdict = WorstVerdict(vs...)
	if len(parts) == 0 {
		w.VerdictReasons = append(w.VerdictReasons, "the run has no part")
	}
	w.Passed = w.Verdict == VerdictPass
	return w
}

// NoReportVerdict is the verdict of a part (or shard) that has no report:
// incomplete when the run was interrupted, error otherwise (an environment
// reason either way). The whole run's summary and the harness's result judge
// such a part by it.
func NoReportVerdict(interrupted bool) string {
	if interrupted {
		return VerdictIncomplete
	}
	return VerdictError
}

func (w *RunSummary) addTotals(s *Summary, pr partResult) {
	t := &w.Totals
	t.Requests += s.Requests.Total
	t.Thresholds += pr.Thresholds
	t.ThresholdsFailed += pr.ThresholdsFailed
	t.Outcomes.Add(s.Outcomes)
	if !s.Delivery.Measured {
		t.Outcomes.Measured = false
	}
}

// takeRunInfo fills what the whole run is from a part: the same id and build,
// the earliest start and latest end (RFC 3339 UTC strings sort by time).
func (w *RunSummary) takeRunInfo(s *Summary) {
	r, pr := &w.Run, s.Run
	if r.ID == "" {
		r.ID, r.Version, r.Commit, r.CommitTime, r.Host = pr.ID, pr.Version, pr.Commit, pr.CommitTime, pr.Host
	}
	if pr.Start != "" && (r.Start == "" || pr.Start < r.Start) {
		r.Start = pr.Start
	}
	if pr.End != "" && pr.End > r.End {
		r.End = pr.End
	}
	r.Interrupted = r.Interrupted || pr.Interrupted
}

// scenarioName reads the name and description of the resolved scenario at the
// top of a run directory.
func scenarioName(dir string) (name, desc string, parts []string) {
	b, err := rundir.ReadFile(filepath.Join(dir, rundir.ScenarioFile), rundir.MaxDocBytes)
	if err != nil {
		return filepath.Base(dir), "", nil
	}
	var v struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Parts       []struct {
			Name string `yaml:"name"`
		} `yaml:"parts"`
	}
	if yaml.Unmarshal(b, &v) != nil || v.Name == "" {
		return filepath.Base(dir), "", nil
	}
	for _, p := range v.Parts {
		parts = append(parts, p.Name)
	}
	return v.Name, v.Description, parts
}

// OK reports whether the whole verdict is pass.
func (w *RunSummary) OK() bool { return w.Verdict == VerdictPass }

// Line is the one line `msgload run` ends with: "smoke: PASS (2 of 2 parts) — runs/<id>/report.html".
func (w *RunSummary) Line(dir string) string {
	return fmt.Sprintf("%s: %s (%d of %d parts) — %s", w.Run.Scenario, strings.ToUpper(w.Verdict), w.Totals.PartsPassed, w.Totals.Parts,
		filepath.Join(dir, rundir.HTMLFile))
}

// Line is the one line `msgload run` ends with for a run without parts:
// "notify-respect-limit: PASS — runs/<id>/report.html".
func (s *Summary) Line(dir string) string {
	return fmt.Sprintf("%s: %s — %s", s.Run.Scenario, s.VerdictWord(), filepath.Join(dir, rundir.HTMLFile))
}

// PartDirs are the part directories of a run with parts (the directories
// below dir holding a run.json), in the order of the scenario's parts, then by
// name; none for a run without parts.
func PartDirs(dir string) []string {
	if _, err := os.Stat(filepath.Join(dir, rundir.MetaFile)); err == nil {
		return nil
	}
	found, _ := filepath.Glob(filepath.Join(dir, "*", rundir.MetaFile))
	var out []string
	for _, f := range found {
		out = append(out, filepath.Dir(f))
	}
	_, _, order := scenarioName(dir)
	rank := func(d string) int {
		for i, n := range order {
			if n == filepath.Base(d) {
				return i
			}
		}
		return len(order)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := rank(out[i]), rank(out[j]); ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}

// Summaries are the parts' summaries, in the order of Parts (nil for a part without one).
func (w *RunSummary) Summaries() []*Summary { return w.summaries }

// parseRunSummary reads a whole run's summary.json into a Summary of kind run:
// its verdict, and the whole object in Whole.
func parseRunSummary(b []byte) (*Summary, error) {
	var w RunSummary
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadSummary, err)
	}
	if _, ok := verdictRank[w.Verdict]; !ok {
		return nil, fmt.Errorf("%w: whole-run summary with verdict %q", errBadSummary, w.Verdict)
	}
	s := &Summary{Summary: summary.Summary{Schema: w.Schema, Kind: KindRun, Verdict: w.Verdict, VerdictReasons: w.VerdictReasons, Reasons: w.Reasons, Passed: w.Verdict == VerdictPass}, Whole: &w}
	s.Run.ID, s.Run.Scenario, s.Run.Version, s.Run.Start, s.Run.End, s.Run.Interrupted = w.Run.ID, w.Run.Scenario, w.Run.Version, w.Run.Start, w.Run.End, w.Run.Interrupted
	return s, nil
}
