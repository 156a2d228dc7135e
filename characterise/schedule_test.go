package characterise

import (
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// series builds refused calls from their waits (seconds) after t0.
func seriesOf(t0 time.Time, waits ...[]float64) *hookData {
	h := &hookData{}
	for _, w := range waits {
		s := &hookSeries{key: "k", chosen: true, at: []time.Time{t0}}
		at := t0
		for _, x := range w {
			at = at.Add(time.Duration(x * float64(time.Second)))
			s.at = append(s.at, at)
		}
		h.series = append(h.series, s)
	}
	return h
}

// The schedule is read from each wait's shortest over the calls (overheads
// only add): a noisy first wait of one call does not hide a doubling; a
// fixed schedule is fixed; a sender still retrying when the wait ended has
// no attempt count; waits that neither stay alike nor grow steadily cannot
// be told.
func TestReadSchedule(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		waits    [][]float64
		end      time.Duration // the wait's end after t0
		kind     string
		first    float64
		capS     float64
		gaveUp   bool
		attempts int
	}{
		{"doubling, capped, one noisy", [][]float64{{0.48, 0.61, 1.0, 1.09}, {0.31, 0.6, 1.01, 1.0}}, 20 * time.Second, scheduleExponential, 0.31, 1.0, true, 5},
		{"fixed", [][]float64{{0.41, 0.42, 0.4}, {0.4, 0.45, 0.41}}, 20 * time.Second, scheduleFixed, 0.4, 0, true, 4},
		{"still retrying", [][]float64{{1, 2, 4}}, 9 * time.Second, scheduleExponential, 1, 0, false, 0},
		{"no retry", [][]float64{{}, {}}, 20 * time.Second, scheduleNone, 0, 0, true, 1},
		{"irregular", [][]float64{{0.3, 0.9, 0.3}}, 20 * time.Second, "", 0.3, 0, true, 4},
	} {
		h := seriesOf(t0, c.waits...)
		h.waitEnd = t0.Add(c.end)
		sc := readSchedule(h)
		if sc.kind != c.kind || sc.firstDelay != c.first || sc.capS != c.capS || sc.gaveUp != c.gaveUp || c.gaveUp && sc.attHi != c.attempts {
			t.Errorf("%s: %q first %g cap %g gave up %v attempts %d..%d (%s %s)", c.name, sc.kind, sc.firstDelay, sc.capS, sc.gaveUp, sc.attLo, sc.attHi, sc.why, sc.stillWhy)
		}
		fs := scheduleFindings(sc)
		for _, f := range fs {
			if f.Rule == RuleHookAttempts && (f.Value == "cannot tell") == c.gaveUp {
				t.Errorf("%s: attempts %s (%s)", c.name, f.Value, f.Because)
			}
			if f.Rule == RuleHookFactor && c.kind == scheduleExponential && !within(&f, 2) {
				t.Errorf("%s: factor %s [%v, %v] does not hold 2", c.name, f.Value, *f.Low, *f.High)
			}
		}
	}
}

// The signature scheme is named only when every call was signed, none
// when none was; a mix or headers that do not parse cannot be told; the
// skew is the interval over the signed calls.
func TestSignatureFindings(t *testing.T) {
	sw := func(skew float64) *rundir.Signature {
		return &rundir.Signature{Scheme: rundir.SignatureStandardWebhooks, Skew: skew}
	}
	for _, c := range []struct {
		name       string
		sigs       []*rundir.Signature
		want, skew string
	}{
		{"all signed", []*rundir.Signature{sw(0.2), sw(1.1)}, rundir.SignatureStandardWebhooks, "0.2"},
		{"none", []*rundir.Signature{nil, nil}, "none", reports.CannotTell},
		{"mixed", []*rundir.Signature{sw(0.2), nil}, reports.CannotTell, "0.2"},
		{"malformed", []*rundir.Signature{sw(0.2), {Scheme: rundir.SignatureStandardWebhooks, Problem: "webhook-id: empty"}}, reports.CannotTell, "0.2"},
	} {
		h := &hookData{sigs: c.sigs}
		if f := signatureFinding(h); f.Value != c.want {
			t.Errorf("%s: signature %s (%s), want %s", c.name, f.Value, f.Because, c.want)
		}
		if f := skewFinding(h); f.Value != c.skew || c.name == "all signed" && (*f.Low != 0.2 || *f.High != 1.1) {
			t.Errorf("%s: skew %s, want %s", c.name, f.Value, c.skew)
		}
	}
}
