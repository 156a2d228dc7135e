package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestGraceWaitsForHeldCallbacks: against the embedded simulator the grace wait
// lasts until every accepted message's final callback has been made. With every
// callback held back 2 s, a wait that ends when nothing is pending (all statuses
// drawn, callbacks still held) closes the simulator before they go out, and the
// report finds messages lost that were delivered.
func TestGraceWaitsForHeldCallbacks(t *testing.T) {
	for _, api := range []string{"notify", "messaging"} {
		t.Run(api, func(t *testing.T) {
			src := `name: held-callbacks
api: ` + api + `
target: embedded
clients: 1
load: { rate: 20/s, requests: 20 }
limit: { rate: 1000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x {{.Seq}}"MSGITEM }
delivery: { grace: 10s }
sim:
  rateLimit: { rate: 1000/1m }
  callbacks: { delay: 2s }
  notifyDelay: { median: 100ms, p95: 200ms }
  profiles: { sms: { median: 100ms, p95: 200ms, outcomes: { DELIVERED: 100% } } }
thresholds: [ "delivery.lost == 0", "delivery.received == 20" ]
`
			item := ""
			if api == "messaging" {
				item = ", scenario: [ { channel: sms, sender: msgload } ]"
			}
			src = strings.Replace(src, "MSGITEM", item, 1)
			p, stderr := runSource(t, "held.yaml", t.TempDir(), src)
			requireGreen(t, p, stderr)
			var meta rundir.Meta
			b, _ := os.ReadFile(filepath.Join(p.Dir, rundir.MetaFile))
			if err := json.Unmarshal(b, &meta); err != nil {
				t.Fatal(err)
			}
			if waited := meta.End.Sub(meta.AttackEnd); waited >= 10*time.Second {
				t.Errorf("waited %v after the attack: the whole grace period, though every callback was made after about 2s", waited)
			}
			if strings.Contains(stderr, "grace period of") {
				t.Errorf("grace ran out:\n%s", stderr)
			}
		})
	}
}
