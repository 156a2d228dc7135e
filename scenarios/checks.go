package scenarios

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/msgload/msgload/attack/message/msgspec"
	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

func reflectValue(s *Scenario) reflect.Value { return reflect.ValueOf(s).Elem() }

// memoryMetricPattern is a Prometheus metric name (target.memoryMetric).
const memoryMetricPattern = `^[a-zA-Z_:][a-zA-Z0-9_:]*$`

var memoryMetricRe = regexp.MustCompile(memoryMetricPattern)

func loadIsZero(l LoadSpec) bool {
	return reflect.ValueOf(l).IsZero()
}

// scenario completes s (a part at p) and checks it: the defaults first, then
// the values derived from other fields (both in defaults.go), then every
// check. Only the first two set fields; the checks only report.
func (c *checker) scenario(s *Scenario, p string) {
	if len(s.Parts) > 0 {
		if p == "" {
			c.deriveParts(s)
		}
		c.parts(s, p)
		return
	}
	if !c.api(s, p) {
		return // the defaults and most checks depend on the api
	}
	c.applyDefaults(s, p)
	derive(s)
	c.check(s, p)
}

// check runs every check of a completed scenario without parts (a part at p).
func (c *checker) check(s *Scenario, p string) {
	notify := s.API == rundir.APINotify
	c.target(s, p, notify)
	c.clients(s, p, notify)
	c.load(s, p)
	c.limit(s, p)
	c.message(s, p, notify)
	c.retry(s, p)
	c.idempotency(s, p, notify)
	c.delivery(s, p, notify)
	c.sim(s, p)
	c.thresholds(s, p)
	if s.MaxMessages < 0 {
		c.errorf(joinPath(p, "maxMessages"), "must not be negative")
	}
	c.respect(s, p)
	c.externalIDs(s, p)
}

// parts checks a file with parts (derive filled them) and each part as a
// scenario of its own.
func (c *checker) parts(s *Scenario, p string) {
	if p != "" {
		c.errorf(joinPath(p, "parts"), "parts cannot be nested")
		return
	}
	if s.API != "" || !loadIsZero(s.Load) || len(s.Thresholds) > 0 || s.Message.Text != "" || len(s.Message.Scenario) > 0 {
		c.errorf("parts", "a file with parts holds only name, description, target, confirm, sink, sim, maxMessages and parts; move api, load, message and thresholds into the parts")
	}
	names := map[string]bool{}
	for i := range s.Parts {
		part := &s.Parts[i]
		pp := fmt.Sprintf("parts[%d]", i)
		if names[part.Name] {
			c.errorf(pp+".name", "two parts are named %q", part.Name)
		}
		names[part.Name] = true
		c.scenario(part, pp)
	}
}

func (c *checker) api(s *Scenario, p string) bool {
	if s.API == "" {
		c.errorf(joinPath(p, "api"), "required: messaging or notify")
		return false
	}
	return c.oneOf(joinPath(p, "api"), s.API, apis)
}

func (c *checker) target(s *Scenario, p string, notify bool) {
	at := func(f string) string { return joinPath(p, f) }
	if !s.Target.Embedded {
		c.url(at("target.baseUrl"), s.Target.BaseURL, true)
		if notify {
			c.url(at("target.tokenUrl"), s.Target.TokenURL, true)
		} else if s.Target.TokenURL != "" {
			c.errorf(at("target.tokenUrl"), "only the notify API has a token endpoint")
		}
		c.url(at("target.metrics"), s.Target.Metrics, false)
		switch m := s.Target.MemoryMetric; {
		case m != "" && s.Target.Metrics == "":
			c.errorf(at("target.memoryMetric"), "needs target.metrics, the endpoint to read it at")
		case m != "" && !memoryMetricRe.MatchString(m):
			c.errorf(at("target.memoryMetric"), "%q is not a Prometheus metric name (letters, digits, _ and :, not starting with a digit)", m)
		}
	}
	for _, h := range s.Confirm {
		if strings.Contains(h, "/") || strings.ContainsAny(h, " \t@") {
			c.errorf(at("confirm"), "want a host name such as api.example.com (no scheme, path or user), got %q", h)
		}
	}
	if s.Sink != "embedded" {
		c.url(at("sink"), s.Sink, true)
	}
}

