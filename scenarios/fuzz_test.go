package scenarios

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse feeds arbitrary text to the scenario loader: it must never panic,
// and it must either return a scenario whose plan and redacted form can be
// computed, or Errors each naming the file.
func FuzzParse(f *testing.F) {
	for _, n := range Builtins() {
		src, _ := builtinSource(n)
		f.Add(string(src))
	}
	f.Add("api: notify\nload: { rate: 1/s, requests: 3 }\n")
	f.Add("api: messaging\nload: { profile: steps, steps: [{rate: 1/s, duration: 1s}] }\nmessage: { scenario: [{channel: sms}] }\n")
	f.Add("a: &x 1\nb: *x\n")
	f.Add("api: ${A:-notify}\nload: {profile: sine, rate: 2/s, amplitude: 1/s, period: 1s, duration: 2s}\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse("fuzz.yaml", "", []byte(src), func(k string) string {
			if k == "SET" {
				return "v"
			}
			return ""
		})
		if err != nil {
			es, ok := err.(Errors)
			if !ok || len(es) == 0 {
				t.Fatalf("error is not a non-empty Errors: %T %v", err, err)
			}
			for _, e := range es {
				if e.File != "fuzz.yaml" || e.Msg == "" {
					t.Fatalf("error without file or message: %#v", e)
				}
				if e.Line < 0 || e.Col < 0 {
					t.Fatalf("negative position: %v", e)
				}
			}
			if !utf8.ValidString(err.Error()) && utf8.ValidString(src) {
				t.Fatalf("error text is not UTF-8 for UTF-8 input: %q", err.Error())
			}
			return
		}
		p := s.Plan()
		if p.Messages > p.Requests || p.Messages < 0 {
			t.Fatalf("plan sends %d of %d", p.Messages, p.Requests)
		}
		if _, err := s.Redacted(); err != nil {
			t.Fatalf("redact: %v", err)
		}
		if strings.Contains(src, "${") && s.Name == "" {
			t.Fatal("no name after defaults")
		}
	})
}
