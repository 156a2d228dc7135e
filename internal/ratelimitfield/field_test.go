package ratelimitfield

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The fields as the draft writes them parse; what breaks its rules (q or r
// missing, w zero, t not delay-seconds, a malformed list) does not.
func TestParseRLFields(t *testing.T) {
	ps, err := ParsePolicy(`"default";q=100;w=60, "burst";q=10;w=1`)
	if err != nil || !reflect.DeepEqual(ps, []Policy{{"default", 100, 60}, {"burst", 10, 1}}) {
		t.Errorf("%+v %v", ps, err)
	}
	ls, err := ParseLimit(`"default";r=42;t=17`)
	if err != nil || !reflect.DeepEqual(ls, []Limit{{"default", 42, 17}}) {
		t.Errorf("%+v %v", ls, err)
	}
	if ls, err := ParseLimit(`default;r=0`); err != nil || ls[0].T != -1 {
		t.Errorf("a token name, no t: %+v %v", ls, err)
	}
	for _, bad := range []string{`"default";w=60`, `"default";q=100;w=0`, `"default";q=-1`, `"default";q=1.5`, `"default";q=1,`, `"default;q=1`, ``, `"d";q=1 x`,
		`100;w=60`, `"default";q=100;w=1.5`, `"default";q=10;w=10, !`, `q=100;w=60`} { // the last four: what the reports' loose reader once read
		if _, err := ParsePolicy(bad); err == nil {
			t.Errorf("RateLimit-Policy %q: no error", bad)
		}
	}
	for _, bad := range []string{`"default";t=1`, `"default";r=1;t=-1`, `"default";r=1;t=1.5`, `"default";r=x`} {
		if _, err := ParseLimit(bad); err == nil {
			t.Errorf("RateLimit %q: no error", bad)
		}
	}
}

// Outside input: the parsers never panic, and what they accept is read back
// the same from its canonical form.
func FuzzRateLimitFields(f *testing.F) {
	for _, s := range []string{`"default";q=100;w=60`, `"default";r=42;t=17`, `a;q=1, "b";q=2;w=3`, `"x\"y";r=0`, `"d";q=1;qu="requests";pk=:cHsxMjM=:`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, perr := ParsePolicy(s)
		ls, lerr := ParseLimit(s)
		pol, lim := formatRL(ps, ls)
		if perr == nil {
			if again, err := ParsePolicy(pol); err != nil || !reflect.DeepEqual(again, ps) {
				t.Errorf("%q → %+v → %q → %+v %v", s, ps, pol, again, err)
			}
		}
		if lerr == nil {
			if again, err := ParseLimit(lim); err != nil || !reflect.DeepEqual(again, ls) {
				t.Errorf("%q → %+v → %q → %+v %v", s, ls, lim, again, err)
			}
		}
	})
}

// formatRL is the canonical text of parsed fields (the fuzz test's round trip).
func formatRL(ps []Policy, ls []Limit) (policy, limit string) {
	var pb, lb []string
	for _, p := range ps {
		s := sfString(p.Name) + fmt.Sprintf(";q=%d", p.Q)
		if p.W > 0 {
			s += fmt.Sprintf(";w=%d", p.W)
		}
		pb = append(pb, s)
	}
	for _, l := range ls {
		s := sfString(l.Name) + fmt.Sprintf(";r=%d", l.R)
		if l.T >= 0 {
			s += fmt.Sprintf(";t=%d", l.T)
		}
		lb = append(lb, s)
	}
	return strings.Join(pb, ", "), strings.Join(lb, ", ")
}

func sfString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
