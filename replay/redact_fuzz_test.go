package replay

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"
)

// FuzzRedactBody: whatever a client sends, the redacted body never carries a
// secret field, neither as a JSON key at any depth nor as a form field, and a
// body that is neither parsed JSON nor a form is redacted whole (nil), never
// kept as is.
func FuzzRedactBody(f *testing.F) {
	f.Add("application/json", []byte(`{"a":{"password":"x","b":[{"client_secret":"y"}]},"c":"+79991234567"}`))
	f.Add("application/x-www-form-urlencoded", []byte("grant_type=client_credentials&client_id=a&client_secret=s"))
	f.Add("", []byte(`[{"Access_Token":"t"}]`))
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		r := newRedactor(RedactOptions{MaskRecipients: true})
		out := r.Body(ct, body)
		var v any
		if json.Unmarshal(out, &v) == nil {
			if k := secretKey(r, v); k != "" {
				t.Fatalf("secret key %q kept in %s", k, out)
			}
			return
		}
		if out == nil || len(bytes.TrimSpace(body)) == 0 {
			return // redacted whole, or nothing to redact
		}
		{
			vals, err := url.ParseQuery(string(out))
			if err != nil {
				t.Fatalf("form output does not parse: %q", out)
			}
			for k := range vals {
				if r.Secret(k) {
					t.Fatalf("secret form field %q kept in %q", k, out)
				}
			}
		}
	})
}

func secretKey(r *redactor, v any) string {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if r.Secret(k) {
				return k
			}
			if s := secretKey(r, e); s != "" {
				return s
			}
		}
	case []any:
		for _, e := range x {
			if s := secretKey(r, e); s != "" {
				return s
			}
		}
	}
	return ""
}
