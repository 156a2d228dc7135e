package sink

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestReadEventsWindow: from= and to= bound the arrival of the events a run
// does not claim by its tag (untagged, malformed), inclusive at both ends;
// the run's tagged events come whenever they arrived, another run's never.
func TestReadEventsWindow(t *testing.T) {
	var now atomic.Int64
	at := func(s int) time.Time { return fixedNow.Add(time.Duration(s) * time.Second) }
	h := newHarness(t, Options{Now: func() time.Time { return time.Unix(0, now.Load()).UTC() }})
	post := func(s int, body string) {
		t.Helper()
		now.Store(at(s).UnixNano())
		h.post("/callback", body, nil)
	}
	sent := fixedNow.Add(-time.Hour)
	post(0, status(txID(1), "DELIVERED", "sms", &rundir.Tag{Run: "a", Seq: 1, First: sent})) // a, before the window
	post(1, status(txID(2), "DELIVERED", "sms", nil))                                        // untagged, before
	post(2, status(txID(3), "DELIVERED", "sms", nil))                                        // untagged, at from
	post(3, `{}`)                                                                            // malformed, inside
	post(3, status(txID(4), "DELIVERED", "sms", &rundir.Tag{Run: "b", Seq: 1, First: sent})) // another run, inside
	post(4, status(txID(5), "DELIVERED", "sms", nil))                                        // untagged, at to
	post(5, status(txID(6), "DELIVERED", "sms", nil))                                        // untagged, after
	post(6, status(txID(7), "DELIVERED", "sms", &rundir.Tag{Run: "a", Seq: 2, First: sent})) // a, after the window
	get := func(q url.Values) ([]string, int) {
		t.Helper()
		resp, err := h.srv.Client().Get(h.srv.URL + "/v1/events?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return nil, resp.StatusCode
		}
		var p EventsPage
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range p.Events {
			k := e.Kind
			if e.Corr != nil && e.Corr.Key != "" {
				k = e.Corr.Key[len(e.Corr.Key)-1:]
			}
			got = append(got, k)
		}
		return got, 200
	}
	from, to := at(2).Format(time.RFC3339Nano), at(4).Format(time.RFC3339)
	tests := []struct {
		q    url.Values
		want string
	}{
		// The run's own events whenever they came, the untagged ones of the window.
		{url.Values{"run": {"a"}, "untagged": {"true"}, "from": {from}, "to": {to}}, "[1 3 malformed 5 7]"},
		// Without untagged=true the window changes nothing for a run.
		{url.Values{"run": {"a"}, "from": {from}, "to": {to}}, "[1 7]"},
		// Only a start.
		{url.Values{"run": {"a"}, "untagged": {"true"}, "from": {from}}, "[1 3 malformed 5 6 7]"},
		// No run: the window bounds every event.
		{url.Values{"from": {from}, "to": {to}}, "[3 malformed 4 5]"},
	}
	for _, tt := range tests {
		if got, code := get(tt.q); fmt.Sprint(got) != tt.want {
			t.Errorf("%s: %v (%d), want %s", tt.q.Encode(), got, code, tt.want)
		}
	}
	if _, code := get(url.Values{"from": {"yesterday"}}); code != 400 {
		t.Errorf("from=yesterday: %d, want 400", code)
	}
}
