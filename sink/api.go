package sink

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/msgload/msgload/rundir"
)

// Paging of GET /v1/events.
const (
	defaultPage = 1000
	maxPage     = 10000
	// maxPageBytes bounds a page by the bytes of its events' lines too (at
	// least one event is given): a page of 1,000 events of 1 MB each held
	// gigabytes for each reader.
	maxPageBytes = 8 << 20
)

// EventsPage is the answer of GET /v1/events: events in log order, and the cursor
// to pass as after= for the next page.
type EventsPage struct {
	Events []rundir.Event `json:"events"`
	Next   int64          `json:"next"` // byte offset in the log after the last line read
	More   bool           `json:"more"` // the page is full: ask again with after=next
}

// errBadQuery is a bad query string of the read API.
var errBadQuery = errors.New("bad query")

// serveEvents pages through the log: ?run=<id> keeps the events whose tag names
// that run (with run= empty, all events), &untagged=true adds those that carry
// no run, &from=/&to= (RFC 3339) keep, of the events not chosen by their run
// tag, only those received in [from, to], ?after=<cursor> starts after a
// previous page, ?limit=<n> (1..10000, default 1000).
func (s *Sink) serveEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, limit := int64(0), defaultPage
	var err error
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			http.Error(w, fmt.Sprintf("%v: after must be a cursor from a previous page", errBadQuery), http.StatusBadRequest)
			return
		}
	}
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > maxPage {
			http.Error(w, fmt.Sprintf("%v: limit must be 1..%d", errBadQuery, maxPage), http.StatusBadRequest)
			return
		}
	}
	untagged := false
	if v := q.Get("untagged"); v != "" {
		if untagged, err = strconv.ParseBool(v); err != nil {
			http.Error(w, fmt.Sprintf("%v: untagged must be true or false", errBadQuery), http.StatusBadRequest)
			return
		}
	}
	f := Filter{Run: q.Get("run"), Untagged: untagged}
	for _, b := range []struct {
		name string
		t    *time.Time
	}{{"from", &f.From}, {"to", &f.To}} {
		if v := q.Get(b.name); v != "" {
			if *b.t, err = time.Parse(time.RFC3339Nano, v); err != nil {
				http.Error(w, fmt.Sprintf("%v: %s must be an RFC 3339 time such as 2026-11-23T14:00:00Z", errBadQuery, b.name), http.StatusBadRequest)
				return
			}
		}
	}
	// Only acknowledged lines: bytes past the last commit may be a batch still
	// being written or fsynced, or one about to be cut back after a failure.
	end := s.log.acknowledged()
	if after > end { // no page gave it: a bad query, not a failure of the sink
		http.Error(w, fmt.Sprintf("%v: after is past the end of the log (%d bytes); pass next of a previous page", errBadQuery, end), http.StatusBadRequest)
		return
	}
	page, err := readEvents(s.opts.LogPath, f, after, limit, end)
	if err != nil {
		http.Error(w, "cannot read the event log", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(page)
}

// Filter selects events of the read API.
type Filter struct {
	Run string // keep events whose tag names this run; "" keeps every event
	// Untagged also keeps, with Run set, the events that carry no run: malformed,
	// unauthorized and untagged (unmatched) calls, which no run can claim.
	Untagged bool
	// From and To (inclusive; zero: open) bound the arrival time of the events
	// not chosen by their run tag: with Run set, the untagged ones; with Run
	// empty, every event. A run's own tagged events are kept whenever they came.
	From, To time.Time
}

func (f Filter) keep(ev *rundir.Event) bool {
	if f.Run != "" && ev.Corr != nil && ev.Corr.Run != "" {
		return ev.Corr.Run == f.Run
	}
	if f.Run != "" && !f.Untagged {
		return false
	}
	return (f.From.IsZero() || !ev.ReceivedAt.Before(f.From)) && (f.To.IsZero() || !ev.ReceivedAt.After(f.To))
}

// Events reads up to limit events kept by f from the sink's own log, starting
// at byte offset after, as GET /v1/events does: acknowledged lines only, so
// an embedded sink's caller never sees an event that a failed write is about
// to cut back.
func (s *Sink) Events(f Filter, after int64, limit int) (EventsPage, error) {
	return readEvents(s.opts.LogPath, f, after, limit, s.log.acknowledged())
}

// ReadEvents reads up to limit events kept by f from the log at path, starting
// at byte offset after. Only complete lines are read; a line that does not
// decode is skipped.
func ReadEvents(path string, f Filter, after int64, limit int) (EventsPage, error) {
	return readEvents(path, f, after, limit, -1)
}

// readEvents is ReadEvents that reads no byte at or past end (end < 0: no bound).
func readEvents(path string, f Filter, after int64, limit int, end int64) (EventsPage, error) {
	page := EventsPage{Events: []rundir.Event{}, Next: after}
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return page, nil
	}
	if err != nil {
		return page, err
	}
	defer file.Close()
	if _, err := file.Seek(after, io.SeekStart); err != nil {
		return page, err
	}
	var r io.Reader = file
	if end >= 0 {
		r = io.LimitReader(file, max(end-after, 0))
	}
	br := bufio.NewReaderSize(r, 1<<16)
	size := 0 // bytes of the lines of the events kept
	for len(page.Events) < limit && size < maxPageBytes {
		b, err := br.ReadBytes('\n')
		if err == io.EOF {
			break // a partial last line is left for a later page
		}
		if err != nil {
			return page, err
		}
		page.Next += int64(len(b))
		var ev rundir.Event
		if json.Unmarshal(b, &ev) != nil {
			continue
		}
		if !f.keep(&ev) {
			continue
		}
		page.Events = append(page.Events, ev)
		size += len(b)
	}
	page.More = len(page.Events) == limit || size >= maxPageBytes
	return page, nil
}
