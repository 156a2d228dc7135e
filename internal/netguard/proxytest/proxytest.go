// Package proxytest is for tests: it checks that a client of msgload does not
// send its requests through a proxy named in the environment. A proxy is a
// host nobody confirmed; a request through it hands over its whole content
// (client secrets, tokens).
package proxytest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// childEnv marks the run of a test as the child Run starts.
const childEnv = "MSGLOAD_PROXYTEST_CHILD"

// proxyVars are every variable net/http reads for a proxy, in both cases.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

// Trap is a proxy on loopback that records every request reaching it and
// answers 502.
type Trap struct {
	URL  string
	mu   sync.Mutex
	seen []string
}

// Seen returns what reached the trap: a line per request (method, target and
// the first bytes of the body).
func (p *Trap) Seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// Run runs body in a new process of this test binary (only the test t, a
// top-level test) with every proxy variable set to a Trap on loopback, and
// fails t when the child fails. A new process is needed because net/http
// reads the proxy variables once per process: after any earlier request, a
// t.Setenv would not reach it. Body gets a host name that is not loopback but
// reaches this machine ("0.0.0.0"), so an environment proxy would apply to
// it: Run checks that it does before running body, so the test cannot pass
// because the proxy was never in play.
func Run(t *testing.T, body func(t *testing.T, trap *Trap, host string)) {
	t.Helper()
	if os.Getenv(childEnv) != t.Name() {
		cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
			t.Fatalf("with a proxy in the environment (%v):\n%s", err, out)
		}
		return
	}
	trap := &Trap{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 200))
		trap.mu.Lock()
		trap.seen = append(trap.seen, r.Method+" "+r.RequestURI+" "+string(b))
		trap.mu.Unlock()
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(srv.Close)
	trap.URL = srv.URL
	for _, v := range proxyVars {
		t.Setenv(v, srv.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	probe := &http.Request{URL: &url.URL{Scheme: "http", Host: "0.0.0.0:1"}}
	if u, err := http.ProxyFromEnvironment(probe); err != nil || u == nil || u.Host != strings.TrimPrefix(srv.URL, "http://") {
		t.Fatalf("the environment proxy is not in play (%v, %v): the test would prove nothing", u, err)
	}
	body(t, trap, "0.0.0.0")
}
