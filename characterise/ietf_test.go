package characterise

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
)

// answer is a decision at ms after t0, answered in 10 ms, with the fields.
func answer(t0 time.Time, seq int64, ms int, code int, rl, policy string) rundir.Attempt {
	return rundir.Attempt{Op: "send", Seq: seq, Attempt: 1, Code: code, Sent: t0.Add(time.Duration(ms) * time.Millisecond), Latency: 0.01, RateLimit: rl, RateLimitPolicy: policy}
}

// What the fields say holds or not, answer to answer and against what was
// observed: each broken rule is named.
func TestCheckIETF(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pol := `"default";q=2;w=10`
	good := []rundir.Attempt{
		answer(t0, 1, 0, 200, `"default";r=1;t=10`, pol), answer(t0, 2, 100, 200, `"default";r=0;t=10`, pol),
		answer(t0, 3, 200, 429, `"default";r=0;t=10`, pol), answer(t0, 4, 10_000, 200, `"default";r=1;t=10`, pol),
	}
	for _, tc := range []struct {
		name   string
		as     []rundir.Attempt
		broken string
	}{
		{"consistent", good, ""},
		{"r on a 429", append(good[:2:2], answer(t0, 3, 200, 429, `"default";r=1;t=10`, pol)), "r 0 on a 429"},
		{"r over q", append(good[:1:1], answer(t0, 2, 100, 200, `"default";r=3;t=10`, pol)), "r within q"},
		{"policy changed", append(good[:1:1], answer(t0, 2, 100, 200, `"default";r=0;t=10`, `"default";q=3;w=10`)), "the same policy on every answer"},
		{"accepted before a 429's t", append(good[:3:3], answer(t0, 4, 2000, 200, `"default";r=0;t=8`, pol)), "no acceptance before a 429's t"},
		{"malformed", append(good[:1:1], answer(t0, 2, 100, 200, `"default";t=10`, pol)), "well formed"},
		{"one field only", append(good[:1:1], answer(t0, 2, 100, 200, "", pol)), "both fields on an answer"},
		{"a policy not announced", append(good[:1:1], answer(t0, 2, 100, 200, `"other";r=0`, pol)), "RateLimit names a policy of RateLimit-Policy"},
	} {
		c := checkIETF(tc.as)
		f := c.finding(nil)
		switch {
		case tc.broken == "" && f.Value != yes:
			t.Errorf("%s: %s %q", tc.name, f.Value, f.Evidence)
		case tc.broken != "" && (f.Value != no || c.broke[tc.broken] != 1):
			t.Errorf("%s: %s, %q broken %d times: %q", tc.name, f.Value, tc.broken, c.broke[tc.broken], f.Evidence)
		}
	}
}

// Against the simulator with its IETF fields on (sim rateLimit.headers),
// served as a real target: characterise finds them present and consistent;
// against the embedded one (the seeds' behaviour, no fields), absent.
func TestIETFFieldsOfTheSimulator(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	cfg.RateLimit.Requests, cfg.RateLimit.Window, cfg.RateLimit.Headers = 20, 2*time.Second, true
	sv, err := sim.New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	srv := httptest.NewServer(sv.Handler())
	defer srv.Close()
	f, err := parse(t, fmt.Sprintf(`name: ietf
api: notify
target: { baseUrl: "%s", tokenUrl: "%s/oauth/token" }
clients:
  - { clientId: demo-1, clientSecret: demo }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
delivery: { via: none }
expect:
  rate_limit.ietf_fields: present
  rate_limit.ietf_fields_consistent: yes
`, srv.URL, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	o := matrixOptions
	o.Budget = 200
	res := characteriseOnly(t, f, o, probeBurst) // the fields' findings are the burst probe's
	var text strings.Builder
	_ = res.Contract.Text(&text)
	held := true // cannot tell is allowed only when a probe's run did not hold its plan (a busy machine)
	for _, p := range res.Contract.Probes {
		held = held && (p.Verdict == reports.VerdictPass || p.Verdict == reports.ProbeSkipped)
	}
	for _, fd := range res.Contract.Findings {
		if fd.Expected != "" && fd.Verdict != reports.VerdictPass && (fd.Value != reports.CannotTell || held) {
			t.Errorf("%s: %s %q\n%s", fd.Rule, fd.Reason, fd.Evidence, text.String())
		}
	}
	t.Log(text.String())
}
