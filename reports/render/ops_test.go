package render

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// TestOperationsAndErrorsTables: the per-operation table counts each
// operation's requests, ok, 429 and errors; the errors table counts
// operation × code × message (digits aside) with the earliest text; both
// reach summary.json, report.md and report.html, whatever the order the
// attempts were written in.
func TestOperationsAndErrorsTables(t *testing.T) {
	s, f := build(t, opsRun())
	want := []summary.OpFigure{
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
	// Two sends timed out after 0.5 s: the send's max is only at least that.
	if v, lower := ops[0].Latency("max"); v != 0.5 || !lower || ops[0].Censored != 2 {
		t.Errorf("send max latency %v (lower bound %v), %d censored: want at least 0.5, 2 censored", v, lower, ops[0].Censored)
	}
	for _, name := range []string{rundir.MarkdownFile, rundir.HTMLFile} {
		for _, w := range []string{"4 (2 with no answer)", "&gt; 500.0 ms"} { // ">" escaped in both, as every table's
			if !strings.Contains(f[name], w) {
				t.Errorf("%s lacks the send's %q", name, w)
			}
		}
	}
	errs := s.SortedErrors()
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
	if !slices.EqualFunc(s2.SortedErrors(), errs, func(a, b summary.ErrorRow) bool {
		return a.Op == b.Op && a.Code == b.Code && a.Message == b.Message && a.Count == b.Count
	}) {
		t.Errorf("read in reverse: %+v, want %+v", s2.SortedErrors(), errs)
	}
}
