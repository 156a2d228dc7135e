package characterise

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/reports"
)

// tokenSecret is the client secret of the token tests' files: it must not
// reach the run directory.
const tokenSecret = "tok-s3cret-Qx7v"

// tokenSource is a characterisation file against the simulator whose
// tokens live lifetime and announce expiresIn ("" for the lifetime).
func tokenSource(lifetime, expiresIn string) string {
	lines := "  tokenLifetime: " + lifetime + "\n"
	if expiresIn != "" {
		lines += "  tokenExpiresIn: " + expiresIn + "\n"
	}
	src := simSource("tok", 5, 0, "{ rate: 1000/1s }", lines)
	return strings.Replace(src, "target: embedded\n", "target: embedded\nauth: { clientId: tok, clientSecret: ${TOK_SECRET} }\n", 1)
}

// tokenOnly runs the token probe of src alone, through Run: ages up to 4 s.
func tokenOnly(t *testing.T, src string) *Result {
	t.Helper()
	f, err := Parse("c.yaml", "", []byte(src), func(k string) string {
		if k == "TOK_SECRET" {
			return tokenSecret
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(f, Options{Budget: 600, MaxWindow: 4 * time.Second, MaxTime: 6 * time.Minute}) // time for every probe before it: the ladder is cut to what --max-time leaves
	if err != nil {
		t.Fatal(err)
	}
	var keep []Probe
	for _, pr := range p.Probes {
		if pr.Name == probeToken {
			keep = append(keep, pr)
		}
	}
	if len(keep) != 1 || len(keep[0].ladder) < 4 {
		t.Fatalf("the plan's token probe: %+v", keep)
	}
	p.Probes = keep
	res, err := Run(context.Background(), RunOptions{Plan: p, File: f, Harness: harness.Options{Out: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The token matrix: the simulator's token lifetime and the expires_in it
// announces (the same, or longer than the truth): characterise names the
// announced value, a lifetime interval that holds the truth (the token's exp
// is whole seconds, rounded up: it lives lifetime to lifetime + 1 s),
// whether they agree, that a refused token is replaced by a new one that is
// accepted, and the 401 and 403 answers' shapes. A finding may be cannot
// tell only when the probe's run says its plan was not held; never wrong.
func TestTokenMatrix(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, expiresIn string
		announced       float64
		want            string // lifetime_as_announced
	}{
		{"as-announced", "", 2, yes},
		{"announced-longer", "6s", 6, tokenShorter},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			con := tokenOnly(t, tokenSource("2s", c.expiresIn)).Contract
			checkTokens(t, con, c.announced, 2, c.want)
		})
	}
}

// checkTokens holds the token findings of con to the simulator's truth.
func checkTokens(t *testing.T, con *reports.Contract, announced, lifetime float64, asAnnounced string) {
	t.Helper()
	var text strings.Builder
	_ = con.Text(&text)
	// incomplete: the plan was not held (a busy machine); error against the
	// embedded simulator is msgload's (a probe that could not run, or a
	// measurement that disagreed with its truth): never excused
	if con.Verdict == reports.VerdictError {
		t.Errorf("the characterisation ended error: %q", con.Reasons)
	}
	held := con.Verdict != reports.VerdictIncomplete
	want := map[string]string{RuleTokenExpiresIn: fmt.Sprint(announced), RuleTokenAsAnnounced: asAnnounced, RuleTokenRefresh: yes,
		RuleTokenExpired: `401 Bearer error="invalid_token" {error,message,status}`, RuleTokenForbidden: `403 Bearer error="insufficient_scope" {error,message,status}`}
	seen := map[string]bool{}
	for _, f := range con.Findings {
		seen[f.Rule] = true
		w, ok := want[f.Rule]
		switch {
		case f.Rule == RuleTokenLifetime && f.Value != reports.CannotTell:
			// the truth is lifetime .. lifetime + 1 s: the interval must meet it
			if *f.Low > lifetime+tokenSlack || *f.High < lifetime {
				t.Errorf("lifetime %s, the truth %gs to %gs: %q", f.Value, lifetime, lifetime+tokenSlack, f.Evidence)
			}
		case f.Rule == RuleTokenLifetime && held:
			t.Errorf("lifetime: cannot tell (%s)\n%s", f.Because, text.String())
		case !ok:
		case f.Value == reports.CannotTell:
			if held {
				t.Errorf("%s: cannot tell (%s), want %s\n%s", f.Rule, f.Because, w, text.String())
			}
		case !matches(&f, w):
			t.Errorf("%s = %s, want %s: %q", f.Rule, f.Value, w, f.Evidence)
		}
	}
	for r := range want {
		if !seen[r] {
			t.Errorf("no finding of %s\n%s", r, text.String())
		}
	}
	t.Log(text.String())
	if !held {
		t.Logf("%s: %s", con.Verdict, strings.Join(con.Reasons, "; "))
	}
}

// compare of two characterisations whose simulators differ in the
// expires_in they announce names it (and that it no longer agrees with the
// lifetime), and no other token rule changes from one told value to another.
func TestTokenDriftNamesTheKnob(t *testing.T) {
	t.Parallel()
	var cs [2]*reports.Contract
	t.Run("both", func(t *testing.T) {
		for i, e := range []string{"", "6s"} {
			t.Run("expiresIn="+e, func(t *testing.T) {
				t.Parallel()
				cs[i] = tokenOnly(t, tokenSource("2s", e)).Contract
			})
		}
	})
	if cs[0] == nil || cs[1] == nil {
		return
	}
	named := false
	for _, c := range reports.ContractDrift(cs[0], cs[1]) {
		switch {
		case c.Rule == RuleTokenExpiresIn && c.Base == "2" && c.New == "6":
			named = true
		case c.Rule == RuleTokenAsAnnounced && c.Base == yes && c.New == tokenShorter: // what the knob does: named too
		case c.Base != reports.CannotTell && c.New != reports.CannotTell && strings.HasPrefix(c.Rule, "tokens."):
			t.Errorf("%s changed too: %s → %s", c.Rule, c.Base, c.New)
		}
	}
	if !named {
		t.Errorf("the drift does not name expires_in: %+v", reports.ContractDrift(cs[0], cs[1]))
	}
}

// No token and no client secret reaches the run directory: every file the
// token probe's characterisation wrote (contract, reports, the probe's
// attempts, results and recording) is searched for the secret and for a
// JWT (a token's header starts `{"alg"` or `{"typ"`, in base64).
func TestTokensNeverWritten(t *testing.T) {
	t.Parallel()
	res := tokenOnly(t, tokenSource("2s", ""))
	files := 0
	err := filepath.WalkDir(res.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, s := range []string{tokenSecret, "eyJhbGci", "eyJ0eXAi"} { // a JWT's header: {"alg" or {"typ" in base64
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 5 {
		t.Errorf("only %d files searched in %s", files, res.Dir)
	}
	for _, f := range res.Contract.Findings {
		if f.Rule == RuleTokenExpiresIn && f.Value == reports.CannotTell { // the probe sent nothing: the search proves nothing
			t.Errorf("the token probe got no token: %s", f.Because)
		}
	}
}
