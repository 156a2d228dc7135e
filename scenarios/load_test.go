package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestScriptScenariosLoad: the scenario files the benchmark scripts run
// (scripts/*.yaml; README, Benchmarks) load and plan messages, so that a
// command the README gives does not fail on its own file.
func TestScriptScenariosLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "scripts", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario in scripts/: %v", err)
	}
	for _, f := range files {
		s, err := Load(f, env(nil))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if s.Plan().Messages == 0 {
			t.Errorf("%s: plans no message", f)
		}
	}
}

func TestBuiltinsLoad(t *testing.T) {
	names := Builtins()
	if len(names) == 0 {
		t.Fatal("no built-in scenarios embedded")
	}
	for _, n := range names {
		s, err := Load(n, env(nil))
		if err != nil {
			t.Errorf("built-in %s: %v", n, err)
			continue
		}
		if s.File != "scenarios/"+n+".yaml" {
			t.Errorf("built-in %s: File = %q", n, s.File)
		}
		src, _ := builtinSource(n)
		// every built-in is documented by a comment block at its top
		if !strings.HasPrefix(string(src), "# "+n+":") {
			t.Errorf("built-in %s: does not start with a comment block \"# %s: …\"", n, n)
		}
		if p := s.Plan(); p.Messages == 0 && s.Load.Profile != "replay" {
			t.Errorf("built-in %s: plans no message", n)
		}
		// the resolved copy a run keeps is itself a scenario with the same plan
		b, err := s.Redacted()
		if err != nil {
			t.Fatalf("built-in %s: %v", n, err)
		}
		again, err := Parse("again.yaml", "", b, env(nil))
		if err != nil {
			t.Errorf("built-in %s: redacted copy does not load: %v\n%s", n, err, b)
			continue
		}
		if p1, p2 := s.Plan(), again.Plan(); p1.Attempts != p2.Attempts || p1.Duration != p2.Duration || len(p1.Parts) != len(p2.Parts) {
			t.Errorf("built-in %s: redacted copy plans differently: %+v vs %+v", n, p1, p2)
		}
	}
}

func TestAllErrorsAtOnce(t *testing.T) {
	src := `name: bad
api: notify
clients: zero
load:
  profile: constant
  rate: 150 per minute
  duraton: 1m
limit: { rate: 100/1m, mode: ignore }
retry: { on: [500, teapot], backoff: soon }
idempotency: { probes: 120% }
thresholds: ["  ", "delivery.lostt == 0", "requests.error_rate <", "delivery.lost", "all(values(delivery.by_channel), .p95 < 1s)"]
`
	_, err := Parse("bad.yaml", "", []byte(src), env(nil))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("want Errors, got %v", err)
	}
	if !errors.Is(err, errInvalid) {
		t.Error("Errors does not match ErrInvalid")
	}
	want := []string{
		`bad.yaml:3:10: clients: want a count`,
		`bad.yaml:6:9: load.rate: bad rate "150 per minute"`,
		`bad.yaml:7:3: load.duraton: unknown field (did you mean "duration"?)`,
		`bad.yaml:8:30: limit.mode: "ignore" is not one of respect, exceed`,
		`bad.yaml:9:20: retry.on[1]: "teapot" is not an HTTP code`,
		`bad.yaml:9:38: retry.backoff: bad duration "soon"`,
		`bad.yaml:10:24: idempotency.probes: bad percentage "120%": must be between`,
		`bad.yaml:11:14: thresholds[0]: empty threshold expression`,
		`bad.yaml:11:20: thresholds[1]: threshold "delivery.lostt == 0": no field lostt, did you mean lost?`,
		`bad.yaml:11:43: thresholds[2]: threshold "requests.error_rate <": unexpected token EOF`,
		`bad.yaml:11:68: thresholds[3]: threshold "delivery.lost": expected bool`,
		// The report's own rule, before the load and not only when the report is built.
		`bad.yaml:11:85: thresholds[4]: threshold "all(values(delivery.by_channel), .p95 < 1s)": .p95 reads a latency through a computed path`,
	}
	got := err.Error()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	if n := strings.Count(got, "\n") + 1; n != len(es) {
		t.Errorf("Error() has %d lines for %d errors", n, len(es))
	}
}