func (c *checker) url(p, raw string, required bool) {
	if raw == "" {
		if required {
			c.errorf(p, "required: an http or https URL")
		}
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.errorf(p, "%q is not an http or https URL", redactURL(raw))
	}
}

func (c *checker) clients(s *Scenario, p string, notify bool) {
	at := func(f string) string { return joinPath(p, f) }
	id, secret, idField, secretField := auth(s)
	// the other API's fields are a mistake worth naming
	if notify && (s.Auth.Login != "" || s.Auth.Password != "") {
		c.errorf(at("auth"), "login and password belong to the messaging API; notify uses clientId and clientSecret")
	}
	if !notify && (s.Auth.ClientID != "" || s.Auth.ClientSecret != "") {
		c.errorf(at("auth"), "clientId and clientSecret belong to the notify API; messaging uses login and password")
	}
	if s.Clients.N < 1 || s.Clients.N > 10000 {
		c.errorf(at("clients"), "must be from 1 to 10000")
		return
	}
	if s.Clients.List != nil {
		seen := map[string]bool{}
		for i, cr := range s.Clients.List {
			cp := fmt.Sprintf("%s[%d]", at("clients"), i)
			if cr.Login != "" || cr.Password != "" {
				if notify {
					c.errorf(cp, "login and password belong to the messaging API; notify uses clientId and clientSecret")
				}
				if cr.ID != "" && cr.Login != "" || cr.Secret != "" && cr.Password != "" {
					c.errorf(cp, "set login or clientId, password or clientSecret, not both")
				}
			}
			var resolved Cred
			if i < len(s.Creds) {
				resolved = s.Creds[i]
			}
			if resolved.ID == "" {
				c.errorf(cp+".clientId", "required")
			}
			if seen[resolved.ID] {
				c.errorf(cp+".clientId", "client %q is listed twice", resolved.ID)
			}
			seen[resolved.ID] = true
			if resolved.Secret == "" {
				c.errorf(cp+".clientSecret", "required (or set %s for all clients); take it from the environment: ${VAR}", secretField)
			}
		}
		return
	}
	if !s.Target.Embedded {
		if id == "" {
			c.errorf(at(idField), "required for a real target")
		}
		if secret == "" {
			c.errorf(at(secretField), "required for a real target; take it from the environment: ${VAR}")
		}
	}
}

func (c *checker) positive(p string, d Duration, required bool) {
	if d.IsZero() {
		if required {
			c.errorf(p, "required: a duration such as 30s or 2m")
		}
		return
	}
	if d.D <= 0 {
		c.errorf(p, "must be above 0")
	}
}

func (c *checker) rate(p string, r Rate, required bool) {
	if r.IsZero() {
		if required {
			c.errorf(p, "required: a rate such as 150/1m or 20/s")
		}
		return
	}
	if r.PerSecond() > 1e6 {
		c.errorf(p, "%s is above 1000000/s", r)
	}
}

