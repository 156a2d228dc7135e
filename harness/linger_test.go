package harness

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

func TestScrapeWatchLinger(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})
	scrape := func(s *scrapeWatch) {
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/metrics", nil))
	}

	// Nobody scraped during the run: no reason to wait.
	synctest.Test(t, func(t *testing.T) {
		s := newScrapeWatch(ok)
		start := time.Now()
		if s.linger(time.Minute, nil) || time.Since(start) != 0 {
			t.Fatalf("unscraped: lingered %v", time.Since(start))
		}
	})

	// Scraped before: wait for the next scrape, and only until it comes.
	synctest.Test(t, func(t *testing.T) {
		s := newScrapeWatch(ok)
		scrape(s)
		start := time.Now()
		go func() { time.Sleep(7 * time.Second); scrape(s) }()
		if !s.linger(time.Minute, nil) {
			t.Fatal("want the last scrape seen")
		}
		if got := time.Since(start); got != 7*time.Second {
			t.Fatalf("lingered %v, want 7s (until the scrape)", got)
		}
	})

	// Scraped before, but Prometheus went away: give up after max.
	synctest.Test(t, func(t *testing.T) {
		s := newScrapeWatch(ok)
		scrape(s)
		s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil)) // not a scrape
		start := time.Now()
		if s.linger(15*time.Second, nil) {
			t.Fatal("no scrape came, want false")
		}
		if got := time.Since(start); got != 15*time.Second {
			t.Fatalf("lingered %v, want the 15s maximum", got)
		}
	})

	// An interrupt (SIGTERM) during the wait ends it at once: it was ignored
	// until the scrape or the maximum.
	synctest.Test(t, func(t *testing.T) {
		s := newScrapeWatch(ok)
		scrape(s)
		stop := make(chan struct{})
		start := time.Now()
		go func() { time.Sleep(3 * time.Second); close(stop) }()
		if s.linger(time.Minute, stop) {
			t.Fatal("interrupted, want false")
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Fatalf("lingered %v, want 3s (until the interrupt)", got)
		}
	})
}
