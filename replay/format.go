package replay

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"
	"unicode/utf8"
)

// Recording format: the first line is a Header, every other line one Exchange.
const (
	FormatName    = "msgload-recording"
	FormatVersion = 1
)

// header is the first line of a recording.
type header struct {
	Format   string    `json:"format"`   // always FormatName
	Version  int       `json:"version"`  // FormatVersion
	Started  time.Time `json:"started"`  // when the recorder started; offsets count from here
	Upstream string    `json:"upstream"` // the base URL the proxy forwarded to (no credentials)
	Masked   bool      `json:"masked_recipients,omitempty"`
	Redacted []string  `json:"redacted,omitempty"` // the secret fields removed, for the reader's information
}

// exchange is one request and its answer: one line of a recording.
type exchange struct {
	Time         time.Time   `json:"time"`                    // when the request arrived, RFC 3339 with nanoseconds
	Offset       int64       `json:"offset_ns"`               // Time - Header.Started, nanoseconds
	Method       string      `json:"method"`                  //
	Path         string      `json:"path"`                    //
	Query        string      `json:"query,omitempty"`         // raw query, secret parameters removed
	Header       http.Header `json:"headers,omitempty"`       // request headers without credentials
	Body         string      `json:"body,omitempty"`          // request body, secret fields removed
	BodyEncoding string      `json:"body_encoding,omitempty"` // "" (UTF-8 text) or "base64"
	Client       string      `json:"client,omitempty"`        // who sent it: Basic login or client_id claim (never a secret)
	Code         int         `json:"code"`                    // response status; 0 when the upstream gave no answer
	Latency      float64     `json:"latency_s"`               // seconds from arrival to the end of the answer
	RespHeader   http.Header `json:"response_headers,omitempty"`
	RespBody     string      `json:"response_body,omitempty"` // answer body, secret fields removed; dropped for token endpoints
	RespEncoding string      `json:"response_body_encoding,omitempty"`
	Error        string      `json:"error,omitempty"` // proxy error when the upstream failed
}

// encodeBody returns b as the Body and BodyEncoding of an Exchange.
func encodeBody(b []byte) (string, string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	return base64.StdEncoding.EncodeToString(b), "base64"
}

func decodeBody(s, enc string) ([]byte, error) {
	switch enc {
	case "":
		return []byte(s), nil
	case "base64":
		return base64.StdEncoding.DecodeString(s)
	}
	return nil, errBadLine
}

// marshalLine returns v as one JSON line.
func marshalLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
