package attack

import (
	"fmt"
	"math"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Constant returns a pacer that sends at rate for as long as the attack lasts.
func Constant(rate vegeta.Rate) vegeta.Pacer { return vegeta.ConstantPacer(rate) }

var _ vegeta.Pacer = vegeta.ConstantPacer{}

// Ramp is a linear ramp from From to To over Over, then To for the rest of the
// attack. Rates are hits per second.
type Ramp struct {
	From, To float64       // hits per second at the start and at the end of the ramp
	Over     time.Duration // length of the ramp; 0 means To at once
}

var _ vegeta.Pacer = Ramp{}

// NewRamp returns a linear ramp from one rate to another over d.
func NewRamp(from, to vegeta.Rate, d time.Duration) Ramp {
	return Ramp{From: perSecond(from), To: perSecond(to), Over: d}
}

func (r Ramp) String() string {
	return fmt.Sprintf("Ramp{%g/s → %g/s over %s}", r.From, r.To, r.Over)
}

// at returns the time (seconds) at which the n-th hit is due: the inverse of hits.
func (r Ramp) at(n float64) float64 {
	d := r.Over.Seconds()
	if d > 0 {
		if end := (r.From + r.To) * d / 2; n <= end {
			a := (r.To - r.From) / (2 * d)
			if a == 0 {
				return n / r.From
			}
			// a t² + From t - n = 0, the non-negative root, in a stable form.
			disc := r.From*r.From + 4*a*n
			if disc < 0 {
				return math.Inf(1) // a falling ramp that reaches zero before n hits
			}
			return 2 * n / (r.From + math.Sqrt(disc))
		} else {
			if r.To <= 0 {
				return math.Inf(1)
			}
			return d + (n-end)/r.To
		}
	}
	if r.To <= 0 {
		return math.Inf(1)
	}
	return n / r.To
}

// Pace implements vegeta.Pacer.
func (r Ramp) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if r.From < 0 || r.To < 0 || r.Over < 0 || (r.From == 0 && r.To == 0) || math.IsNaN(r.From+r.To) {
		return 0, true
	}
	return paceAt(r.at(float64(hits+1)), elapsed)
}

// Rate implements vegeta.Pacer: hits per second at elapsed.
func (r Ramp) Rate(elapsed time.Duration) float64 {
	t, d := elapsed.Seconds(), r.Over.Seconds()
	if t >= d {
		return r.To
	}
	return r.From + (r.To-r.From)*t/d
}

// Step is one stage of a Steps profile.
type Step struct {
	Rate vegeta.Rate   // the rate of the stage
	For  time.Duration // how long the stage lasts
}

// Steps sends each step's rate for its duration in turn; the last rate holds
// for the rest of the attack (bound the attack with a duration or a count).
type Steps []Step

var _ vegeta.Pacer = Steps{}

func (s Steps) String() string {
	out := "Steps{"
	for i, st := range s {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%g/s for %s", perSecond(st.Rate), st.For)
	}
	return out + "}"
}

func (s Steps) valid() bool {
	if len(s) == 0 {
		return false
	}
	for _, st := range s {
		// A pause (rate 0) may leave Per unset; a rate above 0 needs it.
		if st.For < 0 || st.Rate.Freq < 0 || (st.Rate.Per <= 0 && st.Rate.Freq != 0) {
			return false
		}
	}
	return true
}

// at returns the time in seconds at which hit n is due.
func (s Steps) at(n float64) float64 {
	var t, done float64
	for i, st := range s {
		r := perSecond(st.Rate)
		d := st.For.Seconds()
		if i == len(s)-1 {
			d = math.Inf(1)
		}
		if r > 0 && done+r*d >= n {
			return t + (n-done)/r
		}
		done += r * d
		t += d
	}
	return math.Inf(1)
}

// Pace implements vegeta.Pacer.
func (s Steps) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if !s.valid() {
		return 0, true
	}
	return paceAt(s.at(float64(hits+1)), elapsed)
}

// Rate implements vegeta.Pacer: hits per second at elapsed.
func (s Steps) Rate(elapsed time.Duration) float64 {
	for i, st := range s {
		if elapsed < st.For || i == len(s)-1 {
			return perSecond(st.Rate)
		}
		elapsed -= st.For
	}
	return 0
}

// Sine returns vegeta's sine pacer: mean ± amp over period, starting at the
// mean and going up.
func Sine(mean, amp vegeta.Rate, period time.Duration) vegeta.Pacer {
	return vegeta.SinePacer{Period: period, Mean: mean, Amp: amp, StartAt: vegeta.MeanUp}
}

var _ vegeta.Pacer = vegeta.SinePacer{}

func perSecond(r vegeta.Rate) float64 {
	if r.Per <= 0 {
		return 0
	}
	return float64(r.Freq) / r.Per.Seconds()
}

// paceAt turns the due time of the next hit (seconds from the start) into
// vegeta's answer: how long to wait, and whether to stop because it never comes.
func paceAt(due float64, elapsed time.Duration) (time.Duration, bool) {
	if math.IsInf(due, 1) || math.IsNaN(due) || due > float64(math.MaxInt64)/1e9 {
		return 0, true
	}
	wait := time.Duration(math.Round(due*1e9)) - elapsed
	if wait < 0 {
		return 0, false // running behind: send at once
	}
	return wait, false
}
