package characterise

import (
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/sim"
)

// A limiter nobody here wrote: nginx (nginx-light) limit_req 30r/m burst=5
// nodelay, keyed by the bearer token, in front of the simulator with its own
// limit off (as harness's TestNginxLimitReq starts it). characterise, as
// against a real target (a cool-down before each probe that needs a cold
// limiter), names a token bucket of 30 per minute and capacity 6 (burst + 1).
// About 1.5 minutes: skipped with -short, and without nginx unless CI=true.
func TestNginxLimitReq(t *testing.T) {
	if testing.Short() {
		t.Skip("1.5 minutes of traffic through nginx: not with -short")
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
	port := startNginx(t, bin, simSrv.Listener.Addr().String())
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
	res := characterise(t, f, Options{Budget: 400, MaxWindow: 20 * time.Second})
	var text strings.Builder
	_ = res.Contract.Text(&text)
	for _, fd := range res.Contract.Findings {
		if fd.Expected != "" && fd.Verdict != reports.VerdictPass {
			t.Errorf("%s: %s\n%s", fd.Rule, fd.Reason, text.String())
		}
	}
	t.Log(text.String())
}

// startNginx runs nginx in the foreground with one limit_req server (30r/m
// burst=5 nodelay, status 429) proxying to upstream, until the test ends; it
// returns the port.
func startNginx(t *testing.T, bin, upstream string) int {
	dir := t.TempDir()
	var b strings.Builder
	if os.Geteuid() == 0 {
		b.WriteString("user root;\n") // workers as nobody could not use the temp directory (0700)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
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
  limit_req_zone $http_authorization zone=z:1m rate=30r/m;
  server {
    listen 127.0.0.1:%[2]d;
    location / {
      limit_req zone=z burst=5 nodelay;
      limit_req_status 429;
      proxy_pass http://%[3]s;
    }
  }
}
`, dir, port, upstream)
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return port
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx does not listen on %d: %s", port, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
