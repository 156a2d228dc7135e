package scenarios

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/parser"

	"github.com/msgload/msgload/attack/message/msgspec"
	"github.com/msgload/msgload/rundir"
)

// The defaults of a scenario, in one table. They are applied once the api is
// known (several depend on it) and before any check, so the checks read a
// complete scenario and set nothing. The same table writes the `default` of
// each field in schema.json (Schema) and the defaults section of README.md
// (a test keeps both in step), so editors, the README and the loader agree.
//
// A few values are not defaults but are derived from other fields, and are
// set by derive: a part's name, what a part inherits from the top level,
// sim.rateLimit.rate (limit.rate) and the resolved credentials (Creds).

// fieldDefault is the value a field takes when the file leaves it out.
type fieldDefault struct {
	// path names the field by its JSON names from the scenario (or a part):
	// "delivery.grace"; "scenario[]" stands for each item of the list. A nil
	// pointer on the way (message.recipients) means there is nothing to fill.
	path string
	// yaml is the value as it would be written in the file: it is decoded by
	// the file's own decoder, and converted to JSON for the schema.
	yaml string
	// when says whether the default applies to s; nil: always. written
	// reports whether the file writes a field (a path from the scenario).
	when func(s *Scenario, written func(path string) bool) bool
	// applies says when, for people (README); "" for always.
	applies string
}

var defaults = []fieldDefault{
	{path: "target", yaml: "embedded"},
	{path: "sink", yaml: "embedded"},
	{path: "clients", yaml: "1"},
	{path: "load.profile", yaml: "constant"},
	{path: "load.speed", yaml: "1", when: replay, applies: "profile replay"},
	{path: "load.format", yaml: "auto", when: replay, applies: "profile replay"},
	{path: "load.externalIds", yaml: "new", when: replay, applies: "profile replay"},
	{path: "load.maxInFlight", yaml: strconv.Itoa(rundir.DefaultMaxInFlight), applies: "always; -1 = no cap (rundir.NoInFlightCap)"},
	{path: "limit.mode", yaml: "respect"},
	{path: "limit.rate", yaml: "100/1m", when: notify, applies: "notify (messaging has none)"},
	{path: "message.recipient", yaml: strconv.Quote(msgspec.DefaultRecipient), applies: "without recipients",
		when: func(s *Scenario, _ func(string) bool) bool { return s.Message.Recipients == nil }},
	{path: "message.recipients.order", yaml: "sequential", applies: "with recipients"},
	{path: "message.text", yaml: strconv.Quote(msgspec.DefaultText)},
	{path: "message.fill", yaml: msgspec.DefaultFill},
	{path: "message.externalId", yaml: "tagged", when: notify, applies: "notify"},
	{path: "message.scenario", yaml: "[{channel: " + rundir.ChannelSMS + ", sender: " + msgspec.DefaultSender + "}]", when: messaging, applies: "messaging"},
	{path: "message.scenario[].sender", yaml: msgspec.DefaultSender, when: messaging, applies: "messaging, each item"},
	{path: "retry.on", yaml: "[500, 503, timeout]", when: retryAbsent, applies: "when retry is absent"},
	{path: "retry.max", yaml: "3", when: retryAbsent, applies: "when retry is absent (else 0)"},
	{path: "retry.backoff", yaml: "500ms"},
	{path: "retry.maxBackoff", yaml: "10s"},
	{path: "retry.jitter", yaml: "20%", when: unwritten("retry.jitter"), applies: "when not written (0 turns it off)"},
	{path: "retry.timeout", yaml: "10s"},
	{path: "idempotency.concurrent", yaml: "2", applies: "with probes, when not written",
		when: func(s *Scenario, written func(string) bool) bool {
			return !s.Idempotency.Probes.IsZero() && !written("idempotency.concurrent")
		}},
	{path: "delivery.via", yaml: "sink"},
	{path: "delivery.grace", yaml: "30s"},
	{path: "delivery.pollInterval", yaml: "1s"},
	{path: "sim.rateLimit.algorithm", yaml: "sliding", when: embedded, applies: "target embedded"},
	{path: "sim.seed", yaml: "1", when: embedded, applies: "target embedded"},
}

func notify(s *Scenario, _ func(string) bool) bool    { return s.API == rundir.APINotify }
func messaging(s *Scenario, _ func(string) bool) bool { return s.API == rundir.APIMessaging }
func replay(s *Scenario, _ func(string) bool) bool    { return s.Load.Profile == "replay" }
func embedded(s *Scenario, _ func(string) bool) bool  { return s.Target.Embedded }
func retryAbsent(_ *Scenario, written func(string) bool) bool {
	return !written("retry")
}

func unwritten(path string) func(*Scenario, func(string) bool) bool {
	return func(_ *Scenario, written func(string) bool) bool { return !written(path) }
}

// applyDefaults fills the fields of s (a scenario without parts, or a part at
// prefix p) that are unset, in the table's order (a condition may read a field
// an earlier default filled: the profile, the target).
func (c *checker) applyDefaults(s *Scenario, p string) {
	written := func(path string) bool { return c.set(joinPath(p, path)) }
	root := reflectValue(s)
	for _, fd := range defaults {
		if fd.when != nil && !fd.when(s, written) {
			continue
		}
		for _, f := range fieldsAt(root, fd.path) {
			if unset(f) {
				f.Set(fd.value(f.Type()))
			}
		}
	}
}

