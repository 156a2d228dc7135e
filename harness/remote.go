package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/msgload/msgload/internal/netguard"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sink"
)

// fetchPage is the page size asked of the sink's read API (its maximum).
var fetchPage = 10000

// remoteLog copies the events of one run from a standalone sink (its read
// API, GET /v1/events?run=&untagged=true&from=&to=&after=&limit=, page after
// page from a cursor) into the run directory's events.jsonl, so the reports
// read it like an embedded sink's log: the run's tagged events, and the
// untagged ones received in the run's window (from its start to the end of
// the grace wait), which the report joins to the run's attempts by txId or
// notificationId (never externalId alone) and counts unmatched when they
// join nothing. Another part's tagged events are not copied.
// Pulled during the grace period, it hands what it copies to the tally (when
// the target is real), so the wait ends when every accepted message has a
// final status, and the progress line shows callbacks arriving.
type remoteLog struct {
	sinkURL, run string
	part         string // rundir.Tag.Part of this part: another part's tagged events are not copied
	// anyRun also copies the events tagged by another run in the window: a
	// replay that keeps a recording's externalIds sends that run's tags, and
	// the report joins their webhooks by the notificationId answered.
	anyRun   bool
	token    string    // read token of the sink, sent as a bearer token when set
	from, to time.Time // the window of untagged events; zero: open
	tally    *tally    // nil: nothing counted
	// shard, of a sharded run: the run's tagged events of other shards'
	// messages are theirs to copy (all shards share the run id).
	shard  *rundir.Shard
	client *http.Client
	path   string
	f      copyFile
	off    int64 // bytes of whole pages written to f
	after  int64
	events atomic.Int64
	closed bool
	// baseErrors is the sink's count of calls it could not write when the
	// run began (/v1/stats write_errors); baseErr why it could not be read.
	baseErrors int64
	baseErr    error
}

// copyFile is what the copy writes to: the run's events.jsonl (a test's
// failing disk).
type copyFile interface {
	io.WriterAt
	Truncate(size int64) error
	Sync() error
	Close() error
}

func newRemoteLog(sinkURL, run, path string) (*remoteLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, rundir.FileMode)
	if err != nil {
		return nil, fmt.Errorf("events from the sink: %w", err)
	}
	return &remoteLog{sinkURL: strings.TrimRight(sinkURL, "/"), run: run, client: netguard.Client(&http.Client{Timeout: 30 * time.Second}),
		path: path, f: f}, nil
}

// errLocalWrite wraps a failure to write the copy to the run directory (a
// full disk): the sink is fine, and trying again helps only once space is
// freed, so finish tries it a bounded number of times.
var errLocalWrite = errors.New("events from the sink: writing the copy")

// localTries bounds the tries of finish that fail writing the copy.
var localTries = 5

// retryWait is finish's first pause between tries (it doubles to 5 s).
var retryWait = 250 * time.Millisecond

// writePage appends one page's lines to the copy whole or not at all: a
// failed write is cut back to the last whole page, so the page is fetched and
// written again on the next try (once space is freed) with nothing doubled.
func (l *remoteLog) writePage(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if _, err := l.f.WriteAt(b, l.off); err != nil {
		_ = l.f.Truncate(l.off)
		return fmt.Errorf("%w %s: %w", errLocalWrite, l.path, err)
	}
	l.off += int64(len(b))
	return nil
}

// pull copies every event the sink has for the run after the cursor: tagged
// with the run, or untagged and received in [from, to].
func (l *remoteLog) pull(ctx context.Context) error {
	for {
		q := url.Values{"run": {l.run}, "untagged": {"true"}, "after": {strconv.FormatInt(l.after, 10)}, "limit": {strconv.Itoa(fetchPage)}}
		if l.anyRun {
			q.Del("run") // every event of the window, the run's own tagged ones included
		}
		if !l.from.IsZero() {
			q.Set("from", l.from.UTC().Format(time.RFC3339Nano))
		}
		if !l.to.IsZero() {
			q.Set("to", l.to.UTC().Format(time.RFC3339Nano))
		}
		resp, err := l.get(ctx, "/v1/events?"+q.Encode())
		if err != nil {
			return fmt.Errorf("events from the sink: %w", err)
		}
		var page sink.EventsPage
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
				return fmt.Errorf("%w: %s answered %s (set MSGLOAD_SINK_READ_TOKEN to the sink's read token)", errSinkRefused, l.sinkURL, resp.Status)
			}
			return fmt.Errorf("events from the sink: %s answered %s", l.sinkURL, resp.Status)
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("events from the sink: bad page after %d: %w", l.after, err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		kept := page.Events[:0]
		for i := range page.Events {
			e := &page.Events[i]
			if e.Corr != nil && e.Corr.Run == l.run && e.Corr.Part != l.part {
				continue // another part's message (the parts of a run share its id)
			}
			if l.shard != nil && e.Corr != nil && e.Corr.Run == l.run && e.Corr.Seq > 0 && !l.shard.Owns(e.Corr.Seq) {
				continue
			}
			if err := enc.Encode(e); err != nil {
				return fmt.Errorf("events from the sink: %w", err)
			}
			kept = append(kept, *e)
		}
		if err := l.writePage(buf.Bytes()); err != nil {
			return err
		}
		// counted once written: a page written again is not counted twice
		for i := range kept {
			l.events.Add(1)
			if l.tally != nil {
				l.tally.event(&kept[i])
			}
		}
		if page.Next > l.after {
			l.after = page.Next
		}
		if !page.More || len(page.Events) == 0 {
			return nil
		}
	}
}

