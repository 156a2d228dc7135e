package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/msgload/msgload/internal/e164"
)

// RedactOptions says what to remove from a recording besides the fixed list.
type RedactOptions struct {
	// SecretFields are extra patterns (--redact-field), on top of
	// defaultRedactPatterns, matched like them against header names, JSON
	// fields, form fields and query parameters.
	SecretFields []string
	// SecretHeaders are extra header names to remove (exactly, any case), on
	// top of Authorization, Proxy-Authorization, Cookie, Set-Cookie and the
	// headers the patterns match.
	SecretHeaders []string
	// MaskRecipients masks phone numbers, keeping the country code, three more
	// digits, the last two digits and the length: +79991234567 → +7999*****67.
	MaskRecipients bool
}

// defaultRedactPatterns name the secrets removed from every header, JSON
// field (at any depth), form field and query parameter. A name is folded
// before it is matched: lower case, without '-', '_', '.' and spaces, so
// "X-Api-Key", "x_api_key", "apiKey" and "APIKEY" all fold to "xapikey" or
// "apikey". A pattern is a folded name in which '*' stands for any run of
// characters (none included).
var defaultRedactPatterns = []string{
	"*password*", "*passwd*", "*passphrase*", "pwd", // passwords
	"*secret*",     // client_secret, clientSecret, x-client-secret
	"*token*",      // access_token, refresh_token, id_token, x-auth-token, x-csrf-token
	"*apikey*",     // api_key, apiKey, x-api-key, x_api_key
	"*accesskey*",  // aws_access_key_id
	"*privatekey*", //
	"*credential*", //
	"clientassertion",
	"authorization", "proxyauthorization", // the messaging API also takes "Basic <base64>" in this query parameter
	"cookie", "setcookie",
	"*sessionid*", // session_id, JSESSIONID
}