func (c *checker) load(s *Scenario, p string) {
	at := func(f string) string { return joinPath(p, "load."+f) }
	l := &s.Load
	if !c.oneOf(at("profile"), l.Profile, profiles) {
		return
	}
	if l.Requests < 0 {
		c.errorf(at("requests"), "must not be negative")
	}
	if l.MaxInFlight < rundir.NoInFlightCap {
		c.errorf(at("maxInFlight"), "must be a count, 0 for the default or -1 for no cap")
	}
	forbid := func(f string, set bool) {
		if set {
			c.errorf(at(f), "not used by profile %s", l.Profile)
		}
	}
	switch l.Profile {
	case "constant":
		c.rate(at("rate"), l.Rate, true)
		if !l.Rate.IsZero() && l.Rate.Count <= 0 {
			c.errorf(at("rate"), "must be above 0")
		}
		switch {
		case l.Requests > 0 || c.bad[at("duration")] || c.bad[at("requests")]:
			// a count, or a value that is written but bad and has its own error
		case l.Duration.IsZero():
			c.errorf(joinPath(p, "load"), "set duration or requests (a total count)")
		case l.Duration.D <= 0:
			c.errorf(at("duration"), "must be above 0 (or set requests, a total count)")
		}
		forbid("from", !l.From.IsZero())
		forbid("to", !l.To.IsZero())
		forbid("steps", l.Steps != nil)
		forbid("amplitude", !l.Amplitude.IsZero())
	case "ramp":
		c.rate(at("from"), l.From, true)
		c.rate(at("to"), l.To, true)
		c.positive(at("duration"), l.Duration, true)
		forbid("rate", !l.Rate.IsZero())
		forbid("steps", l.Steps != nil)
	case "steps":
		if len(l.Steps) == 0 {
			c.errorf(at("steps"), "required: a list of { rate, duration }")
		}
		for i, st := range l.Steps {
			sp := fmt.Sprintf("%s[%d]", at("steps"), i)
			c.rate(sp+".rate", st.Rate, true)
			c.positive(sp+".duration", st.Duration, true)
		}
		forbid("rate", !l.Rate.IsZero())
		forbid("duration", !l.Duration.IsZero())
	case "sine":
		c.rate(at("rate"), l.Rate, true)
		c.rate(at("amplitude"), l.Amplitude, true)
		c.positive(at("period"), l.Period, true)
		c.positive(at("duration"), l.Duration, true)
		if !l.Rate.IsZero() && !l.Amplitude.IsZero() && l.Amplitude.PerSecond() > l.Rate.PerSecond() {
			c.errorf(at("amplitude"), "%s is above the mean rate %s: the rate would go below zero", l.Amplitude, l.Rate)
		}
	case "replay":
		if l.File == "" {
			c.errorf(at("file"), "required: the recording to replay")
		} else {
			c.checkFile(at("file"), l.File)
		}
		if l.Speed < 0 || l.Speed > 1000 {
			c.errorf(at("speed"), "must be above 0 and at most 1000")
		}
		c.oneOf(at("format"), l.Format, replayFormats)
		c.oneOf(at("externalIds"), l.ExternalIDs, replayExternalIDs)
	}
	if l.Profile != "replay" {
		forbid("file", l.File != "")
		forbid("speed", l.Speed != 0)
		forbid("format", l.Format != "")
		forbid("clientHeader", l.ClientHeader != "")
		forbid("externalIds", l.ExternalIDs != "")
	}
	if l.Profile != "sine" {
		forbid("period", !l.Period.IsZero())
	}
}

// file checks that a file named in the scenario exists (relative to the scenario).
func (c *checker) checkFile(p, name string) {
	if c.dir == "" && !filepath.IsAbs(name) {
		if c.file == "" || strings.HasPrefix(c.file, "scenarios/") {
			c.errorf(p, "a built-in scenario cannot name a file")
			return
		}
	}
	full := name
	if !filepath.IsAbs(name) && c.dir != "" {
		full = filepath.Join(c.dir, name)
	}
	if _, err := os.Stat(full); err != nil {
		c.errorf(p, "cannot read %q: %v", name, err)
	}
}

// ResolvePath returns a path named in the scenario (CSV recipients, a replay
// file) relative to the scenario file's directory.
func (s *Scenario) ResolvePath(name string) string {
	if filepath.IsAbs(name) || s.dir == "" {
		return name
	}
	return filepath.Join(s.dir, name)
}

func (c *checker) template(p, text string) {
	if _, err := msgspec.ParseTemplate(text); err != nil {
		c.errorf(p, "%v", err)
	}
}

