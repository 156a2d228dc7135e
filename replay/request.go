package replay

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/msgload/msgload/rundir"
)

// API classes of a request, by path.
const (
	apiMessaging = rundir.APIMessaging
	apiNotify    = rundir.APINotify
	apiToken     = "token"
	apiOther     = "other"
)

// Operations of a request, by method and path.
const (
	OpSend        = "send"
	opCheckStatus = "check_status"
	opWebhook     = "webhook"
	opToken       = "token"
	opOther       = "other"
)

// Sentinel errors.
var (
	errFormat       = errors.New("unknown recording format")
	errNotRecording = errors.New("not a msgload recording")
	errVersion      = errors.New("unsupported recording version")
	ErrNoRequests   = errors.New("no requests in the file")
	ErrBadSpeed     = errors.New("speed must be a positive number")
	errBadLine      = errors.New("malformed line")
)

// Request is one request to replay, whatever file it was read from. Header never
// carries credentials (Authorization, cookies): the attacker adds fresh ones.
type Request struct {
	Offset       time.Duration // from the first request of the file, unscaled
	Method       string
	Path         string // URL path, as recorded (no scheme or host)
	Query        string // raw query, without "?"
	Header       http.Header
	Body         []byte
	RecordedCode int    // response status recorded; 0 when the file has none
	API          string // apiMessaging, apiNotify, apiToken, apiOther
	Op           string // OpSend, opCheckStatus, opWebhook, opToken, opOther
	ClientID     string // recorded client (Basic login, token client_id claim, form client_id, configured header); "" when unknown
	ExternalID   string // notify: externalId of the body, when any
}

// classify returns the API and operation of a request from its method and path.
func classify(method, path string) (api, op string) {
	p := strings.TrimRight(path, "/")
	switch {
	case strings.Contains(p, "/messaging/"):
		switch {
		case strings.HasSuffix(p, "/send"):
			return apiMessaging, OpSend
		case strings.Contains(p, "/check-status"):
			return apiMessaging, opCheckStatus
		}
		return apiMessaging, opOther
	case strings.HasSuffix(p, rundir.RouteNotifications):
		return apiNotify, OpSend
	case strings.HasSuffix(p, rundir.RouteWebhooks):
		return apiNotify, opWebhook
	case strings.Contains(p, rundir.RouteNotifyBase):
		return apiNotify, opOther
	case strings.HasSuffix(p, "/token") || strings.Contains(p, "/oauth"):
		return apiToken, opToken
	}
	return apiOther, opOther
}

// finish fills the derived fields of r from its header and body, and removes
// credentials from its header.
func (r *Request) finish(clientHeader string) {
	r.Method = strings.ToUpper(r.Method)
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	if r.Path == "" {
		r.Path = "/"
	}
	r.API, r.Op = classify(r.Method, r.Path)
	if r.Header == nil {
		r.Header = http.Header{}
	}
	if r.ClientID == "" && clientHeader != "" {
		r.ClientID = r.Header.Get(clientHeader)
	}
	if r.ClientID == "" {
		r.ClientID = clientFromAuthorization(r.Header.Get("Authorization"))
	}
	if r.ClientID == "" {
		r.ClientID = clientFromQuery(r.Query)
	}
	if r.ClientID == "" {
		r.ClientID = clientFromBody(r.Header.Get("Content-Type"), r.Body)
	}
	r.Query = dropQueryCredentials(r.Query)
	if r.ExternalID == "" {
		r.ExternalID = externalIDFromBody(r.Body)
	}
	for _, h := range credentialHeaders {
		r.Header.Del(h)
	}
	r.Header.Del("Content-Length")
	r.Header.Del("Host")
}

// credentialHeaders are never recorded and never replayed.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// clientFromAuthorization returns the client an Authorization value names without
// keeping any secret: the Basic login, or the client_id claim of a bearer JWT (read,
// not verified).
func clientFromAuthorization(v string) string {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok {
		return ""
	}
	switch strings.ToLower(scheme) {
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
		if err != nil {
			return ""
		}
		login, _, _ := strings.Cut(string(raw), ":")
		return login
	case "bearer":
		parts := strings.Split(strings.TrimSpace(cred), ".")
		if len(parts) != 3 {
			return ""
		}
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
		if err != nil {
			return ""
		}
		var claims struct {
			ClientID string `json:"client_id"`
			AZP      string `json:"azp"`
		}
		if json.Unmarshal(raw, &claims) != nil {
			return ""
		}
		if claims.ClientID != "" {
			return claims.ClientID
		}
		return claims.AZP
	}
	return ""
}

// clientFromBody returns client_id of a token request's form, or a clientId
// field of a JSON body.
func clientFromBody(contentType string, body []byte) string {
	if len(body) == 0 {
		return ""
	}
	if strings.HasPrefix(strings.TrimSpace(string(body)), "{") {
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			for _, k := range []string{"client_id", "clientId"} {
				if s, ok := m[k].(string); ok {
					return s
				}
			}
		}
		return ""
	}
	if strings.Contains(contentType, "x-www-form-urlencoded") || strings.Contains(string(body), "grant_type=") {
		if v, err := url.ParseQuery(string(body)); err == nil {
			return v.Get("client_id")
		}
	}
	return ""
}

func externalIDFromBody(body []byte) string {
	if len(body) == 0 || body[0] != '{' {
		return ""
	}
	var m struct {
		ExternalID string `json:"externalId"`
	}
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	return m.ExternalID
}

// sortRequests orders rs by offset, keeping the file order among equal offsets.
func sortRequests(rs []Request) {
	slices.SortStableFunc(rs, func(a, b Request) int {
		switch {
		case a.Offset < b.Offset:
			return -1
		case a.Offset > b.Offset:
			return 1
		}
		return 0
	})
}

// offsetsFrom sets each request's Offset from its time against the earliest time,
// so out-of-order timestamps give non-negative offsets, then sorts.
func offsetsFrom(rs []Request, times []time.Time) {
	if len(times) == 0 {
		return
	}
	first := times[0]
	for _, t := range times {
		if t.Before(first) {
			first = t
		}
	}
	for i := range rs {
		rs[i].Offset = times[i].Sub(first)
	}
	sortRequests(rs)
}

func decodeStdOrURL(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// clientFromQuery returns the Basic login of an "authorization" query parameter.
func clientFromQuery(raw string) string {
	if raw == "" {
		return ""
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return ""
	}
	for k, vs := range v {
		if strings.EqualFold(k, "authorization") && len(vs) > 0 {
			return clientFromAuthorization(vs[0])
		}
	}
	return ""
}

// dropQueryCredentials removes credential parameters (authorization,
// access_token) from a raw query: a replay sends its own.
func dropQueryCredentials(raw string) string {
	if raw == "" || !strings.Contains(strings.ToLower(raw), "authorization=") && !strings.Contains(strings.ToLower(raw), "access_token=") {
		return raw
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return raw
	}
	for k := range v {
		if strings.EqualFold(k, "authorization") || strings.EqualFold(k, "access_token") {
			v.Del(k)
		}
	}
	return v.Encode()
}
