package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/sink"
)

// fetchPage is the page size asked of the sink's read API (its maximum).
var fetchPage = 10000

// fetchEvents copies the events of run from a standalone sink (its read API,
// GET /v1/events?run=&after=&limit=, page after page) into path, so the run
// directory is complete and the reports read it like an embedded sink's log.
// It returns how many events it copied.
func fetchEvents(ctx context.Context, sinkURL, run, path string) (int, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, fmt.Errorf("events from the sink: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	client := &http.Client{Timeout: 30 * time.Second}
	n, after := 0, int64(0)
	for {
		q := url.Values{"run": {run}, "after": {strconv.FormatInt(after, 10)}, "limit": {strconv.Itoa(fetchPage)}}
		u := strings.TrimRight(sinkURL, "/") + "/v1/events?" + q.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return n, fmt.Errorf("events from the sink: %w", err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return n, fmt.Errorf("events from the sink: %w", err)
		}
		var page sink.EventsPage
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return n, fmt.Errorf("events from the sink: %s answered %s", sinkURL, resp.Status)
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			return n, fmt.Errorf("events from the sink: bad page after %d: %w", after, err)
		}
		for i := range page.Events {
			if err := enc.Encode(&page.Events[i]); err != nil {
				return n, fmt.Errorf("events from the sink: %w", err)
			}
			n++
		}
		if !page.More || page.Next <= after {
			break
		}
		after = page.Next
	}
	if err := w.Flush(); err != nil {
		return n, fmt.Errorf("events from the sink: %w", err)
	}
	if err := f.Sync(); err != nil {
		return n, fmt.Errorf("events from the sink: %w", err)
	}
	return n, nil
}
