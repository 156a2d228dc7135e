package reports

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// opsRun is a run whose requests meet several errors: sends answered 503 or
// timing out on different ports, status checks answered 404, a token 500.
func opsRun() *run {
	r := passingRun()
	r.send(2, "c1", 2, 503, 0.02).Error = "503 Service Unavailable"
	r.send(3, "c1", 3, 0, 0.5).Error = "dial tcp 127.0.0.1:40001: i/o timeout"
	r.send(4, "c1", 4, 0, 0.5).Error = "dial tcp 127.0.0.1:40999: i/o timeout"
	for i, code := range []int{404, 404, 200} {
		a := rundir.Attempt{Op: "check_status", API: r.meta.API, Client: "c1", Sent: at(5 + float64(i)), Code: code, Latency: 0.01, Class: rundir.ClassOK}
		if code != 200 {
			a.Outcome, a.Class = rundir.Classify(code, nil)
			a.Error = "404 Not Found"
		}
		r.attempts = append(r.attempts, a)
	}
	r.attempts = append(r.attempts, rundir.Attempt{Op: "token", API: r.meta.API, Client: "c1", Sent: at(9), Code: 500, Latency: 0.03, Class: rundir.ClassHTTP5xx, Error: "500 Internal Server Error"})
	return r
}

// TestOperationsAndErrorsTables: the per-operation table counts each
// operation's requests, ok, 429 and errors; the errors table counts
// operation × code × message (digits aside) with the earliest text; both
// reach summary.json, report.md and report.html, whatever the order the
// attempts were written in.
func TestOperationsAndErrorsTables(t *testing.T) {
	s, f := build(t, opsRun())
	want := []opFigure{
		{Op: "send", Requests: 4, OK: 1, Errors: 3},
		{Op: "check_status", Requests: 3, OK: 1, Errors: 2},
		{Op: "token", Requests: 1, Errors: 1},
	}
	ops := s.Requests.Operations
	if len(ops) != len(want) {
		t.Fatalf("operations %+v, want %+v", ops, want)
	}
	for i, w := range want {
		g := ops[i]
		if g.Op != w.Op || g.Requests != w.Requests || g.OK != w.OK || g.Errors != w.Errors || g.Rejected429 != 0 {
			t.Errorf("operation %d: %+v, want %+v", i, g, w)
		}
	}
	if ops[0].LatencyMax != 0.5 {
		t.Errorf("send max latency %v, want 0.5", ops[0].LatencyMax)
	}
	errs := s.sortedErrors()
	got := make([]string, len(errs))
	for i, e := range errs {
		got[i] = fmt.Sprintf("%s %d %s: %d", e.Op, e.Code, e.Message, e.Count)
	}
	wantErrs := []string{
		"send 0 dial tcp 127.0.0.1:40001: i/o timeout: 2", // one class: the ports differ; the earliest text
		"check_status 404 404 Not Found: 2",
		"send 503 503 Service Unavailable: 1",
		"token 500 500 Internal Server Error: 1",
	}
	if !slices.Equal(got, wantErrs) {
		t.Errorf("errors table %q, want %q", got, wantErrs)
	}
	for _, name := range []string{rundir.SummaryFile, rundir.MarkdownFile, rundir.HTMLFile} {
		for _, w := range []string{"status check", "dial tcp 127.0.0.1:40001: i/o timeout", "webhook"} {
			if w == "webhook" || name == rundir.SummaryFile && w == "status check" {
				continue
			}
			if !strings.Contains(f[name], w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
	}
	if !strings.Contains(f[rundir.SummaryFile], `"error_table"`) || !strings.Contains(f[rundir.SummaryFile], `"operations"`) {
		t.Errorf("summary.json lacks the tables")
	}
	rev := opsRun()
	slices.Reverse(rev.attempts)
	s2, _ := build(t, rev)
	if !slices.EqualFunc(s2.sortedErrors(), errs, func(a, b errorRow) bool {
		return a.Op == b.Op && a.Code == b.Code && a.Message == b.Message && a.Count == b.Count
	}) {
		t.Errorf("read in reverse: %+v, want %+v", s2.sortedErrors(), errs)
	}
}

// TestErrorsTableBounded: errors of more kinds than maxErrorRows are counted
// in one "other messages" row, so the table's memory is bounded.
func TestErrorsTableBounded(t *testing.T) {
	var s Summary
	for i := range 3 * maxErrorRows {
		s.addOp(&rundir.Attempt{Op: "send", Code: 400, Class: "http_4xx", Sent: at(float64(i)), Error: fmt.Sprintf("bad field %c%c", 'a'+i%26, 'a'+i/26)})
	}
	rows := s.Requests.ErrorTable
	if len(rows) != maxErrorRows+1 {
		t.Fatalf("%d rows, want %d", len(rows), maxErrorRows+1)
	}
	var total int64
	for _, r := range rows {
		total += r.Count
	}
	if total != 3*maxErrorRows || s.sortedErrors()[0].Message != otherMessages {
		t.Errorf("counted %d of %d; first row %+v", total, 3*maxErrorRows, s.sortedErrors()[0])
	}
}
