package testnet

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartNginx writes an nginx.conf into a temporary directory, one server per
// burst of bursts on a free loopback port, each with its own limit_req zone
// of 30r/m keyed by the bearer token (nodelay, status 429), proxying to
// upstream, and runs nginx (bin) in the foreground (one process) until the
// test ends. It returns the ports, in the order of bursts: a limiter nobody
// here wrote, for the tests that measure one (harness, characterise).
func StartNginx(t testing.TB, bin, upstream string, bursts []int) []int {
	t.Helper()
	dir := t.TempDir()
	ports := make([]int, len(bursts))
	for i := range bursts {
		ports[i] = freePort(t)
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConf(dir, upstream, bursts, ports)), 0o600); err != nil {
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

// nginxConf is the configuration StartNginx runs: everything nginx writes
// goes under dir.
func nginxConf(dir, upstream string, bursts, ports []int) string {
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
	for i, burst := range bursts {
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
`, i, ports[i], upstream, burstArg)
	}
	b.WriteString("}\n")
	return b.String()
}

// freePort is FreeAddr's port.
func freePort(t testing.TB) int {
	t.Helper()
	_, port, err := net.SplitHostPort(FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitListening waits until nginx accepts on port, failing the test with
// what nginx said when it exits or takes more than 10 s.
func waitListening(t testing.TB, port int, exited chan struct{}, said func() string) {
	t.Helper()
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
