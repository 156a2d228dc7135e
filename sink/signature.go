package sink

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/rundir"
)

// The Standard Webhooks headers.
const (
	hdrWebhookID        = "webhook-id"
	hdrWebhookTimestamp = "webhook-timestamp"
	hdrWebhookSignature = "webhook-signature"
	maxWebhookID        = 256 // bytes: a webhook-id longer is refused
	maxSignatures       = 16  // entries of webhook-signature read at most
)

// WebhookSignature is a call's Standard Webhooks headers, parsed.
type WebhookSignature struct {
	ID        string
	Timestamp time.Time // webhook-timestamp, whole seconds
	// V1 are the v1 signatures (HMAC-SHA256, 32 bytes each); entries of
	// other versions are skipped.
	V1 [][]byte
}

// ParseWebhookSignature parses the three Standard Webhooks headers (outside
// input): webhook-id printable ASCII of at most 256 bytes, webhook-timestamp
// Unix seconds in decimal, webhook-signature space-separated
// "version,base64" entries of which at least one is v1 and decodes to 32
// bytes. Errors name the header that is wrong, never what it holds.
func ParseWebhookSignature(id, ts, sig string) (WebhookSignature, error) {
	var w WebhookSignature
	if id == "" || len(id) > maxWebhookID || strings.IndexFunc(id, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		return w, errors.New("webhook-id: empty, too long or not printable")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sec < 0 || sec > 1<<40 {
		return w, errors.New("webhook-timestamp: not Unix seconds")
	}
	w.ID, w.Timestamp = id, time.Unix(sec, 0).UTC()
	for i, e := range strings.Fields(sig) {
		if i == maxSignatures {
			break
		}
		v, b64, ok := strings.Cut(e, ",")
		if !ok || v != "v1" {
			continue
		}
		mac, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(mac) != sha256.Size {
			return WebhookSignature{}, errors.New("webhook-signature: a v1 entry is not base64 of 32 bytes")
		}
		w.V1 = append(w.V1, mac)
	}
	if len(w.V1) == 0 {
		return WebhookSignature{}, errors.New("webhook-signature: no v1 entry")
	}
	return w, nil
}

// Verify reports whether one of the v1 signatures is the HMAC-SHA256 under
// key of "id.timestamp.body".
func (w WebhookSignature) Verify(key, body []byte) bool {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(w.ID + "." + strconv.FormatInt(w.Timestamp.Unix(), 10) + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, got := range w.V1 {
		if hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// webhookKey is the HMAC key of a "whsec_<base64>" secret (nil when it is
// not one).
func webhookKey(secret string) []byte {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || secret == "" {
		return nil
	}
	return k
}

// signature is what r's signature headers say (nil when it has none of
// them): the scheme and the skew of its timestamp against received, and
// whether it verifies when the sink has the webhook secret.
func (s *Sink) signature(r *http.Request, body []byte, received time.Time) *rundir.Signature {
	id, ts, sig := r.Header.Get(hdrWebhookID), r.Header.Get(hdrWebhookTimestamp), r.Header.Get(hdrWebhookSignature)
	if id == "" && ts == "" && sig == "" {
		return nil
	}
	w, err := ParseWebhookSignature(id, ts, sig)
	if err != nil {
		return &rundir.Signature{Scheme: rundir.SignatureStandardWebhooks, Problem: err.Error()}
	}
	g := &rundir.Signature{Scheme: rundir.SignatureStandardWebhooks, Skew: received.Sub(w.Timestamp).Seconds()}
	if k := webhookKey(s.opts.Auth.WebhookSecret); k != nil {
		g.Verified = map[bool]string{true: "yes", false: "no"}[w.Verify(k, body)]
	}
	return g
}
