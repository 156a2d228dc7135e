package scenarios

import (
	"strings"
	"testing"
)

// sim.idempotency: notify only, known answers, a processing time under the
// window — each refused at its line; a good block is read as written.
func TestSimIdempotency(t *testing.T) {
	base := "api: notify\ntarget: embedded\nload: { rate: 1/s, requests: 1 }\nsim:\n  idempotency: "
	for _, tc := range []struct{ block, want string }{
		{"{ changedBody: 418 }", "i.yaml:5:31: sim.idempotency.changedBody"},
		{"{ inFlight: wait }", "i.yaml:5:28: sim.idempotency.inFlight"},
		{"{ window: 1s, processing: 2s }", "sim.idempotency.processing: from 0 to under the window"},
	} {
		_, err := Parse("i.yaml", "", []byte(base+tc.block+"\n"), env(nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.block, err, tc.want)
		}
	}
	msg := strings.Replace(base, "api: notify", "api: messaging", 1) + "{ window: 1s }\n"
	if _, err := Parse("i.yaml", "", []byte(msg), env(nil)); err == nil || !strings.Contains(err.Error(), "sim.idempotency: the messaging API has no idempotency key") {
		t.Errorf("messaging: %v", err)
	}
	s, err := Parse("i.yaml", "", []byte(base+"{ window: 10s, changedBody: \"422\", inFlight: \"409\", processing: 100ms }\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if id := s.Sim.Idempotency; id.Window.D.Seconds() != 10 || id.ChangedBody != "422" || id.InFlight != "409" || id.Processing.D.Milliseconds() != 100 {
		t.Errorf("read %+v", id)
	}
}