// foldName is name as the patterns see it: lower case, without - _ . and spaces.
func foldName(name string) string {
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '-' || c == '_' || c == '.' || c == ' ':
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// globMatch reports whether s matches pattern, where '*' is any run of bytes.
func globMatch(pattern, s string) bool {
	star, next := -1, 0 // last '*' in pattern, and where in s it resumes
	p, i := 0, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, next = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			next++
			p, i = star+1, next
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// redactor removes secrets from exchanges before they are written. Besides the
// fields it is told about, it remembers every credential it has removed (bearer
// tokens, Basic passwords, client secrets, issued access tokens) and scrubs those
// exact strings from anything else it writes, so an echoed token cannot leak.
type redactor struct {
	patterns []string        // folded
	exact    map[string]bool // folded patterns without '*'
	headers  []string
	mask     bool

	mu   sync.Mutex
	seen map[string]struct{} // literal secrets to scrub, bounded
}

// maxSeenSecrets bounds the memory of literal secrets.
const maxSeenSecrets = 4096

// newRedactor returns a Redactor for o.
func newRedactor(o RedactOptions) *redactor {
	r := &redactor{exact: map[string]bool{}, mask: o.MaskRecipients, seen: map[string]struct{}{}}
	for _, f := range append(append([]string{}, defaultRedactPatterns...), o.SecretFields...) {
		f = foldName(f)
		if f == "" || slices.Contains(r.patterns, f) {
			continue
		}
		r.patterns = append(r.patterns, f)
		if !strings.Contains(f, "*") {
			r.exact[f] = true
		}
	}
	r.headers = append(append([]string{}, credentialHeaders...), o.SecretHeaders...)
	return r
}

// Secret reports whether a header, JSON field, form field or query
// parameter of this name is removed.
func (r *redactor) Secret(name string) bool {
	f := foldName(name)
	if r.exact[f] {
		return true
	}
	for _, p := range r.patterns {
		if strings.Contains(p, "*") && globMatch(p, f) {
			return true
		}
	}
	return false
}

// Fields lists the patterns of what is removed, for the recording header.
func (r *redactor) Fields() []string {
	out := slices.Clone(r.patterns)
	slices.Sort(out)
	return out
}

// remember keeps a literal secret to scrub later. Short values are ignored: they
// would scrub innocent text.
func (r *redactor) remember(s string) {
	s = strings.TrimSpace(s)
	if len(s) < 6 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seen) >= maxSeenSecrets {
		for k := range r.seen { // drop an arbitrary old one
			delete(r.seen, k)
			break
		}
	}
	r.seen[s] = struct{}{}
	// Also the form it takes inside a JSON string (json.Marshal escapes & < > " \).
	if b, err := json.Marshal(s); err == nil {
		if esc := string(b[1 : len(b)-1]); esc != s {
			r.seen[esc] = struct{}{}
		}
	}
}

// learnHeader remembers the secret parts of a credential header value.
func (r *redactor) learnHeader(v string) {
	r.remember(v)
	scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok {
		return
	}
	r.remember(cred)
	if strings.EqualFold(scheme, "basic") {
		if raw, err := decodeStdOrURL(cred); err == nil {
			if _, pw, ok := strings.Cut(string(raw), ":"); ok {
				r.remember(pw)
			}
		}
	}
}

// Headers returns h without credential headers, remembering their values.
func (r *redactor) Headers(h http.Header) http.Header {
	out := h.Clone()
	if out == nil {
		return nil
	}
	for _, name := range r.headers {
		for _, v := range out.Values(name) {
			r.learnHeader(v)
		}
		out.Del(name)
	}
	for name, vs := range out {
		if r.Secret(name) || credentialHeaderName(name) {
			for _, v := range vs {
				r.learnHeader(v)
			}
			delete(out, name)
		}
	}
	return out
}

// notSecretHeaders end like a credential header's name but are not one
// (replay needs the idempotency key).
var notSecretHeaders = []string{"idempotency-key"}

// credentialHeaderName reports whether a header's name looks like a
// credential's beyond the field patterns: X-Auth and anything with "auth" in
// it, *-Token, *-Key, *Secret*.
func credentialHeaderName(name string) bool {
	n := strings.ToLower(name)
	if slices.Contains(notSecretHeaders, n) {
		return false
	}
	return strings.Contains(n, "auth") || strings.Contains(n, "secret") ||
		strings.HasSuffix(n, "-token") || strings.HasSuffix(n, "-key") || strings.HasSuffix(n, "_key")
}

// Query returns a raw query without secret parameters.
func (r *redactor) Query(raw string) string {
	if raw == "" {
		return ""
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return "" // an unreadable query may hide anything: drop it
	}
	changed := false
	for k, vals := range v {
		if r.Secret(k) {
			for _, s := range vals {
				r.learnHeader(s) // "Basic <base64>": remember the value, the credential and the password
			}
			v.Del(k)
			changed = true
		} else if r.mask {
			for i, s := range vals {
				if m := maskPhone(s); m != s {
					vals[i] = m
					changed = true
				}
			}
		}
	}
	if !changed {
		return raw
	}
	return v.Encode()
}

// Body returns body without secret fields: JSON objects lose them at any depth
// (every value of a duplicated key), forms lose them by name. A body it cannot
// parse completely (JSON with a trailing comma or extra text, multipart, plain
// text, anything else) may hide a secret anywhere: it is redacted whole, Body
// returns nil, after remembering what looks like a secret in it so an echo of
// it is scrubbed. A UTF-8 BOM before JSON is dropped.
func (r *redactor) Body(contentType string, body []byte) []byte {
	t := bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(body), utf8BOM))
	if len(t) == 0 {
		return body
	}
	if t[0] == '{' || t[0] == '[' {
		if out, ok := r.json(t); ok {
			return out
		}
		r.learnLoose(t)
		return nil
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "multipart/") {
		r.learnMultipart(contentType, body)
		return nil
	}
	if strings.Contains(contentType, "x-www-form-urlencoded") || looksLikeForm(t) {
		if vals, err := url.ParseQuery(string(t)); err == nil {
			for k, vs := range vals {
				if r.Secret(k) {
					for _, s := range vs {
						r.remember(s)
					}
					vals.Del(k)
				}
			}
			return []byte(vals.Encode())
		}
	}
	r.learnLoose(t)
	return nil
}

var utf8BOM = []byte("\xef\xbb\xbf")

// bodyRedactedWhole is the exchange's note when its request body did not
// parse and was therefore not recorded.
const bodyRedactedWhole = "request body not recorded (not parsed: it could hide a secret anywhere)"

// json redacts a JSON document that parses completely (nothing after it):
// first every value of every secret key is learnt from the token stream (the
// decoder into a map keeps only the last of duplicated keys), then the keys
// are removed.
func (r *redactor) json(t []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	if r.learnTokens(dec, false, 0) != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // text after the document
	}
	var v any
	dec = json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil, false
	}
	out, err := json.Marshal(r.walk(v))
	return out, err == nil
}

// maxJSONDepth bounds the nesting learnTokens follows; deeper is unparsed.
const maxJSONDepth = 512

