package harness

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/internal/netguard"
	"github.com/msgload/msgload/sink"
)

// A standalone sink with a read token: the copy fails without it (401) and
// works with Options.SinkReadToken sent as a bearer token.
func TestRemoteLogSendsReadToken(t *testing.T) {
	k, err := sink.New(sink.Options{LogPath: filepath.Join(t.TempDir(), "events.jsonl"), ReadToken: "read-secret"}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	srv := httptest.NewServer(k.Handler())
	defer srv.Close()
	for _, tok := range []string{"", "read-secret"} {
		l, err := newRemoteLog(srv.URL, "r1", filepath.Join(t.TempDir(), "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		l.token = tok
		err = l.finish(context.Background())
		if tok == "" && (err == nil || !strings.Contains(err.Error(), "401")) {
			t.Errorf("without the token: %v, want a 401", err)
		}
		if tok != "" && err != nil {
			t.Errorf("with the token: %v", err)
		}
	}
}

// A sink URL answering a redirect to another host (another host:port stands
// for an unconfirmed one) is not followed: the read token and the run's query
// never reach it, and the pull fails naming the redirect.
func TestRemoteLogRefusesRedirectElsewhere(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Write([]byte(`{"events":[],"next":0,"more":false}`))
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	l, err := newRemoteLog(srv.URL, "r1", filepath.Join(t.TempDir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	l.token = "read-secret"
	err = l.pull(context.Background()) // finish would try again until its context ends
	if n := reached.Load(); n > 0 {
		t.Fatalf("the redirect's host was reached %d times", n)
	}
	if err == nil || !errors.Is(err, netguard.ErrRedirect) {
		t.Fatalf("err %v, want a refused redirect", err)
	}
}
