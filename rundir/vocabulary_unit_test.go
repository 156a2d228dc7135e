package rundir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	timeout := &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}
	for _, tc := range []struct {
		code    int
		err     error
		outcome string
		class   string
	}{
		{200, nil, OutcomeOK, ClassOK},
		{204, nil, OutcomeOK, ClassOK},
		{429, nil, OutcomeFail, ClassHTTP429},
		{500, nil, OutcomeFail, ClassHTTP5xx},
		{503, nil, OutcomeFail, ClassHTTP5xx},
		{400, nil, OutcomeFail, classHTTP4xx},
		{401, nil, OutcomeFail, classHTTP4xx},
		{499, nil, OutcomeFail, classHTTP4xx},
		{599, nil, OutcomeFail, ClassHTTP5xx},
		{302, nil, OutcomeFail, classHTTPOther}, // a redirect is not a client error
		{101, nil, OutcomeFail, classHTTPOther},
		{600, nil, OutcomeFail, classHTTPOther},               // out of range: not a server error either
		{500, io.ErrUnexpectedEOF, OutcomeFail, ClassHTTP5xx}, // an answer came: the code decides, not the body's read error
		{200, io.ErrUnexpectedEOF, OutcomeOK, ClassOK},
		{0, context.DeadlineExceeded, OutcomeUnknown, ClassTimeout},
		{0, fmt.Errorf("post: %w", timeout), OutcomeUnknown, ClassTimeout}, // a net.Error that timed out
		{0, syscall.ECONNREFUSED, OutcomeFail, classConn},                  // nothing reached the service
		{0, &net.OpError{Op: "dial", Err: errors.New("no route")}, OutcomeFail, classConn},
		{0, fmt.Errorf("read: %w", syscall.ECONNRESET), OutcomeUnknown, ClassReset},
		{0, io.EOF, OutcomeUnknown, ClassReset},
		{0, syscall.EPIPE, OutcomeUnknown, ClassReset},
		{0, errors.New("tls: bad certificate"), OutcomeUnknown, ClassOther},
		{0, nil, OutcomeUnknown, ClassOther}, // neither code nor error
	} {
		o, c := Classify(tc.code, tc.err)
		if o != tc.outcome || c != tc.class {
			t.Errorf("Classify(%d, %v) = %s, %s; want %s, %s", tc.code, tc.err, o, c, tc.outcome, tc.class)
		}
	}
}

// FuzzParseRetryAfter: any header value is read without panic and never
// yields a negative or absurd wait.
func FuzzParseRetryAfter(f *testing.F) {
	f.Add("3")
	f.Add("0.5")
	f.Add("Wed, 21 Oct 2015 07:28:00 GMT")
	f.Add("-1")
	f.Add("NaN")
	f.Add("1e309")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := ParseRetryAfter(v, now)
		if !ok && d != 0 {
			t.Fatalf("%q: not ok but %v", v, d)
		}
		if d < 0 {
			t.Fatalf("%q: negative wait %v", v, d)
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},                              // delay seconds
		{" 120 ", 2 * time.Minute, true},                          // spaces around
		{"0.5", 500 * time.Millisecond, true},                     // fractional seconds
		{"Thu, 01 Jan 2026 00:00:10 GMT", 10 * time.Second, true}, // an HTTP date ahead
		{"Wed, 31 Dec 2025 23:59:00 GMT", 0, true},                // a date passed: no wait
		{"", 0, false},     // absent
		{"  ", 0, false},   // blank is absent too
		{"-5", 0, false},   // negative
		{"soon", 0, false}, // garbage
		{"NaN", 0, false},  // not a number
		{"2e9", 0, false},  // absurd
	} {
		d, ok := ParseRetryAfter(tc.in, now)
		if d != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, d, ok, tc.want, tc.ok)
		}
	}
}

