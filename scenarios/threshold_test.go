package scenarios

import (
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