// get asks the sink's read API for path (and query), with the read token
// when the run has one.
func (l *remoteLog) get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.sinkURL+path, nil)
	if err != nil {
		return nil, err
	}
	if l.token != "" {
		req.Header.Set("Authorization", "Bearer "+l.token)
	}
	return l.client.Do(req)
}

// writeErrors is the standalone sink's count of calls it could not write
// since it started (GET /v1/stats write_errors), or why it cannot be read.
// The run records its growth over the run's window (sinkWriteErrors): the
// calls a full or failing disk of the sink's cost it — and any other run's
// the same sink served then, which can only make the run's verdict stricter.
func (l *remoteLog) writeErrors(ctx context.Context) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, remoteRead)
	defer cancel()
	resp, err := l.get(ctx, "/v1/stats")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /v1/stats answered %s", resp.Status)
	}
	var st sink.Stats
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st); err != nil {
		return 0, fmt.Errorf("GET /v1/stats: %w", err)
	}
	return st.WriteErrors, nil
}

// sinkWriteErrors is how many calls the sink could not write during the run
// (its count's growth since baseErrors), or why that is unknown: either
// count unread, or the count went down (the sink restarted in the run).
func (l *remoteLog) sinkWriteErrors(ctx context.Context) (int64, error) {
	if l.baseErr != nil {
		return 0, fmt.Errorf("at the run's start: %w", l.baseErr)
	}
	now, err := l.writeErrors(ctx)
	switch {
	case err != nil:
		return 0, fmt.Errorf("at the run's end: %w", err)
	case now < l.baseErrors:
		return 0, fmt.Errorf("its count went down from %d to %d: the sink restarted during the run", l.baseErrors, now)
	}
	return now - l.baseErrors, nil
}

// errSinkRefused means the sink's read API refused the credentials: trying
// again cannot help.
var errSinkRefused = errors.New("events from the sink: the read API refused the credentials")

// finish pulls what is left and closes the copy. A read that fails is tried
// again, with a growing pause, until ctx ends: the last copy is all the
// report will have. Each try is bounded, first by what a read during the
// grace wait gets, then twice that, up to 30 s: an answer lost on the way (a
// proxy that drops it, a connection that stalls) costs seconds, not the whole
// budget, while a slow sink serving a full page still gets the time it needs
// on a later try. The cursor only moves past whole pages, so a try that fails
// half way loses nothing.
//
// A failure to write the copy (a full disk) is tried localTries times, each
// try writing from the last whole page again, so freeing space during the
// pauses lets it finish; ctx ends it too (a second interrupt).
func (l *remoteLog) finish(ctx context.Context) error {
	var err error
	limit, local := remoteRead, 0
	for wait := retryWait; ; wait, limit = min(2*wait, 5*time.Second), min(2*limit, 30*time.Second) {
		try, cancel := context.WithTimeout(ctx, limit)
		err = l.pull(try)
		cancel()
		if errors.Is(err, errLocalWrite) {
			local++
		}
		if err == nil || errors.Is(err, errSinkRefused) || errors.Is(err, netguard.ErrRedirect) || ctx.Err() != nil || local >= localTries {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if cerr := l.close(); err == nil {
		err = cerr
	}
	return err
}

// close flushes the copy to disk; a second close does nothing.
func (l *remoteLog) close() error {
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.f.Sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("events from the sink: %w", err)
	}
	return nil
}
