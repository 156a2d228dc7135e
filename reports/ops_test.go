package reports

import (
	"fmt"
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
	if total != 3*maxErrorRows || s.SortedErrors()[0].Message != otherMessages {
		t.Errorf("counted %d of %d; first row %+v", total, 3*maxErrorRows, s.SortedErrors()[0])
	}
}
