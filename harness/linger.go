package harness

import (
	"net/http"
	"sync"
	"time"
)

// scrapeWatch counts scrapes of /metrics so that, after a run, the metrics
// server stays up until Prometheus has taken one more look, and no longer than
// needed: a run nobody scrapes ends at once.
type scrapeWatch struct {
	next http.Handler

	mu      sync.Mutex
	count   int
	changed chan struct{} // closed and replaced on every scrape
}

func newScrapeWatch(next http.Handler) *scrapeWatch {
	return &scrapeWatch{next: next, changed: make(chan struct{})}
}

func (s *scrapeWatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.next.ServeHTTP(w, r)
	if r.URL.Path != "/metrics" {
		return
	}
	s.mu.Lock()
	s.count++
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// linger waits, at most max, for a scrape after now; it returns at once when
// nothing ever scraped, and when cancel is closed (an interrupt: SIGTERM must
// not wait for Prometheus). It reports whether a last scrape happened.
func (s *scrapeWatch) linger(max time.Duration, cancel <-chan struct{}) bool {
	s.mu.Lock()
	seen, ch := s.count, s.changed
	s.mu.Unlock()
	if seen == 0 || max <= 0 {
		return false
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-cancel:
		return false
	case <-t.C:
		return false
	}
}