// message checks what every request carries, then the half of the message
// that belongs to the scenario's API.
func (c *checker) message(s *Scenario, p string, notify bool) {
	at := func(f string) string { return joinPath(p, "message."+f) }
	m := &s.Message
	if m.Recipient != "" && m.Recipients != nil {
		c.errorf(at("recipients"), "set recipient (a pattern) or recipients (a range or CSV), not both")
	}
	if m.Recipient != "" {
		if _, err := msgspec.ParseRecipient(m.Recipient); err != nil {
			c.errorf(at("recipient"), "%v", err)
		}
	}
	if r := m.Recipients; r != nil {
		rangeSet := r.From != "" || r.To != ""
		switch {
		case rangeSet && r.CSV != "":
			c.errorf(at("recipients"), "set from/to or csv, not both")
		case rangeSet:
			if _, err := msgspec.ParseNumberRange(r.From, r.To); err != nil {
				c.errorf(at("recipients"), "%v", err)
			}
		case r.CSV != "":
			c.checkFile(at("recipients.csv"), r.CSV)
		default:
			c.errorf(at("recipients"), "set from and to (a range) or csv (a file)")
		}
		if r.Column != "" && r.CSV == "" {
			c.errorf(at("recipients.column"), "only used with csv")
		}
		c.oneOf(at("recipients.order"), r.Order, []string{"sequential", "random"})
	}
	c.template(at("text"), m.Text)
	c.oneOf(at("fill"), m.Fill, fills)
	if m.TextBytes < 0 || m.TextBytes > rundir.MaxTextBytes {
		c.errorf(at("textBytes"), "must be from 0 to %d (the longest text the messaging API takes)", rundir.MaxTextBytes)
	}
	if m.TextParts < 0 || m.TextParts > rundir.MaxTextParts {
		c.errorf(at("textParts"), "must be from 0 to %d", rundir.MaxTextParts)
	}
	if m.TextBytes > 0 && m.TextParts > 0 {
		c.errorf(at("textParts"), "set textBytes or textParts, not both")
	}
	if notify {
		c.notifyMessage(m, at)
	} else {
		c.messagingMessage(m, at)
	}
}

// notifyMessage checks the notify half of a message: the externalId, and no
// field of the messaging API.
func (c *checker) notifyMessage(m *Message, at func(string) string) {
	if m.ExternalID != "tagged" && m.ExternalID != "none" {
		if t, err := msgspec.ParseTemplate(m.ExternalID); err != nil {
			c.errorf(at("externalId"), "%v", err)
		} else if t.Static() {
			c.errorf(at("externalId"), "%q is the same for every message: write tagged, none, or a template such as order-{{.Seq}}", m.ExternalID)
		}
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"scenario", m.Scenario != nil}, {"callback", m.Callback != ""}, {"schedule", m.Schedule != nil},
		{"urlOptions", m.URLOptions != nil}, {"trackData", m.TrackData != nil}, {"clientRequestId", m.ClientRequestID != ""}} {
		if f.set {
			c.errorf(at(f.name), "a messaging field; the notify API does not take it")
		}
	}
}