func TestExpand(t *testing.T) {
	tests := []struct {
		name, src string
		env       map[string]string
		want      string // substring of the result, or of the error
		err       bool
	}{
		// a set variable is substituted, also inside a flow mapping
		{"set", "a: { s: ${S} }", map[string]string{"S": "x1"}, `a: { s: "x1" }`, false},
		// the default is used when the variable is unset
		{"default", "a: ${S:-dflt}", nil, `a: "dflt"`, false},
		// an unset variable without default is an error at its column
		{"unset", "a: 1\nb: ${MISSING}", nil, "f:2:4: environment variable MISSING is not set", true},
		// comments are left alone, so documentation may show ${VAR}
		{"comment", "# use ${SECRET}\na: 1 # ${X}", nil, "# use ${SECRET}", false},
		// $${ escapes a literal ${
		{"escape", "a: $${X}", nil, "a: ${X}", false},
		// quoted '#' is not a comment start; inside double quotes the value is escaped
		{"quoted hash", `a: "x #${S}"`, map[string]string{"S": `v"\`}, `a: "x #v\"\\"`, false},
		// inside single quotes, quotes are doubled
		{"single quoted", `a: 'x${S}'`, map[string]string{"S": "it's"}, `a: 'xit''s'`, false},
		// a whole plain value becomes a double-quoted string, so YAML cannot misread it
		{"whole value", "a: ${S} # c", map[string]string{"S": "*x #y: z"}, `a: "*x #y: z" # c`, false},
		// in the middle of a plain value it goes in as it is
		{"inside value", "a: https://${H}/x", map[string]string{"H": "h:1"}, "a: https://h:1/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, _ := expand("f", []byte(tt.src), env(tt.env), maxFileSize)
			if tt.err {
				if len(errs) == 0 || !strings.Contains(errs.Error(), tt.want) {
					t.Fatalf("errors %v, want %q", errs, tt.want)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Fatalf("got %q, want %q in it", out, tt.want)
			}
		})
	}
}

// TestSecretsSurviveYAML loads secrets full of YAML syntax from the environment
// and gets them back byte for byte.
func TestSecretsSurviveYAML(t *testing.T) {
	for _, secret := range []string{"*alias", "a #b", "x: y", `q"uo'te\`, "{[,]}", "- dash", "&anchor", "!tag", "%p", "@at", "  spaced  ", "ж😀"} {
		src := "api: notify\ntarget: { baseUrl: \"http://127.0.0.1:1\", tokenUrl: \"http://127.0.0.1:1/t\" }\nauth: { clientId: c, clientSecret: ${S} }\nload: { rate: 1/s, requests: 1 }\n"
		s, err := Parse("s.yaml", "", []byte(src), env(map[string]string{"S": secret}))
		if err != nil {
			t.Errorf("secret %q: %v", secret, err)
			continue
		}
		if s.Creds[0].Secret != secret {
			t.Errorf("secret %q came back as %q", secret, s.Creds[0].Secret)
		}
	}
}

// TestPositionsAfterExpansion: columns point at what the file says, not at the
// expanded text, and a bad value that came from a variable points at its ${.
func TestPositionsAfterExpansion(t *testing.T) {
	src := "api: notify\nload: { rate: ${RATE}, duration: ${D:-1m}, bogus: 1 }\nclients: ${N}\n"
	_, err := Parse("x.yaml", "", []byte(src), env(map[string]string{"RATE": "150 per minute", "N": "три"}))
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{
		`x.yaml:2:15: load.rate: bad rate "150 per minute"`, // the ${RATE} at column 15
		`x.yaml:2:44: load.bogus: unknown field`,            // after two substitutions, as written
		`x.yaml:3:10: clients: want a count`,                // a non-ASCII value, counted in characters
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in:\n%s", w, err)
		}
	}
}

// TestMessagingClientList: messaging clients may be listed with login and
// password; the credentials resolve the same way and the password is redacted.
func TestMessagingClientList(t *testing.T) {
	src := "api: messaging\ntarget: { baseUrl: \"http://127.0.0.1:1\" }\nclients:\n  - { login: a, password: ${PA} }\n  - { clientId: b, clientSecret: ${PB} }\nload: { rate: 1/s, requests: 2 }\n"
	s, err := Parse("m.yaml", "", []byte(src), env(map[string]string{"PA": "pass-a-1", "PB": "pass-b-2"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.Creds[0] != (Cred{ID: "a", Secret: "pass-a-1"}) || s.Creds[1] != (Cred{ID: "b", Secret: "pass-b-2"}) {
		t.Fatalf("creds %+v", s.Creds)
	}
	b, _ := s.Redacted()
	if strings.Contains(string(b), "pass-") {
		t.Fatalf("password in redacted output:\n%s", b)
	}
	// both names for one thing is a mistake
	_, err = Parse("m.yaml", "", []byte(strings.Replace(src, "{ login: a,", "{ login: a, clientId: x,", 1)), env(map[string]string{"PA": "p", "PB": "q"}))
	if err == nil || !strings.Contains(err.Error(), "clients[0]: set login or clientId") {
		t.Fatalf("got %v", err)
	}
}

// TestMissingVariableIsOneProblem: a missing ${VAR} is reported once, not
// again as the empty or missing value it leaves behind.
func TestMissingVariableIsOneProblem(t *testing.T) {
	src := "api: notify\ntarget: { baseUrl: \"http://127.0.0.1:1\", tokenUrl: \"http://127.0.0.1:1/t\" }\nauth: { clientId: c, clientSecret: \"${NOPE}\" }\nload: { rate: ${RATE}, requests: 1 }\n"
	_, err := Parse("v.yaml", "", []byte(src), env(nil))
	var es Errors
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("want 2 problems, got %v", err)
	}
	for i, w := range []string{"v.yaml:3:37: environment variable NOPE is not set", "v.yaml:4:15: environment variable RATE is not set"} {
		if !strings.HasPrefix(es[i].Error(), w) {
			t.Errorf("problem %d: %q, want %q", i, es[i], w)
		}
	}
}

func TestRespectRefused(t *testing.T) {
	src := "api: notify\nclients: 1\nload: { rate: 150/1m, duration: 2m }\nlimit: { rate: 100/1m, mode: respect }\n"
	_, err := Parse("r.yaml", "", []byte(src), env(nil))
	if err == nil || !strings.Contains(err.Error(), "r.yaml:3:1: load: limit mode respect cannot be kept: client demo-1 would send up to 150.0") {
		t.Fatalf("got %v", err)
	}
	// the same load over two clients is 75/min each: accepted
	src = strings.Replace(src, "clients: 1", "clients: 2", 1)
	s, err := Parse("r.yaml", "", []byte(src), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	p := s.Plan()
	if p.Requests != 300 || len(p.Clients) != 2 || p.Clients[0].Requests != 150 || p.Expected429 != 0 {
		t.Fatalf("plan %+v", p)
	}
}

func TestExceedPlan(t *testing.T) {
	src := "api: notify\nload: { rate: 150/1m, duration: 2m }\nlimit: { rate: 100/1m, mode: exceed }\nmaxMessages: 250\n"
	s, err := Parse("e.yaml", "", []byte(src), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	p := s.Plan()
	// 300 planned, 250 really sent; capped at 250 the two windows carry 125 each: 25 over the limit per window
	if p.Requests != 300 || p.Messages != 250 {
		t.Fatalf("requests %d messages %d", p.Requests, p.Messages)
	}
	if want := 50.0 / 250; p.Expected429 < want-0.01 || p.Expected429 > want+0.01 {
		t.Fatalf("expected 429 share %v, want %v", p.Expected429, want)
	}
}

func TestRedacted(t *testing.T) {
	src := `api: notify
target: { baseUrl: "https://u:pw@api.example.com/x?token=abc", tokenUrl: https://auth.example.com/token }
auth: { clientId: c, clientSecret: ${SECRET} }
clients:
  - clientId: a
    clientSecret: ${SECRET_A}
  - clientId: b
load: { rate: 1/s, requests: 5 }
`
	s, err := Parse("s.yaml", "", []byte(src), env(map[string]string{"SECRET": "s3cr3t-shared", "SECRET_A": "s3cr3t-a"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.Creds[0].Secret != "s3cr3t-a" || s.Creds[1].Secret != "s3cr3t-shared" {
		t.Fatalf("creds %+v", s.Creds)
	}
	b, err := s.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cr3t", "pw@", "abc"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("secret %q in redacted output:\n%s", secret, b)
		}
	}
	if !strings.Contains(string(b), redaction) || !strings.Contains(string(b), "clientId: a") {
		t.Errorf("redacted output lost its shape:\n%s", b)
	}
	// the redacted output is itself a valid scenario (secrets aside)
	if _, err := Parse("again.yaml", "", b, env(nil)); err != nil {
		t.Errorf("redacted output does not load: %v\n%s", err, b)
	}
}

// TestREADMEExample loads the real-target example of README.md (kept as
// testdata/real-notify.yaml): with its secrets set it is valid, and its CSV is
// found relative to the file.
func TestREADMEExample(t *testing.T) {
	s, err := Load("testdata/real-notify.yaml", env(map[string]string{"LOAD_A_SECRET": "a", "LOAD_B_SECRET": "b"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.Target.Embedded || !slices.Equal(s.Confirm, Hosts{"notify.staging.example.com", "auth.staging.example.com"}) || len(s.Creds) != 2 {
		t.Fatalf("target %+v confirm %q creds %d", s.Target, s.Confirm, len(s.Creds))
	}
	if got := s.ResolvePath(s.Message.Recipients.CSV); got != filepath.Join("testdata", "staging-numbers.csv") {
		t.Fatalf("csv resolves to %q", got)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, _ := os.ReadFile("testdata/real-notify.yaml")
	if !strings.Contains(string(readme), string(example)) {
		t.Fatal("README.md's example differs from testdata/real-notify.yaml")
	}
}

// A constant profile needs a duration above zero or a total count; a
// duration that is written but bad gets its own error and no second one.
func TestConstantNeedsDurationOrCount(t *testing.T) {
	tests := []struct {
		load string
		want []string // the whole list of problems, in order
	}{
		{"{ rate: 10/s }", []string{"x.yaml:4:1: load: set duration or requests (a total count)"}},
		{"{ rate: 10/s, duration: 0s }", []string{"x.yaml:4:31: load.duration: must be above 0 (or set requests, a total count)"}},
		{"{ rate: 10/s, duration: 5x }", []string{`x.yaml:4:31: load.duration: bad duration "5x"`}},
		{"{ rate: 10/s, requests: ten }", []string{`x.yaml:4:31: load.requests: `}},
		{"{ rate: 10/s, requests: 10 }", nil},
		{"{ rate: 10/s, duration: 0s, requests: 10 }", nil},
		{"{ rate: 10/s, duration: 1s }", nil},
	}
	for _, tt := range tests {
		src := "name: x\napi: notify\ntarget: embedded\nload: " + tt.load + "\n"
		_, err := Parse("x.yaml", "", []byte(src), env(nil))
		var es Errors
		if tt.want == nil {
			if err != nil {
				t.Errorf("load %s: %v", tt.load, err)
			}
			continue
		}
		if !errors.As(err, &es) || len(es) != len(tt.want) {
			t.Errorf("load %s: want %d problems, got %v", tt.load, len(tt.want), err)
			continue
		}
		for i, w := range tt.want {
			if !strings.HasPrefix(es[i].Error(), w) {
				t.Errorf("load %s: problem %d is %q, want %q…", tt.load, i, es[i].Error(), w)
			}
		}
	}
}

// A threshold on a figure the report calls "not measured" could never be
// judged: with delivery: none, validate refuses a delivery threshold where it
// is written, and accepts the others.
func TestDeliveryNoneRefusesDeliveryThresholds(t *testing.T) {
	src := `name: none
api: notify
target: embedded
clients: 1
load: { profile: constant, rate: 2/s, requests: 4 }
message: { recipient: "+79990000000", text: "x" }
delivery: { via: none }
thresholds: ["requests.error_rate < 1%", "delivery.latency.p95 < 1s", "delivery.lost == 0", "outcomes.delivered > 0", "outcomes.accepted > 0"]
`
	_, err := Parse("none.yaml", "", []byte(src), env(nil))
	if err == nil {
		t.Fatal("validate accepted delivery thresholds with delivery: none")
	}
	got := err.Error()
	for _, w := range []string{
		`none.yaml:8:42: thresholds[1]: threshold "delivery.latency.p95 < 1s": delivery.latency.p95: delivery is not measured (delivery: none), so no run of this scenario can judge it`,
		`none.yaml:8:71: thresholds[2]: threshold "delivery.lost == 0": delivery.lost: delivery is not measured`,
		`none.yaml:8:93: thresholds[3]: threshold "outcomes.delivered > 0": outcomes.delivered: delivery is not measured`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	if strings.Contains(got, "thresholds[0]") || strings.Contains(got, "thresholds[4]") {
		t.Errorf("a threshold on a measured figure was refused:\n%s", got)
	}
	if _, err := Parse("sink.yaml", "", []byte(strings.Replace(src, "via: none", "via: sink", 1)), env(nil)); err != nil {
		t.Errorf("delivery via the sink measures them: %v", err)
	}
}
