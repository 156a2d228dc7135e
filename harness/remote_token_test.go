package harness

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

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
