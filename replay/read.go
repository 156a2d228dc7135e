package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// File formats Load reads.
const (
	FormatAuto    = "auto"
	FormatMsgload = "msgload"
	FormatHAR     = "har"
	FormatVegeta  = "vegeta"
)

// vegetaInterval is the spacing given to vegeta targets, which carry no timing:
// one request every 100 ms (10/s) at speed 1. Scale it with the replay speed.
const vegetaInterval = 100 * time.Millisecond

// maxLine bounds one line of a recording or of a targets file.
const maxLine = 64 << 20

// ReadOptions tune the readers.
type ReadOptions struct {
	// ClientHeader names a request header that carries the client id, tried before
	// the Authorization header and the body.
	ClientHeader string
}

// LoadWith reads the file at path in format (FormatAuto or "" guesses it)
// and returns its requests sorted by offset.
func LoadWith(path, format string, o ReadOptions) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open recording: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if format == "" || format == FormatAuto {
		head, _ := br.Peek(4096)
		format = detect(head)
		if format == "" {
			return nil, fmt.Errorf("read %s: %w (want a msgload recording, HAR 1.2 or vegeta JSON targets; set --format)", path, errFormat)
		}
	}
	var rs []Request
	switch format {
	case FormatMsgload:
		rs, _, err = readRecording(br, o)
	case FormatHAR:
		rs, err = readHAR(br, o)
	case FormatVegeta:
		rs, err = readVegetaTargets(br, o)
	default:
		return nil, fmt.Errorf("format %q: %w", format, errFormat)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s as %s: %w", path, format, err)
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("read %s: %w", path, ErrNoRequests)
	}
	return rs, nil
}

// detect guesses the format of a file from its first bytes: "" when it cannot tell.
func detect(head []byte) string {
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(t) == 0 || t[0] != '{' {
		return ""
	}
	first := t
	if i := bytes.IndexByte(t, '\n'); i >= 0 {
		first = t[:i]
	}
	switch {
	case bytes.Contains(first, []byte(`"`+FormatName+`"`)):
		return FormatMsgload
	case bytes.Contains(t, []byte(`"log"`)) && bytes.Contains(t, []byte(`"entries"`)) || bytes.HasPrefix(bytes.TrimLeft(t[1:], " \t\r\n"), []byte(`"log"`)):
		return FormatHAR
	case bytes.Contains(first, []byte(`"url"`)):
		return FormatVegeta
	}
	return ""
}

// readRecording reads a msgload recording: a Header line, then one Exchange a
// line. Blank lines are skipped; a malformed line is an error naming its number.
func readRecording(r io.Reader, o ReadOptions) ([]Request, header, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var h header
	var rs []Request
	var times []time.Time
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if h.Format == "" {
			if err := json.Unmarshal(b, &h); err != nil || h.Format != FormatName {
				return nil, h, fmt.Errorf("line %d: %w", line, errNotRecording)
			}
			if h.Version != FormatVersion {
				return nil, h, fmt.Errorf("line %d: version %d: %w", line, h.Version, errVersion)
			}
			continue
		}
		var e exchange
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, h, fmt.Errorf("line %d: %w: %v", line, errBadLine, err)
		}
		body, err := decodeBody(e.Body, e.BodyEncoding)
		if err != nil {
			return nil, h, fmt.Errorf("line %d: body: %w", line, errBadLine)
		}
		if e.Method == "" || !strings.HasPrefix(e.Path, "/") {
			return nil, h, fmt.Errorf("line %d: %w: method and an absolute path are required", line, errBadLine)
		}
		req := Request{Method: e.Method, Path: e.Path, Query: e.Query, Header: e.Header, Body: body,
			RecordedCode: e.Code, ClientID: e.Client}
		req.finish(o.ClientHeader)
		rs = append(rs, req)
		t := e.Time
		if t.IsZero() {
			t = h.Started.Add(time.Duration(e.Offset))
		}
		times = append(times, t)
	}
	if err := sc.Err(); err != nil {
		return nil, h, fmt.Errorf("line %d: %w", line+1, err)
	}
	if h.Format == "" {
		return nil, h, errNotRecording
	}
	offsetsFrom(rs, times)
	return rs, h, nil
}

