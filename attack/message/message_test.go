package message

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/msgload/msgload/attack/message/msgspec"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

var testTag = rundir.Tag{Run: "r1", Seq: 7, First: time.Unix(1700000000, 123).UTC()}

func load(t testing.TB, src string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Parse("t.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// forScenario builds the generator of a loaded scenario the way the harness
// does: its API, its message spec with paths resolved, its seed.
func forScenario(s *scenarios.Scenario) (*Generator, error) {
	return New(s.API, s.ResolvedMessage(), s.Sim.Seed)
}

func TestNotifyBody(t *testing.T) {
	s := load(t, "api: notify\nload: { rate: 1/s, requests: 1 }\nmessage: { recipient: \"+7999{000-999}\", text: \"hi \\\"{{.Client}}\\\" #{{.Seq}} to {{.Recipient}}\" }\n")
	g, err := forScenario(s)
	if err != nil {
		t.Fatal(err)
	}
	b, bi, err := g.Body(7, "demo-1", testTag)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Recipient        struct{ Value string }
		NotificationText string
		ExternalID       string
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	// sequential pattern: message 7 gets the 7th number; the text template sees client, seq and recipient
	if got.Recipient.Value != "+7999007" || got.NotificationText != `hi "demo-1" #7 to +7999007` {
		t.Errorf("body %s", b)
	}
	tag, err := rundir.ParseExternalID(got.ExternalID)
	if err != nil || tag.Seq != 7 || tag.Run != "r1" || !tag.First.Equal(testTag.First) {
		t.Errorf("externalId %q does not carry the tag: %+v %v", got.ExternalID, tag, err)
	}
	if bi.Recipient != "+7999007" || bi.ExternalID != got.ExternalID || bi.TextBytes != len(got.NotificationText) {
		t.Errorf("info %+v", bi)
	}
}

func TestMessagingBody(t *testing.T) {
	s := load(t, `api: messaging
load: { rate: 1/s, requests: 1 }
message:
  recipients: { from: "+79990000000", to: "+79990000009" }
  text: "main {{.Seq}}"
  scenario:
    - channel: viber
      sender: shop
      text: "viber {{words 2}}"
      failover: { ttl: 60, condition_status: SEEN }
      attachments: [{ type: IMAGE, url: "https://example.com/a.png" }]
      buttons: [{ caption: Open, action: "https://example.com/" }]
    - channel: push
      sender: shop
      mobilePushAction: "app://x"
      mobilePushTitle: Title
      failover: { ttl: 5 }
    - channel: sms
      sender: shop
  callback: "http://127.0.0.1:9/cb"
  schedule: { startTime: "09:00:00", stopTime: "18:00:00", useRecipientTimeZone: true }
  urlOptions: { shortenUrl: true }
  trackData: { campaign: spring, "quote\"key": v }
  clientRequestId: "req-{{.Run}}-{{.Seq}}"
`)
	g, err := forScenario(s)
	if err != nil {
		t.Fatal(err)
	}
	b, bi, err := g.Body(12, "demo", testTag)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	sc := got["scenario"].([]any)
	if len(sc) != 3 {
		t.Fatalf("scenario %v", sc)
	}
	v := sc[0].(map[string]any)
	// the range wraps: message 12 of 10 numbers is the 3rd
	if v["recipient"].(map[string]any)["value"] != "+79990000002" || v["recipient"].(map[string]any)["type"] != "MSISDN" {
		t.Errorf("recipient %v", v["recipient"])
	}
	if !strings.HasPrefix(v["text"].(string), "viber ") || v["sender"] != "shop" {
		t.Errorf("viber item %v", v)
	}
	if fo := v["failover"].(map[string]any); fo["ttl"] != 60.0 || fo["condition_status"] != "SEEN" {
		t.Errorf("failover %v", fo)
	}
	if v["attachments"].([]any)[0].(map[string]any)["type"] != "IMAGE" || v["buttons"].([]any)[0].(map[string]any)["caption"] != "Open" {
		t.Errorf("attachments/buttons %v", v)
	}
	if p := sc[1].(map[string]any); p["mobilePushAction"] != "app://x" || p["mobilePushTitle"] != "Title" || p["text"] != "main 12" {
		t.Errorf("push item %v", p)
	}
	if sc[2].(map[string]any)["text"] != "main 12" {
		t.Errorf("sms item %v", sc[2])
	}
	if got["callback"] != "http://127.0.0.1:9/cb" || got["clientRequestId"] != "req-r1-12" {
		t.Errorf("callback/clientRequestId %v %v", got["callback"], got["clientRequestId"])
	}
	if got["urlOptions"].(map[string]any)["shortenUrl"] != true || got["schedule"].(map[string]any)["startTime"] != "09:00:00" {
		t.Errorf("urlOptions/schedule %v %v", got["urlOptions"], got["schedule"])
	}
	td := got["trackData"].(map[string]any)
	if td["campaign"] != "spring" || td[`quote"key`] != "v" {
		t.Errorf("extra trackData lost: %v", td)
	}
	tag, err := rundir.ParseTrackData(td)
	if err != nil || tag.Seq != 7 || strings.Join(tag.Chain, ",") != "viber:SEEN,push:DELIVERED,sms" { // each item with its failover condition
		t.Errorf("trackData tag %+v %v", tag, err)
	}
	if strings.Join(bi.Channels, ",") != "viber,push,sms" || bi.Recipient != "+79990000002" {
		t.Errorf("info %+v", bi)
	}
}

func TestDeterministic(t *testing.T) {
	s := load(t, "api: notify\nload: { rate: 1/s, requests: 1 }\nmessage: { text: \"{{words 5}} {{digits 6}} {{cyrillic 2}} {{emoji 2}}\" }\n")
	g1, _ := forScenario(s)
	g2, _ := forScenario(s)
	a, _, _ := g1.Body(3, "c", testTag)
	b, _, _ := g2.Body(3, "c", testTag)
	c, _, _ := g1.Body(4, "c", testTag)
	// the same seed and sequence give the same bytes (a retry resends them); another sequence differs
	if !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Fatalf("not deterministic per (seed, seq):\n%s\n%s\n%s", a, b, c)
	}
	s.Sim.Seed = 99
	g3, _ := forScenario(s)
	d, _, _ := g3.Body(3, "c", testTag)
	if bytes.Equal(a, d) {
		t.Fatal("another seed gave the same random text")
	}
}

func TestTextSizes(t *testing.T) {
	tests := []struct {
		name, extra string
		bytes       int // want exactly this many bytes of text (0: skip)
		units       int // want exactly this many UTF-16 units (0: skip)
	}{
		// padding with ASCII reaches the byte size exactly
		{"bytes ascii", "textBytes: 1000", 1000, 0},
		// Cyrillic fill (2 bytes each) still lands on the exact size, odd or even
		{"bytes cyrillic odd", "textBytes: 999\n  fill: cyrillic", 999, 0},
		// a text longer than the size is cut at a rune boundary
		{"bytes cut", "textBytes: 5\n  fill: emoji", 5, 0},
		// Cyrillic text forces UCS-2 even with an ASCII fill: 3 parts of 67
		{"parts ucs2 by text", "textParts: 3", 0, 201},
		// an ASCII text with an ASCII fill is GSM: 3 parts of 153
		{"parts gsm", "textParts: 3\n  text: \"load {{.Seq}}\"", 0, 459},
		// 2 UCS-2 parts are 134 units
		{"parts ucs2", "textParts: 2\n  fill: cyrillic", 0, 134},
		// emoji take two units each; one UCS-2 part is 70 units
		{"parts emoji", "textParts: 1\n  fill: emoji", 0, 70},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(tt.extra, "text:") {
				tt.extra += "\n  text: \"текст {{.Seq}}\""
			}
			s := load(t, "api: notify\nload: { rate: 1/s, requests: 1 }\nmessage:\n  "+tt.extra+"\n")
			g, err := forScenario(s)
			if err != nil {
				t.Fatal(err)
			}
			b, bi, _ := g.Body(1, "c", testTag)
			var got struct{ NotificationText string }
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if !utf8.ValidString(got.NotificationText) {
				t.Fatal("text is not valid UTF-8")
			}
			if tt.bytes > 0 && (len(got.NotificationText) != tt.bytes || bi.TextBytes != tt.bytes) {
				t.Errorf("%d bytes (info %d), want %d", len(got.NotificationText), bi.TextBytes, tt.bytes)
			}
			if tt.units > 0 {
				if u, _ := ucs2Units([]byte(got.NotificationText)); u != tt.units {
					t.Errorf("%d units, want %d", u, tt.units)
				}
			}
		})
	}
}

