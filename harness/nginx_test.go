package harness

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/internal/testnet"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
)

// nginxRuns is how many runs of each burst TestNginxLimitReq makes at once
// (README quotes 5 of 5: go test ./harness -run NginxLimitReq -nginx-runs 5).
var nginxRuns = flag.Int("nginx-runs", 1, "TestNginxLimitReq: runs of each burst, all at once")

// nginxBursts are the limit_req bursts TestNginxLimitReq puts nginx's zones at.
var nginxBursts = []int{0, 5, 20}

// TestNginxLimitReq puts a real nginx (nginx-light) with limit_req, 30r/m,
// keyed by the bearer token, nodelay, status 429, in front of the simulator
// with its own limit off, and runs a client at 60/min for 60 s through it in
// exceed mode: the fit names "token bucket, 30 per 1m" with nginx's capacity,
// burst + 1. nginx keeps a leaky bucket in milli-requests on a millisecond
// clock, and 60/min lands every other request on its refill edge: the fit
// used to say "cannot tell" (2 of 61 decisions a hair off the edge) or name
// "1 per 1s", which explains every decision only with each on its edge. Each
// burst has its own zone and port; every run has its own token, so its own
// key: all runs go at once (60 s). Skips without nginx unless CI=true, and
// with -short.
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
	cfg := sim.DefaultConfig()
	cfg.RateLimit.Requests = 0 // nginx limits, the simulator does not
	sv, err := sim.New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	simSrv := httptest.NewServer(sv.Handler())
	defer simSrv.Close()
	ports := testnet.StartNginx(t, bin, simSrv.Listener.Addr().String(), nginxBursts)

	var wg sync.WaitGroup
	for i, burst := range nginxBursts {
		for run := range *nginxRuns {
			wg.Go(func() { checkNginxRun(t, burst, run, ports[i], simSrv.URL) })
		}
	}
	wg.Wait()
}

// checkNginxRun runs one client at 60/min for 60 s through nginx's port and
// checks the limiter named.
func checkNginxRun(t *testing.T, burst, run, port int, simURL string) {
	src := fmt.Sprintf(`name: nginx-b%d-%d
api: notify
target: { baseUrl: "http://127.0.0.1:%d", tokenUrl: "%s/oauth/token" }
clients:
  - { clientId: demo-1, clientSecret: demo }
load: { profile: constant, rate: 60/1m, duration: 60s }
limit: { rate: 30/1m, mode: exceed }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
retry: { max: 0, timeout: 5s }
delivery: { via: none }
`, burst, run, port, simURL)
	s, err := scenarios.Parse("nginx.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
	if err != nil {
		t.Error(err)
		return
	}
	res, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: new(strings.Builder)})
	if err != nil || res.Parts[0].Summary == nil {
		t.Errorf("burst %d run %d: %v", burst, run, err)
		return
	}
	a := res.Parts[0].Summary.RateLimit.Algorithm
	if a.Verdict != "token bucket" || a.Limit != 30 || a.Window != 60 || a.Capacity != float64(burst+1) {
		t.Errorf("burst %d run %d: %s, %g per %gs, capacity %g; want token bucket, 30 per 60s, capacity %d:\n  %s",
			burst, run, a.Verdict, a.Limit, a.Window, a.Capacity, burst+1, strings.Join(a.Evidence, "\n  "))
	} else {
		t.Logf("burst %d run %d: token bucket, 30 per 1m, capacity %g", burst, run, a.Capacity)
	}
}
