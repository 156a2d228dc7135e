package sink

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/msgload/msgload/internal/netguard"
	"github.com/msgload/msgload/rundir"
)

// ReadTokenFile is the file in the data directory where a standalone sink
// listening beyond loopback keeps the read token it generated when none was
// given (mode 0600; reused on restart).
const ReadTokenFile = "read-token"

// readAuth guards the read API (GET /v1/events, /v1/stats): they return
// recipients, incoming texts and the bodies of refused calls, so whenever a
// read token is set they answer only to "Authorization: Bearer <token>". The
// callback schemes do not open them: a service that may post callbacks may
// not read what others posted. With no token (loopback) they answer only to a
// loopback Host or the listen address (see netguard.GuardHost).
func (s *Sink) readAuth(route string, h http.HandlerFunc) http.HandlerFunc {
	if s.opts.ReadToken == "" {
		return netguard.GuardHost(h, s.opts.ListenAddr)
	}
	want := sha256.Sum256([]byte(s.opts.ReadToken))
	return func(w http.ResponseWriter, r *http.Request) {
		tok, ok := cutPrefixFold(r.Header.Get("Authorization"), "Bearer ")
		// Compare digests: constant time, and no hint of the token's length.
		got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			s.met.refused.WithLabelValues(route, refusedAuth).Inc()
			w.Header().Set("WWW-Authenticate", `Bearer realm="msgload sink read API"`)
			http.Error(w, "unauthorized: the read API needs the sink's read token", http.StatusUnauthorized)
			return
		}
		h(w, r)
	}
}

// checkReadToken refuses a read token that is also a callback credential: the
// service posting callbacks could then read the log.
func checkReadToken(o Options) error {
	t := o.ReadToken
	if t == "" {
		return nil
	}
	if t == o.Auth.BearerToken || t == o.Auth.BasicPassword || t == string(o.Auth.HMACSecret) || t == o.Auth.WebhookSecret {
		return fmt.Errorf("%w: the read token must differ from every callback secret", ErrAuthConfig)
	}
	return nil
}

// isLoopback reports whether a listener's address is reachable only from this host.
func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// ensureReadToken returns the read token kept in dir/read-token, creating the
// file with a new random token (32 bytes, base64url) when it is missing or
// empty. The token itself is never printed. The file is read as every secret
// file is (rundir.ReadSecretFile: a regular file of at most 8 KiB), so one
// replaced by /dev/zero or a huge file is refused, not read whole.
func ensureReadToken(dir string) (tok, path string, err error) {
	path = filepath.Join(dir, ReadTokenFile)
	b, err := rundir.ReadSecretFile(path)
	if err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, path, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", path, fmt.Errorf("read token: %w", err)
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	tok = base64.RawURLEncoding.EncodeToString(raw)
	if err := rundir.WriteFile(path, []byte(tok+"\n")); err != nil {
		return "", path, fmt.Errorf("read token: %w", err)
	}
	return tok, path, nil
}
