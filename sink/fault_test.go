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

// TestFaultRefusesOnPurpose: arrivals the sink caused are the sink's. A call
// refused on purpose is logged with the answer; the service sending it again
// is redelivered on request, not a duplicate of the service's; a refusal of
// that again is the sink's refusal (neither); only an arrival after an
// accepted one is the service's duplicate.
func TestFaultRefusesOnPurpose(t *testing.T) {
	n := 0
	pick := func() bool { n++; return n <= 2 } // the first two calls
	h := newHarness(t, Options{Fault: Fault{Share: 0.5, Code: 503, Pick: pick}})
	body := status(txID(1), "DELIVERED", "sms", &rundir.Tag{Run: "r", Seq: 1, First: fixedNow.Add(-time.Second)})
	rows := []struct {
		name        string
		wantCode    int
		answered    int
		dup, redeli bool
	}{
		// The first arrival is refused with 503: logged (with the answer) and still
		// the latency point.
		{"refused first arrival", 503, 503, false, false},
		{"retry refused again", 503, 503, false, false},
		{"retry accepted", 200, 0, false, true},
		{"the service sends it once more", 200, 0, true, false},
	}
	for _, r := range rows {
		if code := h.post("/callback", body, nil); code != r.wantCode {
			t.Fatalf("%s: code %d, want %d", r.name, code, r.wantCode)
		}
		ev := h.last()
		if ev.Answered != r.answered || ev.Corr.Duplicate != r.dup || ev.Corr.Redelivered != r.redeli {
			t.Errorf("%s: answered %d duplicate %v redelivered %v", r.name, ev.Answered, ev.Corr.Duplicate, ev.Corr.Redelivered)
		}
	}
	if st := h.s.Stats(); st.Faulted != 2 || st.Duplicates != 1 || st.Redelivered != 1 || st.Callbacks != 4 {
		t.Errorf("stats %+v", st)
	}
	// Malformed calls are never faulted: they are answered 400 as always.
	if code := h.post("/callback", `{}`, nil); code != 400 {
		t.Errorf("malformed: %d", code)
	}
}

// TestFaultDelayRedelivered: a call the sink held on purpose is logged with
// the delay; the service, timed out meanwhile, sends it again: redelivered
// on request, not the service's duplicate.
func TestFaultDelayRedelivered(t *testing.T) {
	n := 0
	pick := func() bool { n++; return n == 1 }
	h := newHarness(t, Options{Fault: Fault{Share: 0.5, Delay: time.Millisecond, Pick: pick}})
	body := `{"eventId":"e","notificationId":"n-1","externalId":"order-1","status":"DELIVERED","errorCode":0,"updatedAt":"2026-11-23T14:00:00Z"}`
	for i, want := range []struct {
		delayed     bool
		dup, redeli bool
	}{{true, false, false}, {false, false, true}} {
		if code := h.post("/webhook", body, nil); code != 200 {
			t.Fatalf("call %d: code %d", i, code)
		}
		ev := h.last()
		if (ev.Delayed > 0) != want.delayed || ev.Corr.Duplicate != want.dup || ev.Corr.Redelivered != want.redeli {
			t.Errorf("call %d: delayed %v duplicate %v redelivered %v", i, ev.Delayed, ev.Corr.Duplicate, ev.Corr.Redelivered)
		}
	}
	if st := h.s.Stats(); st.Duplicates != 0 || st.Redelivered != 1 {
		t.Errorf("stats %+v", st)
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