func TestParseRate(t *testing.T) {
	type rateCase struct {
		in   string
		n    float64
		w    time.Duration
		fail string // a part of the error, "" when it parses
	}
	for _, tc := range []rateCase{
		// every spelling the simulator's config took
		{"100/1m", 100, time.Minute, ""},
		{"100/m", 100, time.Minute, ""},
		{"5/10s", 5, 10 * time.Second, ""},
		{"0/1m", 0, time.Minute, ""},
		{"10/ms", 10, time.Millisecond, ""},
		{"10/us", 10, time.Microsecond, ""},
		{" 7 / 1h30m ", 7, 90 * time.Minute, ""},
		// every spelling scenarios took
		{"150/1m", 150, time.Minute, ""},
		{"20/s", 20, time.Second, ""},
		{"20/sec", 20, time.Second, ""},
		{"20/second", 20, time.Second, ""},
		{"100/min", 100, time.Minute, ""},
		{"100/minute", 100, time.Minute, ""},
		{" 3 / h ", 3, time.Hour, ""},
		{"3/hour", 3, time.Hour, ""},
		{"2.5/s", 2.5, time.Second, ""},
		{"1/.5m", 1, 30 * time.Second, ""}, // a fraction, not "1.5m"
		{"1/+1m", 1, time.Minute, ""},
		// refused
		{"100", 0, 0, "want COUNT/WINDOW"},
		{"x/1m", 0, 0, `count "x" is not a non-negative number`},
		{"-1/1m", 0, 0, "not a non-negative number"},
		{"NaN/s", 0, 0, "not a non-negative number"},
		{"Inf/s", 0, 0, "not a non-negative number"},
		{"10/0s", 0, 0, "not a positive duration"},
		{"10/-1m", 0, 0, "not a positive duration"},
		{"10/", 0, 0, "not a positive duration"},
		{"10/fortnight", 0, 0, "not a positive duration"},
		{"10/1min", 0, 0, "not a positive duration"}, // neither took a count before a unit name
	} {
		n, w, err := ParseRate(tc.in)
		if tc.fail != "" {
			if err == nil || !strings.Contains(err.Error(), tc.fail) {
				t.Errorf("ParseRate(%q) = %v, %v, %v; want error %q", tc.in, n, w, err, tc.fail)
			}
			continue
		}
		if err != nil || n != tc.n || w != tc.w {
			t.Errorf("ParseRate(%q) = %v, %v, %v; want %v, %v", tc.in, n, w, err, tc.n, tc.w)
		}
	}
}

func TestIsMSISDN(t *testing.T) {
	for s, want := range map[string]bool{
		"+79991234567":      true,
		"+1234567":          true,  // 7 digits, the fewest
		"+123456789012345":  true,  // 15, the most
		"+123456":           false, // 6
		"+1234567890123456": false, // 16
		"79991234567":       false, // no +
		"+09991234567":      false, // leading 0
		"+7999123456a":      false,
		"":                  false,
		"+":                 false,
	} {
		if got := IsMSISDN(s); got != want {
			t.Errorf("IsMSISDN(%q) = %v", s, got)
		}
	}
}

func TestMaxSenderFor(t *testing.T) {
	for _, ch := range Channels() {
		want := MaxSender
		if ch == ChannelSMS {
			want = MaxSenderSMS
		}
		if got := MaxSenderFor(ch); got != want {
			t.Errorf("MaxSenderFor(%s) = %d, want %d", ch, got, want)
		}
	}
	if MaxSenderSMS != 11 || MaxSender != 21 {
		t.Errorf("sender limits %d/%d, the seed says 11/21", MaxSenderSMS, MaxSender)
	}
}

// The lists are copies: a caller changing one changes nothing here.
func TestVocabularyCopies(t *testing.T) {
	c := Channels()
	c[0] = "x"
	s := States()
	s[0] = "x"
	if !IsChannel(ChannelSMS) || Channels()[0] != ChannelSMS || States()[0] != StateDelivered || !finalState(StateDelivered) {
		t.Fatal("a caller changed the vocabulary")
	}
	for _, st := range States() {
		if !finalState(st) {
			t.Errorf("%s is not final", st)
		}
	}
	if finalState(StateAccepted) || finalState("") {
		t.Error("ACCEPTED or nothing taken as final")
	}
}

func TestChannelEnums(t *testing.T) {
	for _, ch := range Channels() {
		if !IsChannel(ch) {
			t.Errorf("IsChannel(%s) false", ch)
		}
		if got, want := IsStatusChannel(ch), ch != ChannelVKOK; got != want {
			t.Errorf("IsStatusChannel(%s) = %v", ch, got) // the seed's status record names all but vkok
		}
		if got, want := IsIncomingChannel(ch), ch == ChannelSMS || ch == ChannelViber || ch == ChannelWhatsApp; got != want {
			t.Errorf("IsIncomingChannel(%s) = %v", ch, got)
		}
	}
	for _, s := range []string{"", "SMS", "telegram", StateDelivered} {
		if IsChannel(s) || IsStatusChannel(s) || IsIncomingChannel(s) {
			t.Errorf("%q taken as a channel", s)
		}
	}
}