// messagingMessage checks the messaging half of a message: the channels of
// the scenario with their failover (the seed's rules), the callback, the
// schedule, trackData and clientRequestId.
func (c *checker) messagingMessage(m *Message, at func(string) string) {
	if m.ExternalID != "" {
		c.errorf(at("externalId"), "a notify field; messaging correlates through trackData")
	}
	seen := map[string]bool{}
	for i := range m.Scenario {
		it := &m.Scenario[i]
		ip := fmt.Sprintf("%s[%d]", at("scenario"), i)
		if it.Channel == "" {
			c.errorf(ip+".channel", "required: one of %s", strings.Join(channels, ", "))
		} else if c.oneOf(ip+".channel", it.Channel, channels) {
			if seen[it.Channel] {
				c.errorf(ip+".channel", "channel %s is used twice; the channels of one request must be unique", it.Channel)
			}
			seen[it.Channel] = true
		}
		maxSender := rundir.MaxSenderFor(it.Channel)
		if n := utf8.RuneCountInString(it.Sender); n > maxSender {
			c.errorf(ip+".sender", "%q has %d characters; at most %d for %s", it.Sender, n, maxSender, it.Channel)
		}
		if it.Text != "" {
			c.template(ip+".text", it.Text)
		}
		if f := it.Failover; f != nil {
			if f.TTL < 0 || f.TTL > rundir.MaxFailoverTTL {
				c.errorf(ip+".failover.ttl", "must be from 0 to %d seconds", rundir.MaxFailoverTTL)
			}
			if f.ConditionStatus != "" {
				c.oneOf(ip+".failover.condition_status", f.ConditionStatus, rundir.ConditionStatuses())
			}
			if i == len(m.Scenario)-1 {
				c.errorf(ip+".failover", "the last item has no next channel to fail over to")
			}
		}
		for j, a := range it.Attachments {
			c.oneOf(fmt.Sprintf("%s.attachments[%d].type", ip, j), a.Type, mediaTypes)
			c.url(fmt.Sprintf("%s.attachments[%d].url", ip, j), a.URL, true)
		}
		for j, b := range it.Buttons {
			if b.Caption == "" {
				c.errorf(fmt.Sprintf("%s.buttons[%d].caption", ip, j), "required")
			}
			c.url(fmt.Sprintf("%s.buttons[%d].action", ip, j), b.Action, true)
		}
		if it.Channel != rundir.ChannelPush && (it.MobilePushAction != "" || it.MobilePushTitle != "") {
			c.errorf(ip, "mobilePushAction and mobilePushTitle are used only for channel push")
		}
	}
	if m.Callback != "" {
		c.url(at("callback"), m.Callback, false)
	}
	if sc := m.Schedule; sc != nil {
		c.schedule(at("schedule"), sc)
	}
	for k := range m.TrackData {
		if strings.HasPrefix(k, "msgload_") {
			c.errorf(at("trackData."+k), "keys starting with msgload_ are msgload's correlation keys")
		}
	}
	if m.ClientRequestID != "" {
		c.template(at("clientRequestId"), m.ClientRequestID)
	}
}

func (c *checker) limit(s *Scenario, p string) {
	c.oneOf(joinPath(p, "limit.mode"), s.Limit.Mode, modes)
	if !s.Limit.Rate.IsZero() && s.Limit.Rate.Count < 1 {
		c.errorf(joinPath(p, "limit.rate"), "a limit must allow at least 1 request per window")
	}
}

func (c *checker) idempotency(s *Scenario, p string, notify bool) {
	at := func(f string) string { return joinPath(p, f) }
	if s.Idempotency.Probes.IsZero() && s.Idempotency.Concurrent <= 0 && s.Idempotency.InFlight <= 0 && !s.Idempotency.ChangedBody {
		return // no probes: nothing here is used
	}
	if !notify {
		c.errorf(at("idempotency"), "idempotency probes need the notify API (externalId)")
	}
	if s.Idempotency.Concurrent < 0 || s.Idempotency.Concurrent > 100 {
		c.errorf(at("idempotency.concurrent"), "must be from 0 to 100")
	}
	if s.Idempotency.InFlight < 0 || s.Idempotency.InFlight > 100 {
		c.errorf(at("idempotency.inFlight"), "must be from 0 to 100")
	}
}

func (c *checker) delivery(s *Scenario, p string, notify bool) {
	at := func(f string) string { return joinPath(p, "delivery."+f) }
	if c.oneOf(at("via"), s.Delivery.Via, deliveryVia) && s.Delivery.Via == "poll" && notify {
		c.errorf(at("via"), "poll needs the messaging API (check-status); notify reports by webhook only")
	}
	if !s.Delivery.PollInterval.IsZero() && s.Delivery.PollInterval.D <= 0 {
		c.errorf(at("pollInterval"), "must be above 0")
	}
}