func TestReadRecipientsCSV(t *testing.T) {
	tests := []struct {
		name, in, column string
		want             string // joined by |, or the error text
		err              bool
	}{
		// a header without digits is skipped; blank lines too; values trimmed
		{"header auto", "phone,name\n+79990000001,Ann\n\n 79990000002 ,Bob\n", "", "+79990000001|79990000002", false},
		// no header: the first row is a number
		{"no header", "+79990000001\n+79990000002\n", "", "+79990000001|+79990000002", false},
		// a named column
		{"column", "name,phone\nAnn,+1\nBob,+2\n", "phone", "+1|+2", false},
		// a missing column is an error that names it
		{"missing column", "name\nAnn\n", "phone", `no column "phone"`, true},
		// a cell with no digit is not a phone number
		{"not a number", "+1\nhello\n", "", `line 2: "hello" is not a phone number`, true},
		// a short row for the chosen column
		{"short row", "a,phone\nx,+1\ny\n", "phone", "line 3 has no column 2", true},
		// nothing to send to
		{"empty", "phone\n", "", "no recipients", true},
		// broken quoting is reported by the CSV reader
		{"bad quote", "\"+1\n", "", "bad recipients CSV", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readRecipientsCSV(strings.NewReader(tt.in), tt.column)
			if tt.err {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil || strings.Join(got, "|") != tt.want {
				t.Fatalf("got %q %v, want %q", got, err, tt.want)
			}
		})
	}
}

