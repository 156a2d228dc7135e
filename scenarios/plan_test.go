package scenarios

import (
	"math"
	"strings"
	"testing"
	"time"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestPlanProfiles(t *testing.T) {
	tests := []struct {
		name     string
		load     string
		requests int64
		dur      time.Duration
		peak     float64
	}{
		// constant with a duration: rate × duration
		{"constant duration", "{ rate: 10/s, duration: 30s }", 300, 30 * time.Second, 10},
		// constant with a count: the duration follows
		{"constant count", "{ rate: 120/1m, requests: 50 }", 50, 25 * time.Second, 2},
		// a linear ramp sends its mean rate
		{"ramp", "{ profile: ramp, from: 0/s, to: 10/s, duration: 20s }", 100, 20 * time.Second, 10},
		// steps add up
		{"steps", "{ profile: steps, steps: [{rate: 1/s, duration: 10s}, {rate: 5/s, duration: 10s}] }", 60, 20 * time.Second, 5},
		// a sine over whole periods sends its mean rate; its peak is mean + amplitude
		{"sine", "{ profile: sine, rate: 10/s, amplitude: 5/s, period: 10s, duration: 20s }", 200, 20 * time.Second, 15},
		// requests caps a longer profile and shortens it
		{"steps capped", "{ profile: steps, requests: 20, steps: [{rate: 1/s, duration: 10s}, {rate: 5/s, duration: 10s}] }", 20, 12 * time.Second, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("p.yaml", "", []byte("api: messaging\nload: "+tt.load+"\n"), env(nil))
			if err != nil {
				t.Fatal(err)
			}
			p := s.Plan()
			if p.Requests != tt.requests || !near(p.Duration.Seconds(), tt.dur.Seconds(), 0.05) || !near(p.PeakPerSecond, tt.peak, 0.01) {
				t.Fatalf("requests %d duration %v peak %.3f; want %d %v %.3f", p.Requests, p.Duration, p.PeakPerSecond, tt.requests, tt.dur, tt.peak)
			}
		})
	}
}

func TestScaleKeepsCounts(t *testing.T) {
	for _, n := range Builtins() {
		s, err := Load(n, env(nil))
		if err != nil {
			t.Fatal(err)
		}
		before := s.Plan()
		s.Scale(0.01)
		if err := s.Validate(); err != nil {
			t.Errorf("%s scaled: %v", n, err)
			continue
		}
		after := s.Plan()
		// the same messages, per client and per window, in a hundredth of the time
		if after.Messages != before.Messages || !near(after.Expected429, before.Expected429, 0.01) {
			t.Errorf("%s: messages %d→%d, 429 %.3f→%.3f", n, before.Messages, after.Messages, before.Expected429, after.Expected429)
		}
		if !near(after.Duration.Seconds(), before.Duration.Seconds()*0.01, 0.01) {
			t.Errorf("%s: duration %v→%v", n, before.Duration, after.Duration)
		}
	}
	s, _ := Load("soak", env(nil))
	s.Scale(0.01)
	if s.Sim.TokenLifetime.D != 3*time.Second || s.Limit.Rate.Per != 600*time.Millisecond || s.Sim.RateLimit.Rate.Per != 600*time.Millisecond {
		t.Errorf("soak scaled: token lifetime %v, limit %v, sim limit %v", s.Sim.TokenLifetime.D, s.Limit.Rate, s.Sim.RateLimit.Rate)
	}
}

func TestParts(t *testing.T) {
	src := `name: two
target: embedded
maxMessages: 5
parts:
  - api: notify
    load: { rate: 1/s, requests: 10 }
  - name: m
    api: messaging
    load: { rate: 1/s, requests: 3 }
    maxMessages: 2
`
	s, err := Parse("two.yaml", "", []byte(src), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	// parts get a default name, inherit maxMessages unless they set it
	if s.Parts[0].Name != "two-notify" || s.Parts[0].MaxMessages != 5 || s.Parts[1].MaxMessages != 2 {
		t.Fatalf("parts %q %d %q %d", s.Parts[0].Name, s.Parts[0].MaxMessages, s.Parts[1].Name, s.Parts[1].MaxMessages)
	}
	p := s.Plan()
	if len(p.Parts) != 2 || p.Requests != 13 || p.Messages != 7 {
		t.Fatalf("plan %+v", p)
	}
	// a part error names the part's path
	_, err = Parse("bad.yaml", "", []byte("parts:\n  - api: notify\n    load: { rate: 1/s }\n"), env(nil))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml:3:5: parts[0].load: set duration or requests") {
		t.Fatalf("got %v", err)
	}
	// top-level run fields next to parts are refused
	_, err = Parse("mix.yaml", "", []byte("api: notify\nparts:\n  - api: notify\n    load: { rate: 1/s, requests: 1 }\n"), env(nil))
	if err == nil || !strings.Contains(err.Error(), "a file with parts holds only") {
		t.Fatalf("got %v", err)
	}
}