// thresholds checks each expression where it is written, so a mistyped
// threshold stops the run before it starts.
func (c *checker) thresholds(s *Scenario, p string) {
	sc := s.thresholdScope()
	for i, t := range s.Thresholds {
		at := fmt.Sprintf("%s[%d]", joinPath(p, "thresholds"), i)
		expr := at
		if _, mapping := c.pos[at+".expr"]; mapping {
			expr = at + ".expr" // the mapping form: point at its expression
		}
		switch {
		case strings.TrimSpace(t.Expr) == "":
			c.errorf(expr, "empty threshold expression")
		case !t.AbortOnFail && !t.DelayAbortEval.IsZero():
			c.errorf(at+".delayAbortEval", "delayAbortEval delays the live judgement of abortOnFail: set abortOnFail: true, or drop it")
		case t.AbortOnFail:
			if err := summary.CheckLiveThreshold(t.Expr, sc); err != nil {
				c.errorf(expr, "threshold %q: %s", t.Expr, oneLine(err.Error()))
			}
		default:
			if err := summary.CheckThresholdFor(t.Expr, sc); err != nil {
				c.errorf(expr, "threshold %q: %s", t.Expr, oneLine(err.Error()))
			}
		}
	}
}

// thresholdScope is what every run of s can measure (its defaults set): a
// threshold on a figure none of them can is refused before the run.
func (s *Scenario) thresholdScope() summary.Scope {
	id := s.Idempotency
	probes := !id.Probes.IsZero() || id.Concurrent > 0 || id.InFlight > 0 || id.ChangedBody
	return summary.Scope{
		Via:      s.Delivery.Via,
		NoLimit:  s.Limit.Rate.IsZero(),
		NoResend: !probes && s.Retry.Max == 0 && s.Load.Profile != "replay",
	}
}

// oneLine keeps the first line of a multi-line message (expr points at the
// column with a second and third line).
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (c *checker) schedule(p string, sc *schedule) {
	if sc.SendAfter == "" && sc.StartTime == "" {
		c.errorf(p, "set sendAfter, or startTime and stopTime")
	}
	if sc.SendAfter != "" {
		if _, err := time.Parse(time.RFC3339, sc.SendAfter); err != nil {
			c.errorf(p+".sendAfter", "%q is not an RFC 3339 time (2026-01-02T15:04:05Z)", sc.SendAfter)
		}
	}
	if (sc.StartTime == "") != (sc.StopTime == "") {
		c.errorf(p, "startTime and stopTime go together")
	}
	for _, f := range []struct{ name, v string }{{"startTime", sc.StartTime}, {"stopTime", sc.StopTime}} {
		if f.v != "" {
			if _, err := time.Parse("15:04:05", f.v); err != nil {
				c.errorf(p+"."+f.name, "%q is not HH:MM:SS", f.v)
			}
		}
	}
}

// RetryOn is one entry of retry.on: an HTTP code, or a class of failure.
func retryOnValid(v string) bool {
	switch v {
	case "timeout", "reset":
		return true
	}
	n, err := strconv.Atoi(v)
	return err == nil && n >= 400 && n <= 599
}

func (c *checker) retry(s *Scenario, p string) {
	at := func(f string) string { return joinPath(p, "retry."+f) }
	r := &s.Retry
	for i, v := range r.On {
		if !retryOnValid(v) {
			c.errorf(fmt.Sprintf("%s[%d]", at("on"), i), "%q is not an HTTP code from 400 to 599, timeout or reset", v)
		}
	}
	if r.Max < 0 || r.Max > 100 {
		c.errorf(at("max"), "must be from 0 to 100")
	}
	if r.MaxBackoff.D < r.Backoff.D {
		c.errorf(at("maxBackoff"), "%s is below backoff %s", r.MaxBackoff, r.Backoff)
	}
	if !r.Timeout.IsZero() && r.Timeout.D <= 0 {
		c.errorf(at("timeout"), "must be above 0")
	}
}

