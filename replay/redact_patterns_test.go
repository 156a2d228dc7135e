package replay

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Issue 13: the redactor missed common secret names. Each one, in each
// place a request carries names (headers, JSON fields at any depth, query
// parameters, form fields), is removed with its value, whatever its case
// and separators.
func TestRedactCommonSecretNames(t *testing.T) {
	names := []string{
		"passwd", "api-key", "x_api_key", "apikey", "X-Api-Key", "secret", "password", "Passphrase",
		"client_secret", "clientSecret", "access_token", "X-Auth-Token", "refresh_token", "id_token",
		"api_key", "apiKey", "APIKEY", "aws_access_key_id", "private_key", "credentials", "client_assertion",
		"authorization", "session_id", "pwd",
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			value := "v-" + strings.ToLower(strings.ReplaceAll(name, "-", "")) + "-Secret-Value"
			r := newRedactor(RedactOptions{})
			if !r.Secret(name) {
				t.Fatalf("%q is not a secret name", name)
			}
			check := func(where, s string) {
				t.Helper()
				if strings.Contains(s, value) || strings.Contains(s, url.QueryEscape(value)) {
					t.Fatalf("%s keeps the value of %q: %s", where, name, s)
				}
			}
			// a header
			e := exchange{Method: "POST", Path: "/api/v1/notifications", Header: http.Header{}, RespHeader: http.Header{}}
			e.Header.Set(name, value)
			e.RespHeader.Set(name, value)
			// a query parameter
			e.Query = url.Values{name: {value}, "keep": {"1"}}.Encode()
			// a JSON field, nested
			body := `{"a":{"` + name + `":"` + value + `"},"keep":1}`
			r.Exchange(&e, []byte(body), []byte(body))
			for k, vs := range e.Header {
				check("header "+k, strings.Join(vs, ","))
			}
			if e.Header.Get(name) != "" || e.RespHeader.Get(name) != "" {
				t.Fatalf("header %q kept", name)
			}
			check("query", e.Query)
			if !strings.Contains(e.Query, "keep=1") {
				t.Fatalf("query lost its other parameter: %q", e.Query)
			}
			check("JSON body", e.Body)
			check("JSON answer", e.RespBody)
			if !strings.Contains(e.Body, `"keep":1`) {
				t.Fatalf("body lost its other field: %s", e.Body)
			}
			// a form field
			form := url.Values{name: {value}, "keep": {"1"}}.Encode()
			out := string(r.Body("application/x-www-form-urlencoded", []byte(form)))
			check("form", out)
			if out != "keep=1" {
				t.Fatalf("form: %q", out)
			}
		})
	}
	// names that are not secrets are kept
	r := newRedactor(RedactOptions{})
	for _, name := range []string{"externalId", "notificationText", "recipient", "Idempotency-Key", "Content-Type", "trackData", "sender", "keyword"} {
		if r.Secret(name) {
			t.Errorf("%q is taken for a secret", name)
		}
	}
}

// --redact-field adds a pattern, matched the same way: a name ("pin" is pin,
// PIN, Pin) or, with '*', a family ("*pin" is also x-pin, X_Pin).
func TestRedactFieldAddsOne(t *testing.T) {
	if newRedactor(RedactOptions{}).Secret("X-Pin") {
		t.Fatal("pin is a secret without --redact-field")
	}
	r := newRedactor(RedactOptions{SecretFields: []string{"*pin", "*otp*"}})
	for _, name := range []string{"pin", "PIN", "x-pin", "X_Pin", "otp", "sms_otp_code"} {
		if !r.Secret(name) {
			t.Errorf("%q not redacted", name)
		}
	}
	e := exchange{Method: "POST", Path: "/x", Header: http.Header{"X-Pin": {"1234-5678"}}, Query: "pin=4321"}
	r.Exchange(&e, []byte(`{"n":{"Pin":"9876"}}`), nil)
	if e.Header.Get("X-Pin") != "" || e.Query != "" || strings.Contains(e.Body, "9876") {
		t.Fatalf("kept: %+v", e)
	}
	if exact := newRedactor(RedactOptions{SecretFields: []string{"pin"}}); !exact.Secret("PIN") || exact.Secret("x-pin") {
		t.Fatal("a pattern without '*' is one name, in any case")
	}
	if got := r.Fields(); !strings.Contains(strings.Join(got, " "), "*pin") {
		t.Fatalf("recording header lists %v", got)
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		ok   bool
	}{
		{"*token*", "accesstoken", true},
		{"*token*", "token", true},
		{"*token*", "tok", false},
		{"pwd", "pwd", true},
		{"pwd", "pwdx", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"*", "", true},
	} {
		if globMatch(tc.p, tc.s) != tc.ok {
			t.Errorf("globMatch(%q, %q) != %v", tc.p, tc.s, tc.ok)
		}
	}
}
