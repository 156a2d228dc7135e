package sink

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/msgload/msgload/rundir"
)

// get asks h's server for path with the given Authorization header ("" for none).
func get(t *testing.T, base, path, authz string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// With each callback scheme configured and a read token, the read API answers
// only to the read token: not to nothing, not to the callback credentials.
func TestReadAPIAuth(t *testing.T) {
	const body = `{"notificationId":"n1","status":"DELIVERED"}`
	const readTok = "read-token-secret"
	mac := hmac.New(sha256.New, []byte("hmac-secret"))
	mac.Write([]byte(body))
	whSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("standard-webhooks-secret"))
	wh, err := standardwebhooks.NewWebhook(whSecret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	whSig, err := wh.Sign("msg_1", now, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	basicHdr := "Basic " + base64.StdEncoding.EncodeToString([]byte("u:pw-secret"))
	rows := []struct {
		name     string
		auth     Auth
		callback http.Header // the callback's own credentials
		authz    string      // those credentials as an Authorization header, tried on the read API
	}{
		{"basic", Auth{BasicUser: "u", BasicPassword: "pw-secret"}, http.Header{"Authorization": {basicHdr}}, basicHdr},
		{"bearer", Auth{BearerToken: "tok-secret"}, http.Header{"Authorization": {"Bearer tok-secret"}}, "Bearer tok-secret"},
		{"hmac", Auth{HMACSecret: []byte("hmac-secret")}, http.Header{DefaultSignatureHeader: {hex.EncodeToString(mac.Sum(nil))}}, "Bearer hmac-secret"},
		{"standard webhooks", Auth{WebhookSecret: whSecret},
			http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {strconv.FormatInt(now.Unix(), 10)}, "Webhook-Signature": {whSig}}, "Bearer " + whSecret},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			h := newHarness(t, Options{Auth: r.auth, ReadToken: readTok})
			if code := h.post("/webhook", body, r.callback); code != 200 {
				t.Fatalf("callback with its credentials: %d", code)
			}
			for _, path := range []string{"/v1/events", "/v1/stats"} {
				for _, c := range []struct {
					authz string
					want  int
				}{
					{"", 401},
					{r.authz, 401},
					{"Bearer " + readTok + "x", 401},
					{"Basic " + base64.StdEncoding.EncodeToString([]byte("u:"+readTok)), 401},
					{"Bearer " + readTok, 200},
					{"bearer " + readTok, 200},
				} {
					if code := get(t, h.srv.URL, path, c.authz); code != c.want {
						t.Errorf("%s with %q: %d, want %d", path, c.authz, code, c.want)
					}
				}
			}
			if code := get(t, h.srv.URL, "/healthz", ""); code != 200 {
				t.Errorf("/healthz: %d", code)
			}
			raw, _ := os.ReadFile(h.log)
			if strings.Contains(string(raw), readTok) {
				t.Error("the read token reached the log")
			}
		})
	}
	// No read token (an embedded sink on loopback): open.
	h := newHarness(t, Options{})
	if code := get(t, h.srv.URL, "/v1/stats", ""); code != 200 {
		t.Errorf("no read token: %d", code)
	}
	// A read token that is also a callback secret would let the service read.
	if _, err := New(Options{LogPath: filepath.Join(t.TempDir(), "e.jsonl"), Auth: Auth{BearerToken: "same"}, ReadToken: "same"}, nil); err == nil {
		t.Error("a read token equal to the callback bearer token was accepted")
	}
}

// serveT runs Serve in the background until the test ends and returns the
// address it listens on and the notices it gave.
func serveT(t *testing.T, cfg ServerConfig) (addr string, notices func() []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	var mu sync.Mutex
	var got []string
	cfg.Ready = func(a string) { ready <- a }
	cfg.Notify = func(m string) { mu.Lock(); got = append(got, m); mu.Unlock() }
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	return addr, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) }
}