// simKnobs checks sim.tokenExpiresIn (notify, above 0) and
// sim.messagingDedup (messaging, a known answer).
func (c *checker) simKnobs(s *Scenario, at func(string) string) {
	sm := &s.Sim
	if !sm.TokenExpiresIn.IsZero() && (s.API != rundir.APINotify || sm.TokenExpiresIn.D <= 0) {
		c.errorf(at("tokenExpiresIn"), "notify only, above 0")
	}
	if sm.MessagingDedup != "" {
		if s.API != rundir.APIMessaging {
			c.errorf(at("messagingDedup"), "the messaging API only (notify keeps an externalId: sim.idempotency)")
		}
		c.oneOf(at("messagingDedup"), sm.MessagingDedup, []string{"first", "409"})
	}
}

// simIdempotency checks sim.idempotency: notify only, known answers, a
// processing time shorter than the window.
func (c *checker) simIdempotency(s *Scenario, id SimIdempotency, at func(string) string) {
	if s.API != rundir.APINotify {
		c.errorf(at("idempotency"), "the messaging API has no idempotency key: sim.idempotency is for notify")
	}
	if id.ChangedBody != "" {
		c.oneOf(at("idempotency.changedBody"), id.ChangedBody, []string{"first", "422", "409"})
	}
	if id.InFlight != "" {
		c.oneOf(at("idempotency.inFlight"), id.InFlight, []string{"first", "409"})
	}
	if id.Window.D < 0 || !id.Window.IsZero() && id.Window.D == 0 {
		c.errorf(at("idempotency.window"), "must be above 0")
	}
	if id.Processing.D < 0 || id.Window.D > 0 && id.Processing.D >= id.Window.D {
		c.errorf(at("idempotency.processing"), "from 0 to under the window")
	}
}

func (c *checker) sim(s *Scenario, p string) {
	at := func(f string) string { return joinPath(p, "sim."+f) }
	sm := &s.Sim
	if !s.Target.Embedded {
		if !reflect.ValueOf(*sm).IsZero() {
			c.errorf(joinPath(p, "sim"), "simulator settings are used only with target: embedded")
		}
		return
	}
	c.oneOf(at("rateLimit.algorithm"), sm.RateLimit.Algorithm, algorithms)
	c.simKnobs(s, at)
	if id := sm.Idempotency; !reflect.ValueOf(id).IsZero() {
		c.simIdempotency(s, id, at)
	}
	f := sm.Faults
	if sum := f.Error500.F + f.Error503.F + f.ProcessedThen500.F + f.ResetAfterProcessing.F; sum > 1 {
		c.errorf(at("faults"), "the fault shares add up to %.0f%%, above 100%%", sum*100)
	}
	for ch, pr := range sm.Profiles {
		pp := at("profiles." + ch)
		if !slices.Contains(channels, ch) {
			c.errorf(pp, "%q is not a channel (%s)", ch, strings.Join(channels, ", "))
		}
		if !pr.P95.IsZero() && pr.P95.D < pr.Median.D {
			c.errorf(pp+".p95", "%s is below the median %s", pr.P95, pr.Median)
		}
		sum := 0.0
		for st, share := range pr.Outcomes {
			switch {
			case st == rundir.StateExpired:
				c.errorf(pp+".outcomes."+st, "the simulator does not draw %s: it comes from a failover's ttl (message.scenario[].failover.ttl); draw %s", st, strings.Join(rundir.DrawnStates(), ", "))
			case !slices.Contains(rundir.DrawnStates(), st):
				c.errorf(pp+".outcomes."+st, "%q is not a state the simulator draws (%s)", st, strings.Join(rundir.DrawnStates(), ", "))
			}
			sum += share.F
		}
		if sum > 1.0000001 {
			c.errorf(pp+".outcomes", "the shares add up to %.0f%%, above 100%%", sum*100)
		}
	}
	if cb := sm.Callbacks; cb.Attempts < 0 || cb.BackoffFactor != 0 && cb.BackoffFactor < 1 {
		c.errorf(at("callbacks"), "attempts must not be negative, backoffFactor at least 1 (1: a fixed schedule)")
	}
	if d := sm.NotifyDelay; !d.P95.IsZero() && d.P95.D < d.Median.D {
		c.errorf(at("notifyDelay.p95"), "%s is below the median %s", d.P95, d.Median)
	}
}

