package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"

	"github.com/msgload/msgload/rundir"
)

func checkStatus(s *Server, id, login string) (int, map[string]any) {
	r := httptest.NewRequest(http.MethodGet, "/messaging/v1/check-status/"+id, nil)
	r.SetBasicAuth(login, login)
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	var m map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &m)
	return w.Code, m
}

// TestSettledNotHeld: once messages are final the simulator holds none of
// them in memory (no map entry, no event waiting for the retention's end),
// yet check-status still answers each by its txId for the whole retention —
// its final state, channel, code and trackData — and only to its account;
// an id that names a stored number but is not that message's is not found.
func TestSettledNotHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 300
		cfg := engineConfig()
		cfg.Messaging.Accounts[0].Password = "demo"
		cfg.Messaging.Accounts = append(cfg.Messaging.Accounts, Account{Login: "other", Password: "other", Channels: allChannels})
		cfg.Messaging.StatusRetention = time.Hour
		s, _ := newFakeSim(t, cfg)
		ids := make([]string, n)
		for i := range n {
			track := ""
			if i%3 != 0 {
				track = fmt.Sprintf(`"trackData":{"seq":%d,"pad":"%*s"},`, i, i%40, "")
			}
			w := sendAs(s, "demo", "demo", `{`+track+`"scenario":[`+itemJSON()+`]}`)
			var sr sendResponse
			if err := json.Unmarshal(w.Body.Bytes(), &sr); err != nil || w.Code != 200 {
				t.Fatalf("send %d: %d %s", i, w.Code, w.Body)
			}
			ids[i] = sr.TxID
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if held := s.heldMessages(); held != 0 {
			t.Errorf("%d settled messages held in memory, want 0", held)
		}
		s.eng.mu.Lock()
		events := len(s.eng.events)
		s.eng.mu.Unlock()
		if events != 0 {
			t.Errorf("%d events wait in the engine after every message settled, want 0", events)
		}
		for i, id := range ids {
			code, m := checkStatus(s, id, "demo")
			if code != 200 || m["txId"] != id || m["state"] != rundir.StateDelivered || m["channel"] != "sms" {
				t.Fatalf("message %d: %d %v", i, code, m)
			}
			td, _ := m["trackData"].(map[string]any)
			if (i%3 == 0) != (td == nil) || (td != nil && td["seq"] != float64(i)) {
				t.Fatalf("message %d: trackData %v", i, m["trackData"])
			}
		}
		if code, _ := checkStatus(s, ids[5], "other"); code != 404 {
			t.Errorf("another account's message: %d, want 404", code)
		}
		forged := uuid.MustParse(ids[7])
		forged[0] ^= 0xff
		if code, _ := checkStatus(s, forged.String(), "demo"); code != 404 {
			t.Errorf("an id with a stored number but not the message's: %d, want 404", code)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if code, _ := checkStatus(s, ids[0], "demo"); code != 404 {
			t.Errorf("after the retention: %d, want 404", code)
		}
	})
}
