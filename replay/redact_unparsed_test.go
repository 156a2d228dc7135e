package replay

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unparsedCases are bodies the recorder once wrote with their secrets: each
// carries a distinct secret value.
var unparsedCases = []struct {
	name, ct, body, secret string
}{
	{"json with a BOM", "application/json", "\xef\xbb\xbf{\"password\":\"bom-secret-1\",\"a\":1}", "bom-secret-1"},
	{"json with a trailing comma", "application/json", `{"password":"comma-secret-2",}`, "comma-secret-2"},
	{"json with text after it", "application/json", `{"a":1} {"password":"after-secret-3"}`, "after-secret-3"},
	{"duplicated key, first value", "application/json", `{"password":"first-secret-4","password":"last-secret-4"}`, "first-secret-4"},
	{"duplicated key, nested", "application/json", `{"a":{"client_secret":"nest-secret-5","client_secret":"x"}}`, "nest-secret-5"},
	{"multipart password", "multipart/form-data; boundary=XyZ", "--XyZ\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nu\r\n--XyZ\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nmulti-secret-6\r\n--XyZ--\r\n", "multi-secret-6"},
	{"plain text", "text/plain", "password is text-secret-7", "text-secret-7"},
}

// A body the redactor cannot parse completely is redacted whole (nil), a
// parsed one keeps no secret; and every secret value, the first of a
// duplicated key included, is scrubbed from an echo of it.
func TestRedactBodiesItCannotParse(t *testing.T) {
	for _, tc := range unparsedCases {
		r := newRedactor(RedactOptions{})
		out := r.Body(tc.ct, []byte(tc.body))
		if bytes.Contains(out, []byte(tc.secret)) {
			t.Errorf("%s: secret kept in %q", tc.name, out)
		}
		if out != nil {
			var v any
			if err := json.Unmarshal(out, &v); err != nil || secretKey(r, v) != "" {
				t.Errorf("%s: kept %q, want it redacted whole or parsed JSON without secrets", tc.name, out)
			}
		}
		if tc.name != "plain text" { // a free-text secret has no name to find it by
			if echo := r.Scrub([]byte(`{"echo":"` + tc.secret + `"}`)); bytes.Contains(echo, []byte(tc.secret)) {
				t.Errorf("%s: echoed secret not scrubbed: %s", tc.name, echo)
			}
		}
	}
}

// Header names that look like credentials are removed, the idempotency key
// and ordinary headers kept.
func TestRedactCredentialLikeHeaders(t *testing.T) {
	r := newRedactor(RedactOptions{})
	h := http.Header{}
	for _, n := range []string{"X-Auth", "X-Auth-User", "X-Session-Token", "X-Signing-Key", "X-Shared-Secret", "Cookie", "Authorization", "Proxy-Authorization", "Idempotency-Key", "Content-Type", "X-Request-Id"} {
		h.Set(n, "value-of-"+n)
	}
	out := r.Headers(h)
	for _, gone := range []string{"X-Auth", "X-Auth-User", "X-Session-Token", "X-Signing-Key", "X-Shared-Secret", "Cookie", "Authorization", "Proxy-Authorization"} {
		if out.Get(gone) != "" {
			t.Errorf("%s kept", gone)
		}
	}
	for _, kept := range []string{"Idempotency-Key", "Content-Type", "X-Request-Id"} {
		if out.Get(kept) == "" {
			t.Errorf("%s removed", kept)
		}
	}
}

// End to end: the recorder in front of an upstream that echoes the request
// writes none of these secrets (nor an X-Auth header's value), and says why a
// request body is missing.
func TestRecorderRedactsUnparsedBodies(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		w.Write(b)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	f, _ := os.Create(path)
	rec, err := NewRecorder(RecorderOptions{Upstream: u, Out: f})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rec)
	secrets := []string{"xauth-header-secret"}
	for _, tc := range unparsedCases {
		secrets = append(secrets, tc.secret)
		req, _ := http.NewRequest("POST", srv.URL+"/api/v1/notifications", strings.NewReader(tc.body))
		req.Header.Set("Content-Type", tc.ct)
		req.Header.Set("X-Auth", "xauth-header-secret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	srv.Close()
	rec.Close()
	f.Close()
	assertNoSecrets(t, path, secrets)
	b, _ := os.ReadFile(path)
	if n := bytes.Count(b, []byte(bodyRedactedWhole)); n < 4 {
		t.Errorf("%d exchanges say their body was not parsed, want at least 4 (the unparsable ones)", n)
	}
}
