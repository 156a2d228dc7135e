package attack

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// TestTokenRedirectNotFollowedElsewhere: a token endpoint answering 307 to
// another host must not make msgload post client_id and client_secret there.
// The second server stands for an unconfirmed host (another host:port).
func TestTokenRedirectNotFollowedElsewhere(t *testing.T) {
	var leaked atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "secret-c") || r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		w.WriteHeader(500)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			http.Redirect(w, r, other.URL+"/token", http.StatusTemporaryRedirect)
			return
		}
		w.WriteHeader(500)
	}))
	defer srv.Close()
	rec := &memRecorder{}
	_, err := Run(context.Background(), Options{
		API: rundir.APINotify, BaseURL: srv.URL, TokenURL: srv.URL + "/token", Clients: clients("c"),
		Pacer: Constant(vegeta.Rate{Freq: 100, Per: time.Second}), Requests: 3,
		Body: notifyBody, RunID: "tokredir", Out: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := leaked.Load(); n > 0 {
		t.Fatalf("the client secret reached the redirect's host %d times", n)
	}
	if len(rec.ops(opToken)) == 0 {
		t.Fatal("no token attempt recorded")
	}
}