func TestDecodeShapes(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		// a mapping where a scalar belongs
		{"mapping for scalar", "api: { x: 1 }\n", "f.yaml:1:6: api: want a string, got a mapping"},
		// a list where a mapping belongs
		{"list for struct", "load: [1, 2]\n", "f.yaml:1:7: load: want a mapping, got a list"},
		// duplicate keys are refused
		{"duplicate", "api: notify\napi: notify\n", `f.yaml:2:1: YAML: mapping key "api" already defined`},
		// an undefined alias
		{"alias", "api: *nope\n", "api:"},
		// a merge key is refused rather than silently ignored
		{"merge", "load:\n  <<: { rate: 1/s }\n", "merge keys (<<) are not supported"},
		// a YAML syntax error has its position
		{"syntax", "api: notify\nload: { rate: 1/s\n", "f.yaml:"},
		// an empty file
		{"empty", "# nothing\n", "f.yaml: empty scenario file"},
		// two documents
		{"two docs", "api: notify\n---\napi: notify\n", "one YAML document"},
		// messaging fields on notify
		{"wrong api field", "api: notify\nload: { rate: 1/s, requests: 1 }\nmessage: { scenario: [{ channel: sms }] }\n", "message.scenario: a messaging field"},
		// sms sender length from the seed
		{"sender length", "api: messaging\nload: { rate: 1/s, requests: 1 }\nmessage: { scenario: [{ channel: sms, sender: twelve-chars }] }\n", "at most 11 for sms"},
		// channels must be unique within a request
		{"unique channels", "api: messaging\nload: { rate: 1/s, requests: 1 }\nmessage: { scenario: [{ channel: sms }, { channel: sms }] }\n", "used twice"},
		// a real target needs credentials from the environment
		{"real target", "api: notify\ntarget: { baseUrl: \"https://api.example.com\", tokenUrl: \"https://auth.example.com/t\" }\nload: { rate: 1/s, requests: 1 }\n", "auth.clientSecret: required for a real target"},
		// a bad URL is quoted without its password
		{"url password", "api: messaging\ntarget: { baseUrl: \"ftp://u:hunter2@h\" }\nauth: { login: u, password: p }\nload: { rate: 1/s, requests: 1 }\n", `"ftp://u:%5BREDACTED%5D@h" is not an http or https URL`},
		// confirm is a host, not a URL
		{"confirm", "api: notify\nconfirm: https://api.example.com\nload: { rate: 1/s, requests: 1 }\n", "confirm: want a host name"},
		// a bool field takes true or false only
		{"bool", "api: messaging\nload: { rate: 1/s, requests: 1 }\nmessage: { urlOptions: { shortenUrl: maybe } }\n", `message.urlOptions.shortenUrl: want true or false, got "maybe"`},
		// an externalId template that never changes would make every message one
		{"static externalId", "api: notify\nload: { rate: 1/s, requests: 1 }\nmessage: { externalId: same }\n", `"same" is the same for every message`},
		// an externalId template with fewer ids than a client's messages: collisions blamed on the service
		{"externalId too few", "api: notify\nload: { rate: 8/s, requests: 40 }\nmessage: { externalId: \"order-{{digits 1}}\" }\n", `"order-{{digits 1}}" gives 10 different ids for up to 40 messages`},
		// more ids than messages, but random: two alike by chance (birthday)
		{"externalId birthday", "api: notify\nload: { rate: 8/s, requests: 400 }\nlimit: { mode: exceed }\nmessage: { externalId: \"order-{{digits 5}}\" }\n", "the same externalId with a chance of 55.0%"},
		// the recipient in its sequential order repeats after 10 numbers
		{"externalId recipient cycle", "api: notify\nload: { rate: 8/s, requests: 40 }\nmessage: { recipient: \"+7999000000{0-9}\", externalId: \"id-{{.Recipient}}\" }\n", "gives 10 different ids"},
		// EXPIRED is never drawn: it comes from a failover's ttl (the run used to ERROR after creating its directory)
		{"outcome EXPIRED", "api: messaging\nload: { rate: 1/s, requests: 1 }\nsim: { profiles: { sms: { outcomes: { EXPIRED: 10% } } } }\n", "sim.profiles.sms.outcomes.EXPIRED: the simulator does not draw EXPIRED"},
		// polling is messaging only
		{"poll notify", "api: notify\nload: { rate: 1/s, requests: 1 }\ndelivery: { via: poll }\n", "poll needs the messaging API"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("f.yaml", "", []byte(tt.src), env(nil))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestPlanOverheads(t *testing.T) {
	base := "api: notify\nload: { rate: 90/1m, duration: 1m }\nlimit: { rate: 100/1m, mode: respect }\n"
	tests := []struct {
		name            string
		extra           string
		probes, retries int64
		refused         bool
	}{
		// no probes, no faults: only the messages
		{"plain", "", 0, 0, false},
		// 10% probes with the default 2 concurrent copies: 3 extra requests per probed message
		{"probes", "idempotency: { probes: 10% }\n", 27, 0, true},
		// faults retried: 20% fail, retried up to 2 times: 0.2 + 0.04 per message
		{"retries", "retry: { on: [500, 503], max: 2 }\nsim: { faults: { error500: 10%, error503: 10% } }\n", 0, 22, true},
		// faults not in retry.on cause no retry
		{"not retried", "retry: { on: [503], max: 2 }\nsim: { faults: { error500: 20% } }\n", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("o.yaml", "", []byte(base+tt.extra), env(nil))
			if tt.refused {
				// 90/min plus the overhead is above 100/min: respect cannot be kept
				if err == nil || !strings.Contains(err.Error(), "cannot be kept") {
					t.Fatalf("got %v, want a refusal", err)
				}
				s, err = Parse("o.yaml", "", []byte(strings.Replace(base, "respect", "exceed", 1)+tt.extra), env(nil))
			}
			if err != nil {
				t.Fatal(err)
			}
			p := s.Plan()
			if p.Probes != tt.probes || p.Retries != tt.retries || p.Attempts != p.Messages+tt.probes+tt.retries {
				t.Fatalf("probes %d retries %d attempts %d; want %d %d", p.Probes, p.Retries, p.Attempts, tt.probes, tt.retries)
			}
			if tt.refused && p.Expected429 <= 0 {
				t.Fatalf("exceeding with overhead but no 429 expected")
			}
		})
	}
}
