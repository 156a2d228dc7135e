package characterise

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/internal/testnet"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/sim"
)

// A limiter nobody here wrote: nginx (nginx-light) limit_req 30r/m burst=5
// nodelay, keyed by the bearer token, in front of the simulator with its own
// limit off (as harness's TestNginxLimitReq starts it). characterise, as
// against a real target (a cool-down before each probe that needs a cold
// limiter), names a token bucket of 30 per minute and capacity 6 (burst + 1):
// the burst probe's rules, so it alone runs. About a minute: skipped with
// -short, and without nginx unless CI=true.
func TestNginxLimitReq(t *testing.T) {
	if testing.Short() {
		t.Skip("a minute of traffic through nginx: not with -short")
	}
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("nginx is required when CI=true (apt-get install nginx-light)")
		}
		t.Skip("no nginx in PATH: apt-get install -y nginx-light to run this test")
	}
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.RateLimit.Requests = 0 // nginx limits, the simulator does not
	sv, err := sim.New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	simSrv := httptest.NewServer(sv.Handler())
	defer simSrv.Close()
	port := testnet.StartNginx(t, bin, simSrv.Listener.Addr().String(), []int{5})[0] // 30r/m burst=5 nodelay
	f, err := parse(t, fmt.Sprintf(`name: nginx
api: notify
target: { baseUrl: "http://127.0.0.1:%d", tokenUrl: "%s/oauth/token" }
clients:
  - { clientId: demo-1, clientSecret: demo }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
delivery: { via: none }
expect:
  rate_limit.algorithm: token bucket
  rate_limit.limit: 30/1m
  rate_limit.capacity: 6
`, port, simSrv.URL))
	if err != nil {
		t.Fatal(err)
	}
	res := characteriseOnly(t, f, Options{Budget: 400, MaxWindow: 20 * time.Second}, probeBurst)
	var text strings.Builder
	_ = res.Contract.Text(&text)
	for _, fd := range res.Contract.Findings {
		if fd.Expected != "" && fd.Verdict != reports.VerdictPass {
			t.Errorf("%s: %s\n%s", fd.Rule, fd.Reason, text.String())
		}
	}
	t.Log(text.String())
}
