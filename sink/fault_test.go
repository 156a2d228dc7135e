package sink

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
)

func TestFaultRefusesOnPurpose(t *testing.T) {
	n := 0
	pick := func() bool { n++; return n%2 == 1 } // every other call: 1st, 3rd, …
	h := newHarness(t, Options{Fault: Fault{Share: 0.5, Code: 503, Pick: pick}})
	body := status(txID(1), "DELIVERED", "sms", &rundir.Tag{Run: "r", Seq: 1, First: fixedNow.Add(-time.Second)})
	rows := []struct {
		name     string
		wantCode int
		answered int
		dup      bool
	}{
		// The first arrival is refused with 503: logged (with the answer) and still
		// the latency point.
		{"refused first arrival", 503, 503, false},
		// The service's retry is answered normally and is a duplicate.
		{"retry accepted", 200, 0, true},
	}
	for _, r := range rows {
		if code := h.post("/callback", body, nil); code != r.wantCode {
			t.Fatalf("%s: code %d, want %d", r.name, code, r.wantCode)
		}
		ev := h.last()
		if ev.Answered != r.answered || ev.Corr.Duplicate != r.dup {
			t.Errorf("%s: answered %d duplicate %v", r.name, ev.Answered, ev.Corr.Duplicate)
		}
	}
	if st := h.s.Stats(); st.Faulted != 1 || st.Duplicates != 1 || st.Callbacks != 2 {
		t.Errorf("stats %+v", st)
	}
	// Malformed calls are never faulted: they are answered 400 as always.
	if code := h.post("/callback", `{}`, nil); code != 400 {
		t.Errorf("malformed: %d", code)
	}
}

func TestFaultDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New(Options{LogPath: filepath.Join(t.TempDir(), rundir.EventsFile), Fsync: fsyncNone,
			Fault: Fault{Share: 1, Delay: 3 * time.Second}}, prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		start := time.Now()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(`{"notificationId":"n"}`))
		s.Handler().ServeHTTP(rec, req)
		// On the bubble's clock the answer comes exactly after the delay, with 200.
		if got := time.Since(start); got != 3*time.Second || rec.Code != 200 {
			t.Errorf("answered %d after %v, want 200 after 3s", rec.Code, got)
		}
	})
}

func TestFaultOptionsChecked(t *testing.T) {
	for _, f := range []Fault{{Share: 1.5, Code: 500}, {Share: 0.1, Code: 42}, {Share: 0.1, Delay: -time.Second}} {
		if _, err := New(Options{LogPath: filepath.Join(t.TempDir(), "e.jsonl"), Fault: f}, nil); err == nil {
			t.Errorf("fault %+v accepted", f)
		}
	}
}