// Beyond loopback with no read token, Serve generates one into DIR/read-token
// (0600, reused on restart), names the file and never the token, and warns
// when callbacks are not authenticated. /metrics and /healthz stay open.
func TestServeBeyondLoopback(t *testing.T) {
	dir := t.TempDir()
	tokens := map[string]bool{}
	for run := range 2 {
		addr, notices := serveT(t, ServerConfig{Addr: "0.0.0.0:0", Dir: dir})
		_, port, _ := net.SplitHostPort(addr)
		base := "http://127.0.0.1:" + port
		b, err := os.ReadFile(filepath.Join(dir, ReadTokenFile))
		if err != nil {
			t.Fatal(err)
		}
		tok := strings.TrimSpace(string(b))
		tokens[tok] = true
		if st, _ := os.Stat(filepath.Join(dir, ReadTokenFile)); st.Mode().Perm() != 0o600 || len(tok) < 40 {
			t.Errorf("token file mode %v, token of %d characters", st.Mode().Perm(), len(tok))
		}
		for _, path := range []string{"/v1/events", "/v1/stats"} {
			if code := get(t, base, path, ""); code != 401 {
				t.Errorf("run %d: %s without the token: %d", run, path, code)
			}
			if code := get(t, base, path, "Bearer "+tok); code != 200 {
				t.Errorf("run %d: %s with the token: %d", run, path, code)
			}
		}
		for _, path := range []string{"/metrics", "/healthz"} {
			if code := get(t, base, path, ""); code != 200 {
				t.Errorf("%s: %d", path, code)
			}
		}
		n := strings.Join(notices(), "\n")
		if !strings.Contains(n, filepath.Join(dir, ReadTokenFile)) || !strings.Contains(n, "no authentication of callbacks") || strings.Contains(n, tok) {
			t.Errorf("notices:\n%s", n)
		}
	}
	if len(tokens) != 1 {
		t.Errorf("a restart made a new token")
	}

	// A read token given (and callback auth) beyond loopback: no file, no warning.
	dir2 := t.TempDir()
	addr, notices := serveT(t, ServerConfig{Addr: "0.0.0.0:0", Dir: dir2,
		Options: Options{ReadToken: "given-read-token", Auth: Auth{BearerToken: "cb"}}})
	_, port, _ := net.SplitHostPort(addr)
	if code := get(t, "http://127.0.0.1:"+port, "/v1/events", "Bearer given-read-token"); code != 200 {
		t.Errorf("given token: %d", code)
	}
	if _, err := os.Stat(filepath.Join(dir2, ReadTokenFile)); err == nil || len(notices()) != 0 {
		t.Errorf("token file written or notices %q with a token given", notices())
	}

	// On loopback with no token: open, and no file.
	dir3 := t.TempDir()
	addr, _ = serveT(t, ServerConfig{Addr: "127.0.0.1:0", Dir: dir3})
	if code := get(t, "http://"+addr, "/v1/stats", ""); code != 200 {
		t.Errorf("loopback: %d", code)
	}
	if _, err := os.Stat(filepath.Join(dir3, ReadTokenFile)); err == nil {
		t.Error("token file written on loopback")
	}
}

// The read token file is a secret file: read through rundir's bounded
// reader (at most rundir.MaxSecretBytes, a regular file) like the others. A
// file larger than that, or one that is /dev/zero, is refused naming the
// file, never read whole (before, it was read with os.ReadFile: /dev/zero
// until memory ran out; the big file case is the one that fails there without
// hanging the test).
func TestEnsureReadTokenBounded(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("t", rundir.MaxSecretBytes+1)
	if err := os.WriteFile(filepath.Join(dir, ReadTokenFile), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, _, err := ensureReadToken(dir)
	if !errors.Is(err, rundir.ErrTooLarge) || tok != "" {
		t.Fatalf("a %d-byte token file: token of %d bytes, err %v; want it refused as too large", len(big), len(tok), err)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		return
	}
	zdir := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(zdir, ReadTokenFile)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ensureReadToken(zdir); !errors.Is(err, rundir.ErrNotRegular) {
		t.Fatalf("a token file on /dev/zero: err %v, want it refused as not a regular file", err)
	}
}
