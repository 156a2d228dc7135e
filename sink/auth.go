package sink

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// DefaultSignatureHeader carries the HMAC-SHA256 body signature.
const DefaultSignatureHeader = "X-Msgload-Signature"

// Auth configures optional authentication of the calls the sink receives. The
// seeds do not say how the services authenticate their callbacks, so several
// schemes are offered; when more than one is set, a call passing any one of them
// is accepted. With none set every call is accepted. Secrets are never logged.
type Auth struct {
	BasicUser     string // HTTP Basic: user and password
	BasicPassword string
	BearerToken   string // Authorization: Bearer <token>
	// HMACSecret: the header SignatureHeader carries hex(HMAC-SHA256(secret, body)),
	// optionally prefixed "sha256=".
	HMACSecret      []byte
	SignatureHeader string // default DefaultSignatureHeader
	// WebhookSecret: a Standard Webhooks secret ("whsec_<base64>"): headers
	// webhook-id, webhook-timestamp (±5 minutes) and webhook-signature "v1,<base64>".
	WebhookSecret string
}

// Errors of authentication.
var (
	errUnauthorized = errors.New("unauthorized")
	ErrAuthConfig   = errors.New("bad authentication configuration")
)

// Enabled reports whether any scheme is configured.
func (a Auth) Enabled() bool {
	return a.BasicUser != "" || a.BearerToken != "" || len(a.HMACSecret) > 0 || a.WebhookSecret != ""
}

// authenticator checks a request against the configured schemes.
type authenticator struct {
	a  Auth
	wh *standardwebhooks.Webhook
}

func newAuthenticator(a Auth) (*authenticator, error) {
	if a.SignatureHeader == "" {
		a.SignatureHeader = DefaultSignatureHeader
	}
	if a.BasicUser == "" && a.BasicPassword != "" {
		return nil, fmt.Errorf("%w: a Basic password without a user", ErrAuthConfig)
	}
	au := &authenticator{a: a}
	if a.WebhookSecret != "" {
		wh, err := standardwebhooks.NewWebhook(a.WebhookSecret)
		if err != nil {
			// The library's error does not contain the secret, but say only what is wrong.
			return nil, fmt.Errorf("%w: the Standard Webhooks secret is not whsec_<base64>", ErrAuthConfig)
		}
		au.wh = wh
	}
	return au, nil
}

// check returns nil when the call may pass, or an error saying why not (never
// containing what was presented).
func (au *authenticator) check(r *http.Request, body []byte) error {
	a := au.a
	if !a.Enabled() {
		return nil
	}
	var reasons []string
	if a.BasicUser != "" {
		if u, p, ok := r.BasicAuth(); ok {
			uok := subtle.ConstantTimeCompare([]byte(u), []byte(a.BasicUser))
			pok := subtle.ConstantTimeCompare([]byte(p), []byte(a.BasicPassword))
			if uok&pok == 1 {
				return nil
			}
			reasons = append(reasons, "basic: wrong credentials")
		} else {
			reasons = append(reasons, "basic: no credentials")
		}
	}
	if a.BearerToken != "" {
		h := r.Header.Get("Authorization")
		if tok, ok := cutPrefixFold(h, "Bearer "); ok {
			if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(a.BearerToken)) == 1 {
				return nil
			}
			reasons = append(reasons, "bearer: wrong token")
		} else {
			reasons = append(reasons, "bearer: no token")
		}
	}
	if len(a.HMACSecret) > 0 {
		sig := strings.TrimSpace(r.Header.Get(a.SignatureHeader))
		sig, _ = cutPrefixFold(sig, "sha256=")
		if sig == "" {
			reasons = append(reasons, "hmac: no signature")
		} else if got, err := hex.DecodeString(sig); err != nil {
			reasons = append(reasons, "hmac: signature is not hexadecimal")
		} else {
			mac := hmac.New(sha256.New, a.HMACSecret)
			mac.Write(body)
			if hmac.Equal(got, mac.Sum(nil)) {
				return nil
			}
			reasons = append(reasons, "hmac: signature does not match")
		}
	}
	if au.wh != nil {
		err := au.wh.Verify(body, r.Header)
		if err == nil {
			return nil
		}
		switch {
		case errors.Is(err, standardwebhooks.ErrRequiredHeaders):
			reasons = append(reasons, "standard-webhooks: missing headers")
		case errors.Is(err, standardwebhooks.ErrMessageTooOld), errors.Is(err, standardwebhooks.ErrMessageTooNew):
			reasons = append(reasons, "standard-webhooks: timestamp out of tolerance")
		case errors.Is(err, standardwebhooks.ErrInvalidHeaders):
			reasons = append(reasons, "standard-webhooks: invalid headers")
		default:
			reasons = append(reasons, "standard-webhooks: signature does not match")
		}
	}
	return fmt.Errorf("%w: %s", errUnauthorized, strings.Join(reasons, "; "))
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
