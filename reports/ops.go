package reports

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// The per-operation table and the errors table (summary.json
// requests.operations and requests.error_table): what each kind of request
// (send, status check, token, webhook registration) met, and each error as
// operation × code × message, counted. Both are kept in place while the
// attempts are read, in memory bounded whatever the run's length: one row
// per operation, at most maxErrorRows error rows, each with one message text.

// maxErrorRows bounds the errors table: a run whose errors carry more kinds of
// message counts the rest in one row per operation and code ("other messages").
const maxErrorRows = 50

// maxMessage is how much of an error's text the table keeps.
const maxMessage = 200

// otherMessages is the message class of the errors beyond maxErrorRows.
const otherMessages = "(other messages)"

// errKey is what makes two errors one row: the operation, code, class and the
// message with its digits blanked (ports, ids, byte counts differ).
type errKey struct {
	op, class, msg string
	code           int
}

// opsRec is the accumulator of both tables, kept in the summary while the
// attempts are read (analyzer.attempt calls add). Its zero value is ready.
type opsRec struct {
	rows map[errKey]int // key → index in the summary's error_table
}

// addOp counts one attempt into the summary's per-operation and errors tables.
func (s *Summary) addOp(at *rundir.Attempt) {
	op := at.Op
	if op == "" {
		op = "send"
	}
	r := &s.Requests
	f := opRow(&r.Operations, op)
	f.Requests++
	lat := max(at.Latency, 0) // below zero (a clock stepped back): 0, as requests.latency's hist reads it
	f.LatencyNs += int64(lat * 1e9)
	f.LatencyTop = max(f.LatencyTop, lat)
	if unanswered(at) {
		f.Censored++ // its latency is only more than its wait (analyze.go)
	}
	class := at.Class
	if class == "" && !is2xx(at.Code) {
		_, class = rundir.Classify(at.Code, nil)
	}
	switch class {
	case "", rundir.ClassOK:
		f.OK++
		return
	case rundir.ClassHTTP429:
		f.Rejected429++
	default:
		f.Errors++
	}
	s.ops.addError(&r.ErrorTable, op, class, at)
}

// finishOps sets each operation's mean and max latency from its sum and
// largest value, by the rule of requests.latency (hist.censoredPercentiles):
// exact when every attempt was answered; with one censored (no answer), the
// mean and max of the latencies and waits together are only lower bounds —
// the value 0 (null in summary.json) and its _at_least field set.
func (s *Summary) finishOps() {
	for i := range s.Requests.Operations {
		f := &s.Requests.Operations[i]
		mean, mx := round6(float64(f.LatencyNs)/float64(f.Requests)/1e9), round6(f.LatencyTop) // to the µs, as requests.latency.max
		f.LatencyMeanAtLeast, f.LatencyMaxAtLeast = nil, nil
		if f.Censored == 0 {
			f.LatencyMean, f.LatencyMax = mean, mx
			continue
		}
		f.LatencyMean, f.LatencyMax = 0, 0
		f.LatencyMeanAtLeast, f.LatencyMaxAtLeast = &mean, &mx
	}
}

// opRow finds op's row, adding it in its place (opOrder) the first time.
func opRow(rows *[]opFigure, op string) *opFigure {
	i, found := slices.BinarySearchFunc(*rows, op, func(f opFigure, op string) int { return compareOps(f.Op, op) })
	if !found {
		*rows = slices.Insert(*rows, i, opFigure{Op: op})
	}
	return &(*rows)[i]
}

// opOrder is the order of the operations in the tables: the send first.
var opOrder = map[string]int{"send": 0, "check_status": 1, "token": 2, "webhook": 3}

func compareOps(a, b string) int {
	ra, oka := opOrder[a]
	rb, okb := opOrder[b]
	switch {
	case oka && okb:
		return ra - rb
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}

// addError counts a failed attempt in its errors-table row.
func (o *opsRec) addError(rows *[]errorRow, op, class string, at *rundir.Attempt) {
	if o.rows == nil {
		o.rows = map[errKey]int{}
	}
	k := errKey{op: op, class: class, msg: messageClass(at.Error), code: at.Code}
	i, ok := o.rows[k]
	if !ok && len(o.rows) >= maxErrorRows {
		k.msg = otherMessages
		i, ok = o.rows[k]
	}
	if !ok {
		i = len(*rows)
		*rows = append(*rows, errorRow{Op: op, Code: at.Code, Class: class})
		o.rows[k] = i
	}
	e := &(*rows)[i]
	e.Count++
	msg := cutMessage(at.Error)
	if k.msg == otherMessages {
		msg = otherMessages
	}
	// The earliest sent attempt's text (the smaller text at one time): the
	// same whatever order the attempts were read in.
	if e.Count == 1 || at.Sent.Before(e.First) || at.Sent.Equal(e.First) && msg < e.Message {
		e.Message, e.First = msg, at.Sent
	}
}

// messageClass is an error text with its digits blanked and cut: errors that
// differ only by a port, an id or a size are one class.
func messageClass(msg string) string {
	var b strings.Builder
	digit := false
	for _, r := range cutMessage(msg) {
		if r >= '0' && r <= '9' {
			if !digit {
				b.WriteByte('#')
			}
			digit = true
			continue
		}
		digit = false
		b.WriteRune(r)
	}
	return b.String()
}

// cutMessage is msg cut to maxMessage characters.
func cutMessage(msg string) string {
	if utf8.RuneCountInString(msg) <= maxMessage {
		return msg
	}
	return string([]rune(msg)[:maxMessage]) + "…"
}

// SortedErrors is the errors table for people: the most frequent first, then
// by operation, code and message (the same whatever order the attempts came in).
func (s *Summary) SortedErrors() []summary.ErrorRow {
	rows := slices.Clone(s.Requests.ErrorTable)
	slices.SortFunc(rows, func(a, b errorRow) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), compareOps(a.Op, b.Op), cmp.Compare(a.Code, b.Code),
			strings.Compare(a.Class, b.Class), strings.Compare(a.Message, b.Message))
	})
	return rows
}
