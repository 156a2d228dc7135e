package characterise

import (
	"fmt"
	"slices"
	"time"

	"github.com/msgload/msgload/internal/ratelimitfield"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// The IETF RateLimit fields' rules.
const (
	RuleIETFFields     = "rate_limit.ietf_fields"            // present, absent (on every 2xx and 429 answer, or on none)
	RuleIETFConsistent = "rate_limit.ietf_fields_consistent" // yes, no
)

// ietfCheck counts the answers that broke each of the fields' rules, with
// the first example of each.
type ietfCheck struct {
	with, without int // decisions (2xx, 429) carrying both fields, or neither
	broke         map[string]int
	first         map[string]string
}

func (c *ietfCheck) fault(rule, example string) {
	if c.broke[rule] == 0 {
		c.first[rule] = example
	}
	c.broke[rule]++
}

// ietfFindings: whether the burst probe's answers carried the fields, and
// whether what they said held — each well formed, the same policy on every
// answer, r within q, r 0 on a 429, a 429's t not outlived by an acceptance
// (the quota came back sooner than it said), and the policy against the
// limiter fitted (the reports' check of RateLimit-Policy).
func (st *state) ietfFindings() []reports.Finding {
	pd := st.data[probeBurst]
	switch {
	case pd == nil || pd.sum == nil:
		return allCannot([]string{RuleIETFFields, RuleIETFConsistent}, probeBurst, "the burst probe wrote no report")
	case pd.verdict == reports.VerdictError:
		return allCannot([]string{RuleIETFFields, RuleIETFConsistent}, probeBurst, distrusted)
	}
	c := checkIETF(pd.attempts)
	h := pd.sum.RateLimit.Headers
	if h.PolicyVerdict != "" && !h.PolicyAgrees {
		c.fault("policy against what was observed", h.PolicyVerdict)
	}
	ev := []string{fmt.Sprintf("%d answers (2xx, 429) carried RateLimit and RateLimit-Policy, %d neither, %d one of them", c.with, c.without, len(decisions(pd.attempts))-c.with-c.without)}
	switch {
	case c.with == 0 && c.without > 0:
		return []reports.Finding{found(RuleIETFFields, probeBurst, "absent", ev...), cannot(RuleIETFConsistent, probeBurst, "no answer carried the fields", ev...)}
	case c.without > 0 || c.with == 0:
		return []reports.Finding{cannot(RuleIETFFields, probeBurst, "some answers carried them and some did not", ev...), c.finding(ev)}
	}
	return []reports.Finding{found(RuleIETFFields, probeBurst, "present", ev...), c.finding(ev)}
}

// finding is the consistency finding: no when any rule was broken.
func (c *ietfCheck) finding(ev []string) reports.Finding {
	rules := make([]string, 0, len(c.broke))
	for r := range c.broke {
		rules = append(rules, r)
	}
	slices.Sort(rules)
	for _, r := range rules {
		ev = append(ev, fmt.Sprintf("%s: broken by %d answers, first %s", r, c.broke[r], c.first[r]))
	}
	if len(rules) > 0 {
		return found(RuleIETFConsistent, probeBurst, no, ev...)
	}
	return found(RuleIETFConsistent, probeBurst, yes, ev...)
}

// decisions are the answers that were the limiter's: 2xx and 429, in send order.
func decisions(as []rundir.Attempt) []rundir.Attempt {
	var ds []rundir.Attempt
	for _, a := range as {
		if a.Code == 429 || a.Code >= 200 && a.Code < 300 {
			ds = append(ds, a)
		}
	}
	slices.SortStableFunc(ds, func(x, y rundir.Attempt) int { return x.Sent.Compare(y.Sent) })
	return ds
}

// checkIETF checks the fields of every decision of one client.
func checkIETF(as []rundir.Attempt) *ietfCheck {
	c := &ietfCheck{broke: map[string]int{}, first: map[string]string{}}
	ds := decisions(as)
	var policy string
	for i, a := range ds {
		switch {
		case a.RateLimit == "" && a.RateLimitPolicy == "":
			c.without++
			continue
		case a.RateLimit == "" || a.RateLimitPolicy == "":
			c.fault("both fields on an answer", fmt.Sprintf("seq %d: RateLimit %q, RateLimit-Policy %q", a.Seq, a.RateLimit, a.RateLimitPolicy))
			continue
		}
		c.with++
		ps, perr := ratelimitfield.ParsePolicy(a.RateLimitPolicy)
		ls, lerr := ratelimitfield.ParseLimit(a.RateLimit)
		if err := cmpErr(perr, lerr); err != nil {
			c.fault("well formed", fmt.Sprintf("seq %d: %v", a.Seq, err))
			continue
		}
		if policy == "" {
			policy = a.RateLimitPolicy
		} else if a.RateLimitPolicy != policy {
			c.fault("the same policy on every answer", fmt.Sprintf("seq %d: %q after %q", a.Seq, a.RateLimitPolicy, policy))
		}
		c.limits(a, ps, ls, ds[i+1:])
	}
	return c
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// limits checks one answer's RateLimit items against its policies and the
// answers after it.
func (c *ietfCheck) limits(a rundir.Attempt, ps []ratelimitfield.Policy, ls []ratelimitfield.Limit, later []rundir.Attempt) {
	for _, l := range ls {
		i := slices.IndexFunc(ps, func(p ratelimitfield.Policy) bool { return p.Name == l.Name })
		switch {
		case i < 0:
			c.fault("RateLimit names a policy of RateLimit-Policy", fmt.Sprintf("seq %d: %q", a.Seq, l.Name))
		case l.R > ps[i].Q:
			c.fault("r within q", fmt.Sprintf("seq %d: r=%d, q=%d", a.Seq, l.R, ps[i].Q))
		}
		if a.Code == 429 && l.R > 0 {
			c.fault("r 0 on a 429", fmt.Sprintf("seq %d: r=%d", a.Seq, l.R))
		}
		if a.Code == 429 && l.T > 1 {
			// t is whole seconds: the quota comes back no sooner than t−1 s after the decision
			back := a.Sent.Add(time.Duration(l.T-1) * time.Second)
			for _, b := range later {
				if end := b.Sent.Add(time.Duration(b.Latency * float64(time.Second))); b.Code != 429 && b.Sent.After(a.Sent.Add(latencyOf(a))) && end.Before(back) {
					c.fault("no acceptance before a 429's t", fmt.Sprintf("seq %d (t=%d) then seq %d accepted %s later", a.Seq, l.T, b.Seq, b.Sent.Sub(a.Sent).Round(time.Millisecond)))
					break
				}
			}
		}
	}
}

func latencyOf(a rundir.Attempt) time.Duration {
	return time.Duration(a.Latency * float64(time.Second))
}
