package reports

import (
	"fmt"
	"testing"

	"github.com/msgload/msgload/rundir"
)

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