// maxIDCollisionChance is the highest chance validate accepts that two
// messages of one client get the same externalId from a template of the
// scenario's own.
const maxIDCollisionChance = 0.01

// externalIDs refuses an externalId template whose ids would repeat within a
// client's messages: the service answers a repeated externalId as a retry of
// the first (one notificationId for two messages), and the run would blame
// it for the collision.
func (c *checker) externalIDs(s *Scenario, p string) {
	m := &s.Message
	if s.API != rundir.APINotify || m.ExternalID == "tagged" || m.ExternalID == "none" || m.ExternalID == "" ||
		s.Load.Profile == "replay" || len(c.errs) > 0 {
		return
	}
	t, err := msgspec.ParseTemplate(m.ExternalID)
	if err != nil {
		return // reported by notifyMessage
	}
	var n int64
	for _, cp := range s.Plan().Clients {
		n = max(n, cp.Requests)
	}
	v := t.Variety(recipientCount(m), m.Recipients != nil && m.Recipients.Order == "random")
	if ch := v.CollisionChance(n); ch >= maxIDCollisionChance {
		at := joinPath(p, "message.externalId")
		if v.Distinct() < float64(n) {
			c.errorf(at, "%q gives %s different ids for up to %d messages of a client: some messages would share an externalId, the service would answer them as one, and the run would count that against it; add {{.Seq}}", m.ExternalID, distinctWord(v.Distinct()), n)
			return
		}
		c.errorf(at, "%q: two of a client's %d messages would get the same externalId with a chance of %.1f%% (random parts repeat), and the run would count that against the service; add {{.Seq}}", m.ExternalID, n, ch*100)
	}
}

// recipientCount is how many recipients the message draws from; 0 when not
// known before the run (a CSV file).
func recipientCount(m *Message) uint64 {
	switch r := m.Recipients; {
	case r == nil:
		pat := m.Recipient
		if pat == "" {
			pat = msgspec.DefaultRecipient
		}
		if nr, err := msgspec.ParseRecipient(pat); err == nil {
			return nr.Size()
		}
	case r.CSV == "":
		if nr, err := msgspec.ParseNumberRange(r.From, r.To); err == nil {
			return nr.Size()
		}
	}
	return 0
}

func distinctWord(d float64) string {
	if d < 1e6 {
		return strconv.FormatFloat(d, 'f', 0, 64)
	}
	return strconv.FormatFloat(d, 'g', 3, 64)
}

// respect refuses a respect-mode plan that would put a client over its limit.
func (c *checker) respect(s *Scenario, p string) {
	if s.Limit.Mode != "respect" || s.Limit.Rate.IsZero() || s.Load.Profile == "replay" || len(c.errs) > 0 {
		return
	}
	pl := s.Plan()
	for _, cp := range pl.Clients {
		if cp.PeakPerWindow > s.Limit.Rate.Count+1e-9 {
			c.errorf(joinPath(p, "load"), "limit mode respect cannot be kept: client %s would send up to %.1f requests in one %s window, above the limit %s; lower the rate, add clients, or set limit.mode: exceed",
				cp.ID, cp.PeakPerWindow, shortDuration(s.Limit.Rate.Per), s.Limit.Rate)
			return
		}
	}
}
