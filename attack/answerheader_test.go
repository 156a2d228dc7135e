package attack

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// TestAnsweredReadsRateLimitHeaders: the rate-limit headers of an answer are
// recorded whatever case the service spells them in, as Header.Get finds
// them (answered looks them up by their canonical key, without Get's
// canonicalisation), and the keys it uses are the canonical ones.
func TestAnsweredReadsRateLimitHeaders(t *testing.T) {
	for _, k := range []string{hdrRetryAfter, hdrRateLimit, hdrRateLimitPolicy} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("header key %q is not canonical (%q): the transport's map never has it", k, c)
		}
	}
	for _, spelt := range [][3]string{
		{"Retry-After", "RateLimit", "RateLimit-Policy"},
		{"retry-after", "ratelimit", "ratelimit-policy"},
		{"RETRY-AFTER", "RATELIMIT", "RATELIMIT-POLICY"},
	} {
		wire := "HTTP/1.1 429 Too Many Requests\r\n" +
			spelt[0] + ": 7\r\n" +
			spelt[1] + ": \"default\";r=0;t=7\r\n" +
			spelt[2] + ": \"default\";q=100;w=60\r\n" +
			"Content-Length: 0\r\n\r\n"
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(wire)), nil)
		if err != nil {
			t.Fatal(err)
		}
		var a rundir.Attempt
		a.Op = opCheckStatus
		(&engine{o: &Options{}}).answered(&a, resp, nil, nil)
		got := [3]string{a.RetryAfter, a.RateLimit, a.RateLimitPolicy}
		want := [3]string{resp.Header.Get("Retry-After"), resp.Header.Get("RateLimit"), resp.Header.Get("RateLimit-Policy")}
		if got != want || want[0] != "7" || want[1] == "" || want[2] == "" {
			t.Errorf("headers spelt %q: recorded %q, want %q", spelt, got, want)
		}
	}
}

// BenchmarkAnswered: what answered costs an answer with the rate-limit
// headers (the send answer of a service that announces its limit).
func BenchmarkAnswered(b *testing.B) {
	h := http.Header{"Content-Type": {"application/json"}, "Ratelimit": {`"default";r=99;t=1`},
		"Ratelimit-Policy": {`"default";q=100;w=1`}}
	resp := &http.Response{StatusCode: 200, Status: "200 OK", Header: h}
	body := []byte(`{"txId":"00000000-0000-0000-0000-000000000001","state":"ACCEPTED","updatedAt":"2026-01-01T00:00:00Z"}`)
	e := &engine{o: &Options{API: "messaging"}}
	b.ReportAllocs()
	for b.Loop() {
		var a rundir.Attempt
		a.Op = OpSend
		e.answered(&a, resp, body, nil)
	}
}

// BenchmarkRateLimitHeaders: the three header lookups of answered, through
// Header.Get (as it was) and by canonical key (as it is).
func BenchmarkRateLimitHeaders(b *testing.B) {
	h := http.Header{"Content-Type": {"application/json"}, "Ratelimit": {`"default";r=99;t=1`},
		"Ratelimit-Policy": {`"default";q=100;w=1`}}
	var sink [3]string
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink = [3]string{h.Get("Retry-After"), h.Get("RateLimit"), h.Get("RateLimit-Policy")}
		}
	})
	b.Run("canonical", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink = [3]string{headerValue(h, hdrRetryAfter), headerValue(h, hdrRateLimit), headerValue(h, hdrRateLimitPolicy)}
		}
	})
	_ = sink
}
