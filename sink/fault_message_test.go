package sink

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestFaultPerMessage: with PerMessage the draw is made once per message,
// and every arrival of a chosen one gets the fault — a 429 with its
// Retry-After — so the sender's whole retry schedule shows in the log; a
// message not chosen is never faulted, and its second arrival is the
// service's duplicate.
func TestFaultPerMessage(t *testing.T) {
	draws := 0
	pick := func() bool { draws++; return draws%2 == 1 } // the first message drawn, not the second
	h := newHarness(t, Options{Fault: Fault{Share: 0.5, Code: 429, RetryAfter: 1500 * time.Millisecond, PerMessage: true, Pick: pick}})
	hook := func(id string) string {
		return `{"eventId":"e","notificationId":"` + id + `","externalId":"x-` + id + `","status":"DELIVERED","errorCode":0,"updatedAt":"2026-11-23T14:00:00Z"}`
	}
	for i, c := range []struct {
		id         string
		code       int
		retryAfter string
		dup        bool
	}{
		{"n-1", 429, "2", false}, {"n-2", 200, "", false}, {"n-1", 429, "2", false}, {"n-1", 429, "2", false}, {"n-2", 200, "", true},
	} {
		code, hdr := postHeader(t, h, "/webhook", hook(c.id))
		ev := h.last()
		if code != c.code || hdr.Get("Retry-After") != c.retryAfter || ev.Corr.Duplicate != c.dup {
			t.Errorf("call %d (%s): %d Retry-After %q duplicate %v, want %d %q %v", i, c.id, code, hdr.Get("Retry-After"), ev.Corr.Duplicate, c.code, c.retryAfter, c.dup)
		}
	}
	if draws != 2 {
		t.Errorf("%d draws for two messages", draws)
	}
	if st := h.s.Stats(); st.Faulted != 3 || st.Duplicates != 1 {
		t.Errorf("stats %+v", st)
	}
	if _, err := New(Options{LogPath: h.log + ".2", Fault: Fault{Share: 1, Delay: time.Second, RetryAfter: time.Second}}, nil); err == nil {
		t.Error("a Retry-After without a code accepted")
	}
}

// postHeader is h.post with the answer's headers.
func postHeader(t *testing.T, h *harness, route, body string) (int, http.Header) {
	t.Helper()
	resp, err := h.srv.Client().Post(h.srv.URL+route, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}
