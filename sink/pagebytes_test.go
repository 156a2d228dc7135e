package sink

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// A page of the read API is bounded by bytes as well as by count: events of
// 1 MB come a few to a page (More set), and paging reads them all. Before, a
// page took up to 1,000 of them whatever their size (4 readers held 2.3 GB).
func TestReadEventsPageBoundByBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), rundir.EventsFile)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	raw := strings.Repeat("x", 1<<20)
	for i := range n {
		b, _ := json.Marshal(rundir.Event{Kind: "malformed", Route: "/callback", Raw: raw, Reason: strings.Repeat("r", i)})
		f.Write(append(b, '\n'))
	}
	f.Close()
	var after int64
	got, pages := 0, 0
	for {
		p, err := ReadEvents(path, Filter{}, after, defaultPage)
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for _, ev := range p.Events {
			size += len(ev.Raw)
		}
		if len(p.Events) > 1 && size > maxPageBytes+len(raw) {
			t.Fatalf("page of %d events, %d bytes: over the %d-byte bound", len(p.Events), size, maxPageBytes)
		}
		got += len(p.Events)
		after = p.Next
		pages++
		if !p.More || pages > n {
			break
		}
	}
	if got != n || pages < 2 {
		t.Fatalf("read %d of %d events in %d pages, want all in several", got, n, pages)
	}
}

// after= past the end of the log is a bad query (400), not a failure of the
// sink (it answered 500).
func TestReadEventsAfterPastEnd(t *testing.T) {
	h := newHarness(t, Options{})
	resp, err := h.srv.Client().Get(h.srv.URL + "/v1/events?after=9223372036854775807")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("after past the end: %d, want 400", resp.StatusCode)
	}
}