// learnTokens reads one JSON value from dec, remembering its strings and
// numbers when it sits under a secret key.
func (r *redactor) learnTokens(dec *json.Decoder, secret bool, depth int) error {
	if depth > maxJSONDepth {
		return errors.New("nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch x := tok.(type) {
	case json.Delim:
		obj := x == '{'
		for dec.More() {
			under := secret
			if obj {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				ks, _ := k.(string)
				under = under || r.Secret(ks)
			}
			if err := r.learnTokens(dec, under, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // the closing delimiter
		return err
	case string:
		if secret {
			r.remember(x)
		}
	case json.Number:
		if secret {
			r.remember(x.String())
		}
	}
	return nil
}

// looseFieldRE finds "name": "value" and name=value pairs in a body that did
// not parse, so their secret values are scrubbed from any echo.
var looseFieldRE = regexp.MustCompile(`"((?:[^"\\]|\\.)+)"\s*:\s*"((?:[^"\\]|\\.)*)"|([A-Za-z0-9_.\-]+)=([^&\s]+)`)

// learnLoose remembers the values of secret-named fields in an unparsed body.
func (r *redactor) learnLoose(t []byte) {
	for _, m := range looseFieldRE.FindAllSubmatch(t, -1) {
		k, v := m[1], m[2]
		if len(k) == 0 {
			k, v = m[3], m[4]
			if u, err := url.QueryUnescape(string(v)); err == nil {
				v = []byte(u)
			}
		}
		if r.Secret(string(k)) {
			r.remember(string(v))
		}
	}
}

// learnMultipart remembers the values of secret-named parts of a multipart
// body; the body itself is never kept.
func (r *redactor) learnMultipart(contentType string, body []byte) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil || params["boundary"] == "" {
		r.learnLoose(body)
		return
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			return
		}
		if r.Secret(p.FormName()) {
			v, _ := io.ReadAll(io.LimitReader(p, 1<<16))
			r.remember(string(v))
		}
	}
}

var formRE = regexp.MustCompile(`^[A-Za-z0-9_.\-]+=[^&]*(&[A-Za-z0-9_.\-]+=[^&]*)*$`)

func looksLikeForm(b []byte) bool { return len(b) < 1<<16 && formRE.Match(b) }

func (r *redactor) walk(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if r.Secret(k) {
				r.learnValue(e)
				delete(x, k)
				continue
			}
			x[k] = r.walk(e)
		}
		return x
	case []any:
		for i := range x {
			x[i] = r.walk(x[i])
		}
		return x
	case string:
		if r.mask {
			return maskPhone(x)
		}
	}
	return v
}

func (r *redactor) learnValue(v any) {
	switch x := v.(type) {
	case string:
		r.remember(x)
	case map[string]any:
		for _, e := range x {
			r.learnValue(e)
		}
	case []any:
		for _, e := range x {
			r.learnValue(e)
		}
	}
}

// Scrub replaces every remembered secret in line by "[redacted]". It runs on
// the whole encoded line, and knows each secret as is and JSON-escaped.
func (r *redactor) Scrub(line []byte) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.seen {
		if bytes.Contains(line, []byte(s)) {
			line = bytes.ReplaceAll(line, []byte(s), []byte("[redacted]"))
		}
	}
	return line
}

// Exchange redacts a whole exchange in place: headers, query, bodies; a token
// endpoint's answer body is dropped entirely.
func (r *redactor) Exchange(e *exchange, reqBody, respBody []byte) {
	ct := e.Header.Get("Content-Type")
	e.Header = r.Headers(e.Header)
	e.RespHeader = r.Headers(e.RespHeader)
	// Bodies may change length when fields are removed.
	e.Header.Del("Content-Length")
	e.RespHeader.Del("Content-Length")
	e.Query = r.Query(e.Query)
	body := r.Body(ct, reqBody)
	if body == nil && len(reqBody) > 0 && e.Error == "" {
		e.Error = bodyRedactedWhole
	}
	e.Body, e.BodyEncoding = encodeBody(body)
	api, _ := classify(e.Method, e.Path)
	if api == apiToken || bytes.Contains(respBody, []byte("access_token")) {
		// Learn the issued token so it is scrubbed wherever it shows up later.
		r.Body("application/json", respBody)
		e.RespBody, e.RespEncoding = "", ""
		return
	}
	e.RespBody, e.RespEncoding = encodeBody(r.Body(e.RespHeader.Get("Content-Type"), respBody))
}

var phoneRE = regexp.MustCompile(`^\+?[0-9]{10,15}$`)

// maskPhone masks a phone number, keeping its country code, the next three
// digits, the last two digits and its length: "+79991234567" → "+7999*****67".
// Strings that are not phone numbers are returned unchanged.
func maskPhone(s string) string {
	if !phoneRE.MatchString(s) {
		return s
	}
	plus := strings.HasPrefix(s, "+")
	digits := strings.TrimPrefix(s, "+")
	cc := 1
	if code := e164.CountryCode(digits); code > 0 {
		cc = len(itoa(code))
	}
	keep := cc + 3
	if keep > len(digits)-2 {
		keep = len(digits) - 2
	}
	b := []byte(digits)
	for i := keep; i < len(b)-2; i++ {
		b[i] = '*'
	}
	if plus {
		return "+" + string(b)
	}
	return string(b)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