func FuzzReadRecipientsCSV(f *testing.F) {
	f.Add("phone\n+79990000001\n", "")
	f.Add("a,b\n1,2\n", "b")
	f.Add("\"x\n", "")
	f.Fuzz(func(t *testing.T, in, column string) {
		got, err := readRecipientsCSV(strings.NewReader(in), column)
		if err != nil {
			return
		}
		for _, v := range got {
			if v == "" || len(v) > maxRecipientLength || !strings.ContainsAny(v, "0123456789") {
				t.Fatalf("accepted recipient %q", v)
			}
		}
	})
}

// BenchmarkBodyEncodingJSON is the reference for BenchmarkBody/notify: the same
// notify body built with fmt and encoding/json, as a straightforward
// implementation would.
func BenchmarkBodyEncodingJSON(b *testing.B) {
	type recipient struct {
		Value string `json:"value"`
	}
	type body struct {
		Recipient        recipient `json:"recipient"`
		NotificationText string    `json:"notificationText"`
		ExternalID       string    `json:"externalId"`
	}
	tag := testTag
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tag.Seq = int64(i)
		bd := body{Recipient: recipient{Value: fmt.Sprintf("+7999%07d", i%10000000)},
			NotificationText: fmt.Sprintf("load %d %s %s %s", i, msgspec.Words[i%32], msgspec.Words[(i+1)%32], msgspec.Words[(i+2)%32]),
			ExternalID:       tag.ExternalID()}
		if _, err := json.Marshal(bd); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBody(b *testing.B) {
	for _, c := range []struct{ name, src string }{
		{"notify", "api: notify\nload: { rate: 1/s, requests: 1 }\nmessage: { text: \"load {{.Seq}} {{words 3}}\" }\n"},
		{"messaging", "api: messaging\nload: { rate: 1/s, requests: 1 }\nmessage:\n  text: \"load {{.Seq}}\"\n  scenario: [{channel: viber, sender: s, failover: {ttl: 60}}, {channel: sms, sender: s}]\n  trackData: { campaign: x }\n"},
		{"notify-1KiB-cyrillic", "api: notify\nload: { rate: 1/s, requests: 1 }\nmessage: { text: \"{{cyrillic 4}}\", textBytes: 1024, fill: cyrillic }\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			g, err := forScenario(load(b, c.src))
			if err != nil {
				b.Fatal(err)
			}
			tag := testTag
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				tag.Seq = int64(i)
				if _, _, err := g.Body(int64(i), "demo-1", tag); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestConcurrentBodies builds the same bodies from several goroutines and
// compares them with a sequential build: the generator shares no mutable state
// between calls (run with -race to check).
func TestConcurrentBodies(t *testing.T) {
	s := load(t, "api: messaging\nload: { rate: 1/s, requests: 1 }\nmessage:\n  text: \"{{words 3}} {{.Seq}}\"\n  textBytes: 300\n  fill: cyrillic\n  scenario: [{channel: viber, sender: s, text: \"{{emoji 2}}\", failover: {ttl: 5}}, {channel: sms, sender: s}]\n")
	g, err := forScenario(s)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	want := make([][]byte, n)
	for i := range want {
		tag := testTag
		tag.Seq = int64(i)
		want[i], _, _ = g.Body(int64(i), "c", tag)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*n)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := n - 1; i >= 0; i-- {
				tag := testTag
				tag.Seq = int64(i)
				got, _, _ := g.Body(int64(i), "c", tag)
				if !bytes.Equal(got, want[i]) {
					errs <- string(got)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("a concurrent body differs from the sequential one: %s", e)
	}
}

// TestCSVRecipientsRelative reads recipients from a CSV file named relative to
// the scenario file, in the file's order, wrapping around.
func TestCSVRecipientsRelative(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "numbers.csv"), []byte("name,phone\nAnn,+100\nBob,+200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "api: notify\nload: { rate: 1/s, requests: 1 }\nmessage: { recipients: { csv: numbers.csv, column: phone } }\n"
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Load(filepath.Join(dir, "s.yaml"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	g, err := forScenario(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range 3 {
		_, bi, _ := g.Body(int64(i), "c", testTag)
		got = append(got, bi.Recipient)
	}
	if strings.Join(got, ",") != "+100,+200,+100" {
		t.Fatalf("recipients %v", got)
	}
}

func TestExternalIDModes(t *testing.T) {
	tests := []struct {
		name, mode string
		want       string // the externalId sent; "" = none at all
	}{
		{"tagged", "", testTag.ExternalID()},                    // the default carries the correlation tag
		{"none", "none", ""},                                    // no externalId field
		{"template", "order-{{.Client}}-{{.Seq}}", "order-c-7"}, // the user's own ids
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			extra := ""
			if tt.mode != "" {
				extra = ", externalId: \"" + tt.mode + "\""
			}
			g, err := forScenario(load(t, "api: notify\nload: { rate: 1/s, requests: 1 }\nmessage: { text: x"+extra+" }\n"))
			if err != nil {
				t.Fatal(err)
			}
			b, bi, _ := g.Body(7, "c", testTag)
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			id, present := got["externalId"]
			if tt.want == "" {
				if present || bi.ExternalID != "" {
					t.Fatalf("externalId sent: %s", b)
				}
				return
			}
			if id != tt.want || bi.ExternalID != tt.want {
				t.Fatalf("externalId %v (info %q), want %q", id, bi.ExternalID, tt.want)
			}
		})
	}
}
