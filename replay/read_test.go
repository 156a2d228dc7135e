package replay

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadHAR(t *testing.T) {
	rs, err := Load("testdata/sample.har", FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("%d requests, want 2", len(rs))
	}
	// The file lists the later entry first: the reader sorts by startedDateTime.
	m, n := rs[0], rs[1]
	if m.API != apiMessaging || m.Op != OpSend || m.Offset != 0 || m.Query != "x=1" || m.RecordedCode != 200 {
		t.Errorf("first = %+v", m)
	}
	if m.ClientID != "login-1" { // from the Basic login, without its password
		t.Errorf("messaging client = %q", m.ClientID)
	}
	if n.API != apiNotify || n.Offset != 1500*time.Millisecond || n.RecordedCode != 429 || n.ExternalID != "ext-2" {
		t.Errorf("second = %+v", n)
	}
	if n.ClientID != "app-1" { // from the bearer token's client_id claim
		t.Errorf("notify client = %q", n.ClientID)
	}
	for _, r := range rs {
		if r.Header.Get("Authorization") != "" || r.Header.Get(":authority") != "" {
			t.Errorf("credentials or pseudo-headers kept: %v", r.Header)
		}
	}
}

func TestReadHARFormParams(t *testing.T) {
	// HAR 1.2 lets a form post carry params instead of text: the body is rebuilt
	// from them, and the client_id found in it.
	in := `{"log":{"entries":[{"startedDateTime":"2026-01-01T00:00:00Z","request":{"method":"POST","url":"http://h/oauth/token",
	"postData":{"mimeType":"application/x-www-form-urlencoded","params":[{"name":"grant_type","value":"client_credentials"},{"name":"client_id","value":"c7"}]}},"response":{"status":200}}]}}`
	rs, err := readHAR(strings.NewReader(in), ReadOptions{})
	if err != nil || len(rs) != 1 {
		t.Fatalf("%v %v", rs, err)
	}
	if string(rs[0].Body) != "client_id=c7&grant_type=client_credentials" || rs[0].ClientID != "c7" || rs[0].API != apiToken {
		t.Errorf("%+v", rs[0])
	}
}

