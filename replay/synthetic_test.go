package replay_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgload/msgload/replay"
)

// TestWriteSyntheticReadsBack: a program's recording is read by the one
// reader as written — offsets, methods, paths, clients, bodies (a non-UTF-8
// one too), the JSON content type — and is private to its owner.
func TestWriteSyntheticReadsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "probe.jsonl")
	in := []replay.Synthetic{
		{At: 0, Method: "POST", Path: "/api/v1/notifications", Client: "c1", Body: []byte(`{"externalId":"k-1"}`)},
		{At: 1500 * time.Millisecond, Method: "POST", Path: "/api/v1/notifications", Body: []byte(`{"externalId":"k-1"}`)},
		{At: 3 * time.Second, Method: "POST", Path: "/messaging/v1/send", Client: "c2", Body: []byte{0xff, '{', '}'}},
	}
	if err := replay.WriteSynthetic(path, time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC), "characterise", in); err != nil {
		t.Fatal(err)
	}
	got, err := replay.Load(path, replay.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("read %d requests, wrote %d", len(got), len(in))
	}
	for i, r := range got {
		w := in[i]
		if r.Offset != w.At || r.Method != w.Method || r.Path != w.Path || string(r.Body) != string(w.Body) || r.RecordedCode != 200 {
			t.Errorf("request %d: read %v %s %s %q code %d, wrote %v %s %s %q", i, r.Offset, r.Method, r.Path, r.Body, r.RecordedCode, w.At, w.Method, w.Path, w.Body)
		}
		if w.Client != "" && r.ClientID != w.Client {
			t.Errorf("request %d: client %q, wrote %q", i, r.ClientID, w.Client)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("request %d: Content-Type %q", i, ct)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600: bodies hold recipients and texts", st.Mode().Perm(), err)
	}
}
