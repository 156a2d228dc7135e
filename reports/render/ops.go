package render

import (
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/summary"
)

// The per-operation table and the errors table as people read them
// (reports/ops.go keeps them while the attempts are read).

// opLabel names an operation for people.
func opLabel(op string) string {
	switch op {
	case "check_status":
		return "status check"
	case "webhook":
		return "webhook registration"
	}
	return op
}

// codeText is an answer's code for people: "503 Service Unavailable", "no answer".
func codeText(code int) string {
	if code == 0 {
		return "no answer"
	}
	if t := http.StatusText(code); t != "" {
		return strconv.Itoa(code) + " " + t
	}
	return strconv.Itoa(code)
}

// messageText is an error row's message for people: its text, else its class.
func messageText(e summary.ErrorRow) string {
	if e.Message != "" {
		return e.Message
	}
	return "(no text; class " + e.Class + ")"
}

// opCells are a per-operation row's cells: operation, requests (with those
// that had no answer), ok, 429, errors, error share, mean and max latency —
// "> 2.00 s" when only a lower bound, as requests.latency's are shown.
func opCells(f summary.OpFigure) []string {
	share := "–"
	if f.Requests > 0 {
		share = reports.Percent(float64(f.Errors+f.Rejected429), float64(f.Requests))
	}
	return []string{opLabel(f.Op), f.RequestsText(), strconv.FormatInt(f.OK, 10),
		strconv.FormatInt(f.Rejected429, 10), strconv.FormatInt(f.Errors, 10), share, opLatency(f, "mean"), opLatency(f, "max")}
}

// opLatency is a row's mean or max latency for people: "1.2 ms", or "> 2.00 s"
// when some attempt had no answer.
func opLatency(f summary.OpFigure, name string) string {
	v, lower := f.Latency(name)
	if lower {
		return "> " + spacedDur(v)
	}
	return spacedDur(v)
}

// opHeads are the per-operation table's headings.
var opHeads = []string{"Operation", "Requests", "OK", "429", "Other errors", "Not OK", "Mean latency", "Max latency"}

// errorHeads are the errors table's headings.
var errorHeads = []string{"Operation", "Code", "Class", "First message", "Count"}

// errorCells are an error row's cells.
func errorCells(e summary.ErrorRow) []string {
	return []string{opLabel(e.Op), codeText(e.Code), e.Class, messageText(e), strconv.FormatInt(e.Count, 10)}
}

// terminalTables writes the errors table's first rows to the terminal (the
// whole table is in report.html and report.md).
func (s view) terminalTables(w io.Writer) {
	rows := s.SortedErrors()
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "  errors (operation, code, first message: count):\n")
	for i, e := range rows {
		if i == 5 {
			fmt.Fprintf(w, "    … %d more kinds in report.html\n", len(rows)-5)
			break
		}
		fmt.Fprintf(w, "    %s, %s, %s: %d\n", opLabel(e.Op), codeText(e.Code), messageText(e), e.Count)
	}
}