func TestReadVegetaTargets(t *testing.T) {
	body := base64.StdEncoding.EncodeToString([]byte(`{"externalId":"e1"}`))
	in := `{"method":"POST","url":"http://h/api/v1/notifications","body":"` + body + `","header":{"Content-Type":["application/json"],"X-Client":["c9"]}}

{"method":"GET","url":"http://h/messaging/v1/check-status/abc"}
`
	rs, err := readVegetaTargets(strings.NewReader(in), ReadOptions{ClientHeader: "X-Client"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("%d requests", len(rs))
	}
	if string(rs[0].Body) != `{"externalId":"e1"}` || rs[0].ExternalID != "e1" || rs[0].ClientID != "c9" {
		t.Errorf("first = %+v", rs[0])
	}
	// Targets carry no time: they are spaced vegetaInterval apart in file order.
	if rs[1].Offset != vegetaInterval || rs[1].Op != opCheckStatus {
		t.Errorf("second = %+v", rs[1])
	}
}

func TestReadRecordingOutOfOrder(t *testing.T) {
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	h, _ := marshalLine(header{Format: FormatName, Version: FormatVersion, Started: start})
	buf.Write(h)
	for i, off := range []time.Duration{2 * time.Second, time.Second, time.Second, 0} {
		l, _ := marshalLine(exchange{Time: start.Add(off), Offset: int64(off), Method: "POST",
			Path: "/api/v1/notifications", Body: `{"externalId":"e` + string(rune('0'+i)) + `"}`, Code: 200})
		buf.Write(l)
	}
	rs, _, err := readRecording(&buf, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Sorted by time; the two at 1s keep their file order (e1 before e2).
	got := []string{}
	for _, r := range rs {
		got = append(got, r.ExternalID+"@"+r.Offset.String())
	}
	want := "e3@0s e1@1s e2@1s e0@2s"
	if strings.Join(got, " ") != want {
		t.Errorf("order = %v, want %v", got, want)
	}
}

func TestReadRecordingRejects(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{`{"method":"GET","path":"/"}`, errNotRecording},                                                                                                  // no header line
		{`{"format":"msgload-recording","version":2}`, errVersion},                                                                                        // a future version is refused, not misread
		{"{\"format\":\"msgload-recording\",\"version\":1}\n{bad", errBadLine},                                                                            // broken JSON names the line
		{"{\"format\":\"msgload-recording\",\"version\":1}\n{\"method\":\"GET\",\"path\":\"rel\"}", errBadLine},                                           // relative path
		{"{\"format\":\"msgload-recording\",\"version\":1}\n{\"method\":\"GET\",\"path\":\"/\",\"body\":\"!\",\"body_encoding\":\"base64\"}", errBadLine}, // bad base64
	}
	for _, tt := range tests {
		if _, _, err := readRecording(strings.NewReader(tt.in), ReadOptions{}); !errors.Is(err, tt.want) {
			t.Errorf("%q: err %v, want %v", tt.in, err, tt.want)
		}
	}
}

func TestDetect(t *testing.T) {
	tests := []struct{ head, want string }{
		{`{"format":"msgload-recording","version":1}` + "\n{}", FormatMsgload}, // header line
		{"\n  {\"log\": {\"version\":\"1.2\",\"entries\":[]}}", FormatHAR},     // HAR, leading space
		{`{"method":"GET","url":"http://x/"}`, FormatVegeta},                   // vegeta target line
		{`GET http://x/`, ""}, // vegeta http format: not supported
		{``, ""},              // empty
	}
	for _, tt := range tests {
		if got := detect([]byte(tt.head)); got != tt.want {
			t.Errorf("Detect(%q) = %q, want %q", tt.head, got, tt.want)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, []byte(`{"format":"msgload-recording","version":1}`+"\n"), 0o600)
	if _, err := Load(empty, FormatAuto); !errors.Is(err, ErrNoRequests) {
		t.Errorf("empty recording: %v", err)
	}
	text := filepath.Join(dir, "t.txt")
	os.WriteFile(text, []byte("GET http://x/\n"), 0o600)
	if _, err := Load(text, ""); !errors.Is(err, errFormat) {
		t.Errorf("unknown format: %v", err)
	}
	if _, err := Load(text, "pcap"); !errors.Is(err, errFormat) {
		t.Errorf("bad format name: %v", err)
	}
}

// checkRequests asserts what every reader promises, whatever the input.
func checkRequests(t *testing.T, rs []Request) {
	for i, r := range rs {
		if i > 0 && rs[i-1].Offset > r.Offset {
			t.Fatalf("not sorted at %d", i)
		}
		if r.Offset < 0 {
			t.Fatalf("negative offset %v", r.Offset)
		}
		for _, h := range credentialHeaders {
			if r.Header.Get(h) != "" {
				t.Fatalf("credential header %s kept", h)
			}
		}
		if r.API == "" || r.Op == "" || r.Method == "" {
			t.Fatalf("unclassified request %+v", r)
		}
	}
}

func FuzzReadRecording(f *testing.F) {
	f.Add([]byte("{\"format\":\"msgload-recording\",\"version\":1,\"started\":\"2026-11-23T10:00:00Z\"}\n{\"time\":\"2026-11-23T10:00:01.5Z\",\"offset_ns\":1500000000,\"method\":\"POST\",\"path\":\"/api/v1/notifications\",\"body\":\"{\\\"externalId\\\":\\\"x\\\"}\",\"code\":200,\"latency_s\":0.01}\n"))
	f.Add([]byte("{\"format\":\"msgload-recording\",\"version\":1}\n{\"method\":\"GET\",\"path\":\"/\",\"body\":\"AAE=\",\"body_encoding\":\"base64\"}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, _, err := readRecording(bytes.NewReader(b), ReadOptions{})
		if err != nil {
			return
		}
		checkRequests(t, rs)
	})
}

func FuzzReadHAR(f *testing.F) {
	if b, err := os.ReadFile("testdata/sample.har"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"log":{"entries":[{"startedDateTime":"2026-01-01T00:00:00Z","request":{"method":"GET","url":"/x"},"response":{"status":0}}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := readHAR(bytes.NewReader(b), ReadOptions{})
		if err != nil {
			return
		}
		checkRequests(t, rs)
	})
}

func FuzzReadVegetaTargets(f *testing.F) {
	f.Add([]byte(`{"method":"POST","url":"http://h/api/v1/notifications","body":"e30=","header":{"Authorization":["Bearer a.b.c"]}}` + "\n"))
	f.Add([]byte(`{"method":"GET","url":"http://h/messaging/v1/check-status/1"}` + "\n\n" + `{"method":"GET","url":"::"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := readVegetaTargets(bytes.NewReader(b), ReadOptions{})
		if err != nil {
			return
		}
		checkRequests(t, rs)
	})
}
