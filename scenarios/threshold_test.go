package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// A threshold is a string or a mapping { expr, abortOnFail, delayAbortEval };
// both forms load, the mapping keeps its options, and a problem in the
// mapping form points at its line and column.
func TestThresholdForms(t *testing.T) {
	src := `name: th
api: notify
target: embedded
clients: 1
load: { profile: constant, rate: 2/s, requests: 4 }
message: { recipient: "+79990000000", text: "x" }
thresholds:
  - "requests.error_rate < 1%"
  - expr: idempotency.mismatches == 0
    abortOnFail: true
    delayAbortEval: 30s
`
	s, err := Parse("th.yaml", "", []byte(src), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Thresholds) != 2 || !s.Thresholds[0].Plain() || s.Thresholds[0].Expr != "requests.error_rate < 1%" {
		t.Fatalf("thresholds %+v", s.Thresholds)
	}
	if th := s.Thresholds[1]; th.Expr != "idempotency.mismatches == 0" || !th.AbortOnFail || th.DelayAbortEval.D != 30*time.Second {
		t.Fatalf("the mapping form: %+v", th)
	}
	if got := s.ThresholdExprs(); strings.Join(got, ";") != "requests.error_rate < 1%;idempotency.mismatches == 0" {
		t.Errorf("ThresholdExprs %q", got)
	}
	// The redacted scenario (scenario.yaml of a run) keeps both forms.
	red, err := s.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Thresholds []any `yaml:"thresholds"`
	}
	if err := yaml.Unmarshal(red, &back); err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Thresholds[0].(string); !ok || len(back.Thresholds) != 2 {
		t.Fatalf("redacted thresholds %#v", back.Thresholds)
	}
	if m, ok := back.Thresholds[1].(map[string]any); !ok || m["abortOnFail"] != true || m["delayAbortEval"] != "30s" {
		t.Fatalf("redacted mapping %#v", back.Thresholds[1])
	}

	bad := strings.Replace(src, "expr: idempotency.mismatches == 0", "expr: delivery.lost == 0", 1) +
		"  - expr: idempotency.mismatchez == 0\n    abortOnFail: true\n" +
		"  - expr: requests.total > 0\n    delayAbortEval: 5s\n" +
		"  - 42s\n  - [a]\n  - { expr: x == 1, abortOnFaill: true }\n"
	_, err = Parse("th.yaml", "", []byte(bad), env(nil))
	if err == nil {
		t.Fatal("bad thresholds accepted")
	}
	got := err.Error()
	for _, w := range []string{
		`th.yaml:9:11: thresholds[1].expr: threshold "delivery.lost == 0": delivery.lost is only known when the run has ended`,
		`th.yaml:12:11: thresholds[2].expr: threshold "idempotency.mismatchez == 0": no field mismatchez`,
		`th.yaml:15:21: thresholds[3].delayAbortEval: delayAbortEval delays the live judgement of abortOnFail`,
		`th.yaml:17:5: thresholds[5]: want an expression, or a mapping`,
		`th.yaml:18:13: thresholds[6].expr: threshold "x == 1": unknown name x`,
		`th.yaml:18:21: thresholds[6].abortOnFaill: unknown field (did you mean "abortOnFail"?)`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
}

// A threshold on a figure that no run of the scenario can measure fails "no
// data" at the end of every run: validation refuses it where it is written,
// before an hour's soak is spent on it. The same threshold is accepted as
// soon as the scenario measures it.
func TestThresholdNeverMeasured(t *testing.T) {
	base := `name: nm
api: %s
target: embedded
clients: 1
load: { profile: constant, rate: 2/s, requests: 4 }
message: { recipient: "+79990000000", text: "x"%s }
%s
thresholds:
  - "requests.error_rate < 1%%"
  - %s
`
	cases := []struct {
		name, api, extra, more, expr string
		want                         string // "" accepted
	}{
		{"mismatches no resend", "notify", "", "retry: { max: 0 }", "idempotency.mismatches == 0",
			`nm.yaml:10:5: thresholds[1]: threshold "idempotency.mismatches == 0": idempotency.mismatches: nothing in the scenario resends a message under its key`},
		{"mismatches live", "notify", "", "retry: { on: [500] }", "{ expr: idempotency.mismatches == 0, abortOnFail: true }",
			`nm.yaml:10:13: thresholds[1].expr: threshold "idempotency.mismatches == 0": idempotency.mismatches: nothing in the scenario resends`},
		{"mismatches probes", "notify", "", "retry: { max: 0 }\nidempotency: { probes: 10% }", "idempotency.mismatches == 0", ""},
		{"mismatches in flight", "notify", "", "retry: { max: 0 }\nidempotency: { inFlight: 1 }", "idempotency.mismatches == 0", ""},
		{"mismatches default retry", "notify", "", "", "idempotency.mismatches == 0", ""},
		{"excess no limit", "messaging", `, scenario: [ { channel: sms, sender: s } ]`, "", "rate_limit.excess_accepted == 0",
			`nm.yaml:10:5: thresholds[1]: threshold "rate_limit.excess_accepted == 0": rate_limit.excess_accepted: the scenario names no rate limit`},
		{"max per window no limit", "messaging", `, scenario: [ { channel: sms, sender: s } ]`, "", "rate_limit.max_accepted_per_window <= 5",
			"names no rate limit"},
		{"excess limit", "messaging", `, scenario: [ { channel: sms, sender: s } ]`, "limit: { rate: 100/1m }", "rate_limit.excess_accepted == 0", ""},
		{"notify default limit", "notify", "", "", "rate_limit.excess_accepted == 0", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := fmt.Sprintf(base, tc.api, tc.extra, tc.more, tc.expr)
			_, err := Parse("nm.yaml", "", []byte(src), env(nil))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused:\n%v\n%s", err, src)
			case tc.want != "" && err == nil:
				t.Fatalf("accepted, want %q:\n%s", tc.want, src)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("got:\n%v\nwant %q", err, tc.want)
			}
		})
	}
}