// harFile is the part of HAR 1.2 the reader needs.
type harFile struct {
	Log struct {
		Entries []harEntry `json:"entries"`
	} `json:"log"`
}

type harEntry struct {
	Started string  `json:"startedDateTime"`
	Time    float64 `json:"time"`
	Request struct {
		Method   string      `json:"method"`
		URL      string      `json:"url"`
		Headers  []harHeader `json:"headers"`
		PostData *struct {
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
			Encoding string `json:"encoding"` // non-standard, some exporters use it
			Params   []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"params"` // HAR 1.2: a form may be given as params instead of text
		} `json:"postData"`
	} `json:"request"`
	Response struct {
		Status int `json:"status"`
	} `json:"response"`
}

type harHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// readHAR reads a HAR 1.2 file (log.entries[]). Entries are sorted by
// startedDateTime, whatever their order in the file; HTTP/2 pseudo-headers are
// dropped.
func readHAR(r io.Reader, o ReadOptions) ([]Request, error) {
	var f harFile
	dec := json.NewDecoder(io.LimitReader(r, 1<<30))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("decode HAR: %w", err)
	}
	rs := make([]Request, 0, len(f.Log.Entries))
	times := make([]time.Time, 0, len(f.Log.Entries))
	for i, e := range f.Log.Entries {
		t, err := time.Parse(time.RFC3339Nano, e.Started)
		if err != nil {
			return nil, fmt.Errorf("entry %d: startedDateTime %q: %w", i, e.Started, errBadLine)
		}
		u, err := url.Parse(e.Request.URL)
		if err != nil || e.Request.Method == "" {
			return nil, fmt.Errorf("entry %d: request url %q: %w", i, e.Request.URL, errBadLine)
		}
		h := http.Header{}
		for _, hh := range e.Request.Headers {
			if hh.Name == "" || strings.HasPrefix(hh.Name, ":") {
				continue
			}
			h.Add(hh.Name, hh.Value)
		}
		var body []byte
		if pd := e.Request.PostData; pd != nil {
			body = []byte(pd.Text)
			if pd.Text == "" && len(pd.Params) > 0 {
				form := url.Values{}
				for _, p := range pd.Params {
					form.Add(p.Name, p.Value)
				}
				body = []byte(form.Encode())
			}
			if pd.Encoding == "base64" {
				if b, err := decodeStdOrURL(pd.Text); err == nil {
					body = b
				}
			}
			if h.Get("Content-Type") == "" && pd.MimeType != "" {
				h.Set("Content-Type", pd.MimeType)
			}
		}
		path := u.EscapedPath()
		if path == "" {
			path = "/"
		}
		req := Request{Method: e.Request.Method, Path: path, Query: u.RawQuery, Header: h, Body: body,
			RecordedCode: e.Response.Status}
		req.finish(o.ClientHeader)
		rs = append(rs, req)
		times = append(times, t)
	}
	offsetsFrom(rs, times)
	return rs, nil
}

// vegetaTarget is one line of vegeta's JSON targets format (lib/target.schema.json).
type vegetaTarget struct {
	Method string              `json:"method"`
	URL    string              `json:"url"`
	Body   []byte              `json:"body"` // base64 in the file
	Header map[string][]string `json:"header"`
}

// readVegetaTargets reads vegeta JSON targets, one object a line. They carry no
// timing: request i gets offset i×vegetaInterval, in file order.
func readVegetaTargets(r io.Reader, o ReadOptions) ([]Request, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var rs []Request
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var t vegetaTarget
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, fmt.Errorf("line %d: %w: %v", line, errBadLine, err)
		}
		u, err := url.Parse(t.URL)
		if err != nil || t.Method == "" || t.URL == "" {
			return nil, fmt.Errorf("line %d: %w: method and url are required", line, errBadLine)
		}
		h := http.Header{}
		for k, vs := range t.Header {
			for _, v := range vs {
				h.Add(k, v)
			}
		}
		path := u.EscapedPath()
		if path == "" {
			path = "/"
		}
		req := Request{Offset: time.Duration(len(rs)) * vegetaInterval, Method: t.Method, Path: path,
			Query: u.RawQuery, Header: h, Body: t.Body}
		req.finish(o.ClientHeader)
		rs = append(rs, req)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return rs, nil
}
