package harness

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
	ports := startNginx(t, bin, simSrv.Listener.Addr().String())

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

// startNginx writes an nginx.conf into a temporary directory, one server per
// burst of nginxBursts on a free loopback port, each with its own zone,
// proxying to upstream, and runs nginx in the foreground (one process) until
// the test ends. It returns the ports.
func startNginx(t *testing.T, bin, upstream string) []int {
	dir := t.TempDir()
	var b strings.Builder
	if os.Geteuid() == 0 {
		b.WriteString("user root;\n") // workers as nobody could not use the temp directory (0700)
	}
	fmt.Fprintf(&b, `daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
`, dir)
	ports := make([]int, len(nginxBursts))
	for i, burst := range nginxBursts {
		ports[i] = freePort(t)
		burstArg := "" // nginx refuses burst=0; without it the burst is 0
		if burst > 0 {
			burstArg = fmt.Sprintf(" burst=%d", burst)
		}
		fmt.Fprintf(&b, `  limit_req_zone $http_authorization zone=z%[1]d:1m rate=30r/m;
  server {
    listen 127.0.0.1:%[2]d;
    location / {
      limit_req zone=z%[1]d%[4]s nodelay;
      limit_req_status 429;
      proxy_pass http://%[3]s;
    }
  }
`, burst, ports[i], upstream, burstArg)
	}
	b.WriteString("}\n")
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", conf)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	for _, p := range ports {
		waitListening(t, p, exited, func() string {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			return fmt.Sprintf("%v\n%s%s", waitErr, out.String(), log)
		})
	}
	return ports
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitListening waits until nginx accepts on port, failing the test with
// what nginx said when it exits or takes more than 10 s.
func waitListening(t *testing.T, port int, exited chan struct{}, said func() string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("nginx exited: %s", said())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx does not listen on %d after 10 s", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
