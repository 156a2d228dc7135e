package scenarios

import (
	"fmt"
	"net/url"
	"slices"

	"github.com/goccy/go-yaml"
)

// redaction replaces every secret in Redacted output.
const redaction = "[REDACTED]"

// Redacted returns the resolved scenario (defaults applied, ${VAR} expanded) as
// YAML with every secret replaced by "[REDACTED]": passwords, client secrets and
// passwords inside URLs. It is what the run directory keeps as scenario.yaml.
func (s *Scenario) Redacted() ([]byte, error) {
	c := s.redactedCopy()
	b, err := yaml.MarshalWithOptions(c, yaml.UseLiteralStyleIfMultiline(true))
	if err != nil {
		return nil, fmt.Errorf("encode scenario %q: %w", s.Name, err)
	}
	return b, nil
}

func (s *Scenario) redactedCopy() *Scenario {
	c := *s
	c.Creds = nil
	c.pos = nil
	if c.Auth.Password != "" {
		c.Auth.Password = redaction
	}
	if c.Auth.ClientSecret != "" {
		c.Auth.ClientSecret = redaction
	}
	if c.Clients.List != nil {
		c.Clients.List = slices.Clone(c.Clients.List)
		for i := range c.Clients.List {
			if c.Clients.List[i].Secret != "" {
				c.Clients.List[i].Secret = redaction
			}
			if c.Clients.List[i].Password != "" {
				c.Clients.List[i].Password = redaction
			}
		}
	}
	c.Target.BaseURL = redactURL(c.Target.BaseURL)
	c.Target.TokenURL = redactURL(c.Target.TokenURL)
	c.Target.Metrics = redactURL(c.Target.Metrics)
	c.Sink = redactURL(c.Sink)
	c.Message.Callback = redactURL(c.Message.Callback)
	if c.Parts != nil {
		c.Parts = slices.Clone(c.Parts)
		for i := range c.Parts {
			c.Parts[i] = *c.Parts[i].redactedCopy()
		}
	}
	return &c
}

// redactURL hides a password in a URL's user info and every query value (a
// token may travel there).
func redactURL(raw string) string {
	if raw == "" || raw == "embedded" {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	changed := false
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), redaction)
			changed = true
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{redaction}
		}
		u.RawQuery = q.Encode()
		changed = true
	}
	if !changed {
		return raw
	}
	return u.String()
}

// Scale multiplies every duration of the scenario by f (0 < f ≤ 1 shortens it):
// load durations and periods, the windows of every rate (so counts per window
// stay the same and the plan keeps its shape), the limit, the simulator's
// delays and windows, retry waits, the grace period and the token lifetime.
// Tests use it to run the long built-in scenarios in seconds; a soak of 10m at
// 0.01 runs in 6s with the same number of requests per window.
func (s *Scenario) Scale(f float64) {
	if f <= 0 {
		return
	}
	r := func(x *Rate) { *x = x.Scaled(f) }
	d := func(x *Duration) { *x = x.Scaled(f) }
	for i := range s.Parts {
		s.Parts[i].Scale(f)
	}
	l := &s.Load
	r(&l.Rate)
	r(&l.From)
	r(&l.To)
	r(&l.Amplitude)
	d(&l.Period)
	d(&l.Duration)
	for i := range l.Steps {
		r(&l.Steps[i].Rate)
		d(&l.Steps[i].Duration)
	}
	if l.Profile == "replay" && l.Speed > 0 {
		l.Speed /= f
	}
	r(&s.Limit.Rate)
	d(&s.Retry.Backoff)
	d(&s.Retry.MaxBackoff)
	d(&s.Delivery.Grace)
	d(&s.Delivery.PollInterval)
	sm := &s.Sim
	r(&sm.RateLimit.Rate)
	d(&sm.Faults.Latency)
	d(&sm.Callbacks.Delay)
	d(&sm.Callbacks.Backoff)
	d(&sm.Callbacks.BackoffMax)
	d(&sm.NotifyDelay.Median)
	d(&sm.NotifyDelay.P95)
	d(&sm.TokenLifetime)
	d(&sm.TokenExpiresIn)
	d(&sm.Idempotency.Window)
	d(&sm.Idempotency.Processing)
	for k, p := range sm.Profiles {
		d(&p.Median)
		d(&p.P95)
		sm.Profiles[k] = p
	}
	for i := range s.Message.Scenario {
		if fo := s.Message.Scenario[i].Failover; fo != nil && fo.TTL > 0 {
			c := *fo
			c.TTL = max(1, int(float64(c.TTL)*f+0.5))
			s.Message.Scenario[i].Failover = &c
		}
	}
}
