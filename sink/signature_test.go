package sink

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/msgload/msgload/rundir"
)

const testWhsec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// A call signed by the Standard Webhooks library (as the simulator signs)
// is logged with the scheme, the skew of its timestamp against the sink's
// clock, and verified when the sink has the secret; a wrong signature is
// "no", malformed headers a problem, and a call without the headers has
// no sig.
func TestSignatureLogged(t *testing.T) {
	wh, err := standardwebhooks.NewWebhook(testWhsec)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"eventId":"e","notificationId":"n-1","externalId":"order-1","status":"DELIVERED","errorCode":0,"updatedAt":"2026-11-23T14:00:00Z"}`
	ts := fixedNow.Add(-3 * time.Second)
	sig, err := wh.Sign("msg_1", ts, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	signed := http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {strconv.FormatInt(ts.Unix(), 10)}, "Webhook-Signature": {sig}}
	wrong := signed.Clone()
	wrong.Set("Webhook-Signature", "v1,"+base64.StdEncoding.EncodeToString(make([]byte, 32)))
	bad := signed.Clone()
	bad.Set("Webhook-Timestamp", "soon")
	for _, c := range []struct {
		name   string
		secret string
		hdr    http.Header
		want   *rundir.Signature
	}{
		{"verified", testWhsec, nil, &rundir.Signature{Scheme: rundir.SignatureStandardWebhooks, Skew: 3, Verified: "yes"}},
		{"no secret", "", nil, &rundir.Signature{Scheme: rundir.SignatureStandardWebhooks, Skew: 3}},
		{"wrong", "", wrong, &rundir.Signature{Scheme: rundir.SignatureStandardWebhooks, Skew: 3}},
		{"malformed", "", bad, &rundir.Signature{Scheme: rundir.SignatureStandardWebhooks, Problem: "webhook-timestamp: not Unix seconds"}},
		{"unsigned", "", http.Header{}, nil},
	} {
		h := newHarness(t, Options{})
		h.s.opts.Auth.WebhookSecret = c.secret // the check only (a configured secret also refuses: TestAuth*)
		hdr := c.hdr
		if hdr == nil {
			hdr = signed
		}
		if code := h.post("/webhook", body, hdr); code != 200 {
			t.Fatalf("%s: %d", c.name, code)
		}
		got := h.last().Sig
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%s: sig %+v, want %+v", c.name, got, c.want)
		}
	}
	// verified no: the sink's secret, another signature
	g := (&Sink{opts: Options{Auth: Auth{WebhookSecret: testWhsec}}}).signature(&http.Request{Header: wrong}, []byte(body), fixedNow)
	if g == nil || g.Verified != "no" {
		t.Errorf("a wrong signature: %+v", g)
	}
}

// FuzzParseWebhookSignature: the parser of the three headers never panics;
// what it accepts has a printable id, at least one 32-byte v1 signature,
// and verifies against the HMAC of its own id and timestamp.
func FuzzParseWebhookSignature(f *testing.F) {
	f.Add("msg_1", "1764150000", "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=")
	f.Add("msg_1", "1764150000", "v1a,abc v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v2,x")
	f.Add("", "", "")
	f.Add("msg 1", "-5", "v1,")
	f.Fuzz(func(t *testing.T, id, ts, sig string) {
		w, err := ParseWebhookSignature(id, ts, sig)
		if err != nil {
			if strings.Contains(err.Error(), sig) && len(sig) > 8 {
				t.Errorf("the error repeats the header: %v", err)
			}
			return
		}
		if w.ID != id || len(w.V1) == 0 || len(w.ID) > maxWebhookID {
			t.Fatalf("accepted %+v", w)
		}
		for _, m := range w.V1 {
			if len(m) != sha256.Size {
				t.Fatalf("a v1 signature of %d bytes", len(m))
			}
		}
		key := []byte("k")
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + strconv.FormatInt(w.Timestamp.Unix(), 10) + ".body"))
		w2, err := ParseWebhookSignature(id, ts, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		if err != nil || !w2.Verify(key, []byte("body")) {
			t.Fatalf("its own signature does not verify: %v", err)
		}
	})
}
