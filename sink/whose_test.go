package sink

import (
	"fmt"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestWhoseEvents: a sink serving one part of a run with parts takes only
// that part's tags as its own (the parts of a run share its id and number
// their messages from 1 each); untagged webhooks are known by the
// notificationId the service gave them, so two clients' (or two runs')
// notifications with the same externalId of their own are two
// notifications, not one and its duplicate.
func TestWhoseEvents(t *testing.T) {
	h := newHarness(t, Options{RunID: "r1", Part: "notify"})
	first := fixedNow.Add(-time.Second)
	ours := rundir.Tag{Run: "r1", Part: "notify", Seq: 1, First: first}
	other := rundir.Tag{Run: "r1", Part: "messaging", Seq: 1, First: first}
	webhook := func(nid, ext string) string {
		return fmt.Sprintf(`{"eventId":"e","notificationId":%q,"externalId":%q,"status":"DELIVERED","errorCode":0,"updatedAt":"2026-11-23T14:00:00Z"}`, nid, ext)
	}
	for _, c := range []struct {
		name, route, body string
		matched, dup      bool
	}{
		{"this part's webhook", "/webhook", webhook("n-1", ours.ExternalID()), true, false},
		{"another part's callback, same run and sequence", "/callback", status(txID(1), "DELIVERED", "sms", &other), false, false},
		{"another part's webhook", "/webhook", webhook("n-2", other.ExternalID()), false, false},
		{"client a's own externalId", "/webhook", webhook("n-3", "order-1"), false, false},
		{"client b's (or another run's) same externalId", "/webhook", webhook("n-4", "order-1"), false, false},
		{"client a's again: the service's duplicate", "/webhook", webhook("n-3", "order-1"), false, true},
	} {
		if code := h.post(c.route, c.body, nil); code != 200 {
			t.Fatalf("%s: answered %d", c.name, code)
		}
		ev := h.last()
		if ev.Corr.Matched != c.matched || ev.Corr.Duplicate != c.dup {
			t.Errorf("%s: matched %v duplicate %v, want %v %v", c.name, ev.Corr.Matched, ev.Corr.Duplicate, c.matched, c.dup)
		}
	}
	if st := h.s.Stats(); st.Duplicates != 1 || st.TerminalMatched != 1 {
		t.Errorf("stats %+v: want 1 duplicate, 1 terminal message of this part", st)
	}
}