// value decodes the default afresh (a list must not be shared between
// scenarios) into a value of type t.
func (fd fieldDefault) value(t reflect.Type) reflect.Value {
	f, err := parser.ParseBytes([]byte(fd.yaml), 0)
	if err != nil || len(f.Docs) != 1 || f.Docs[0].Body == nil {
		panic(fmt.Sprintf("scenarios: default of %s: %q is not YAML: %v", fd.path, fd.yaml, err))
	}
	d := newDecoder("defaults")
	v := reflect.New(t).Elem()
	d.decode(f.Docs[0].Body, v, fd.path)
	if len(d.errs) > 0 {
		panic(fmt.Sprintf("scenarios: default of %s: %v", fd.path, d.errs))
	}
	return v
}

// fieldsAt returns the fields at path below v (a struct): one, several for a
// path through a list's items, none when a pointer on the way is nil.
func fieldsAt(v reflect.Value, path string) []reflect.Value {
	name, rest, _ := strings.Cut(path, ".")
	name, each := strings.CutSuffix(name, "[]")
	i, ok := fieldIndex(v.Type())[name]
	if !ok {
		panic(fmt.Sprintf("scenarios: %s has no field %q", v.Type(), name))
	}
	f := v.Field(i)
	if f.Kind() == reflect.Pointer {
		if f.IsNil() {
			return nil
		}
		f = f.Elem()
	}
	if rest == "" {
		return []reflect.Value{f}
	}
	if !each {
		return fieldsAt(f, rest)
	}
	var out []reflect.Value
	for j := range f.Len() {
		out = append(out, fieldsAt(f.Index(j), rest)...)
	}
	return out
}

// unset reports whether a field holds no value: its IsZero says so when it
// has one (a rate, a duration), and a list is unset when empty.
func unset(f reflect.Value) bool {
	if z, ok := f.Interface().(interface{ IsZero() bool }); ok {
		return z.IsZero()
	}
	if f.Kind() == reflect.Slice {
		return f.Len() == 0
	}
	return f.IsZero()
}

// deriveParts fills each part from the file: what it inherits from the top
// level, its default name (NAME-API), and where it came from.
func (c *checker) deriveParts(s *Scenario) {
	for i := range s.Parts {
		part := &s.Parts[i]
		inheritPart(s, part)
		if part.Name == "" {
			part.Name = s.Name + "-" + part.API
		}
		part.File = s.File
		part.pos, part.dir = c.pos, c.dir
	}
}

// inheritPart copies the top-level fields a part leaves unset.
func inheritPart(top, part *Scenario) {
	if part.Target.IsZero() {
		part.Target = top.Target
	}
	if len(part.Confirm) == 0 {
		part.Confirm = top.Confirm
	}
	if part.Sink == "" {
		part.Sink = top.Sink
	}
	if part.MaxMessages == 0 {
		part.MaxMessages = top.MaxMessages
	}
}

// derive sets the values that follow from other fields once the defaults are
// in: the simulator enforces limit.rate unless told otherwise, and the
// clients' credentials are resolved.
func derive(s *Scenario) {
	if s.Target.Embedded && s.Sim.RateLimit.Rate.IsZero() {
		s.Sim.RateLimit.Rate = s.Limit.Rate
	}
	s.Creds = credentials(s)
}

// auth returns the scenario's client id and secret (login and password for
// messaging) and the names of their fields.
func auth(s *Scenario) (id, secret, idField, secretField string) {
	if s.API == rundir.APINotify {
		return s.Auth.ClientID, s.Auth.ClientSecret, "auth.clientId", "auth.clientSecret"
	}
	return s.Auth.Login, s.Auth.Password, "auth.login", "auth.password"
}

// credentials resolves one Cred per client: a listed client's own, or the
// auth's id numbered per client (id-1 … id-N) sharing its secret. Against the
// embedded target a missing id or secret is demo. A count out of range gives
// none (clients reports it).
func credentials(s *Scenario) []Cred {
	id, secret, _, _ := auth(s)
	if s.Clients.N < 1 || s.Clients.N > 10000 {
		return nil
	}
	if s.Clients.List != nil {
		creds := make([]Cred, len(s.Clients.List))
		for i, cr := range s.Clients.List {
			if cr.Login != "" || cr.Password != "" {
				cr = Cred{ID: cr.ID + cr.Login, Secret: cr.Secret + cr.Password}
			}
			if cr.Secret == "" {
				cr.Secret = secret
			}
			if cr.Secret == "" && s.Target.Embedded {
				cr.Secret = "demo"
			}
			creds[i] = cr
		}
		return creds
	}
	if s.Target.Embedded {
		if id == "" {
			id = "demo"
		}
		if secret == "" {
			secret = "demo"
		}
	}
	creds := make([]Cred, s.Clients.N)
	for i := range creds {
		cid := id
		if s.Clients.N > 1 || (s.API == rundir.APINotify && s.Target.Embedded && id == "demo") {
			cid = id + "-" + strconv.Itoa(i+1)
		}
		creds[i] = Cred{ID: cid, Secret: secret}
	}
	return creds
}
