package harness

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/msgload/msgload/replay"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// ReplayOptions describe `msgload replay FILE` without a scenario: the
// recording and where it goes. The harness makes the built-in replay scenario
// of them (ReplayScenario) and runs it like any other.
type ReplayOptions struct {
	File         string
	Format       string  // replay.FormatAuto (""), FormatMsgload, FormatHAR, FormatVegeta
	ClientHeader string  // request header carrying the recorded client id
	Speed        float64 // time scale; 0 = 1
	ExternalIDs  string  // replay.ExternalIDsKeep ("") or replay.ExternalIDsNew
	LimitMode    string  // "respect" or "exceed" (""): how the replay treats the service's limit

	// Target. MessagingURL and NotifyURL empty: the embedded simulator (and
	// sink), whatever else is set.
	MessagingURL, NotifyURL string
	TokenURL                string // "" = NotifyURL + /oauth/token
	SinkURL                 string // a standalone sink; "" = the embedded one
	// Credentials of the replay's clients per API; none against the embedded
	// simulator: its built-in clients, one per recorded client.
	Messaging, Notify []scenarios.Cred

	Grace   time.Duration // delivery.grace; 0 = the scenario default (30s)
	Timeout time.Duration // retry.timeout: per request; 0 = the scenario default
}

// replayDefaultTokenPath is appended to the notify base URL when no token URL is given.
const replayDefaultTokenPath = rundir.RouteToken

// ReplayScenario is the built-in replay scenario of a recording: a scenario
// whose load is the recording (load.profile replay), one part per API the
// recording has sends of (parts named messaging and notify, side by side on
// one clock), against the embedded simulator and sink or the given target.
// Limits are exceeded (the recording's pace is kept) unless LimitMode says
// respect; nothing is retried. Notes say what is not replayed and why.
func ReplayScenario(o ReplayOptions) (s *scenarios.Scenario, notes []string, err error) {
	reqs, err := replay.LoadWith(o.File, o.Format, replay.ReadOptions{ClientHeader: o.ClientHeader})
	if err != nil {
		return nil, nil, err
	}
	file, err := filepath.Abs(o.File)
	if err != nil {
		return nil, nil, err
	}
	// Not the table's defaults (respect, new): a replay keeps the recording's
	// pace and its externalIds unless told otherwise.
	o.LimitMode = cmp.Or(o.LimitMode, "exceed")
	o.ExternalIDs = cmp.Or(o.ExternalIDs, replay.ExternalIDsKeep)
	recorded := recordedClients(reqs)
	var parts []map[string]any
	for _, api := range []string{rundir.APIMessaging, rundir.APINotify} {
		if recorded[api] == nil {
			continue
		}
		p, note := o.replayPart(api, file, len(recorded[api]))
		if note != "" {
			notes = append(notes, note)
		}
		if p != nil {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		if len(notes) > 0 {
			return nil, notes, errors.New(strings.Join(notes, "; "))
		}
		return nil, nil, fmt.Errorf("%s: %w (no messaging or notification sends)", o.File, replay.ErrNoRequests)
	}
	s, err = replayParse(o.File, parts)
	return s, notes, err
}

// recordedClients are the clients with recorded sends, per API.
func recordedClients(reqs []replay.Request) map[string]map[string]bool {
	recorded := map[string]map[string]bool{} // api → recorded clients
	for _, r := range reqs {
		if r.Op != replay.OpSend {
			continue
		}
		if recorded[r.API] == nil {
			recorded[r.API] = map[string]bool{}
		}
		recorded[r.API][r.ClientID] = true
	}
	return recorded
}

// replayPart is the part replaying api's sends of the recording at file (with
// clients recorded clients), as the scenario file would write it; nil with a
// note when the API has no target. Speed and format are left out when not
// given: the scenario table's defaults (1, auto) fill them.
func (o ReplayOptions) replayPart(api, file string, clients int) (map[string]any, string) {
	load := map[string]any{"profile": "replay", "file": file, "clientHeader": o.ClientHeader, "externalIds": o.ExternalIDs}
	if o.Speed != 0 {
		load["speed"] = o.Speed
	}
	if o.Format != "" {
		load["format"] = o.Format
	}
	p := map[string]any{"name": api, "api": api, "load": load, "limit": map[string]any{"mode": o.LimitMode}}
	if o.Timeout > 0 {
		p["retry"] = map[string]any{"timeout": o.Timeout.String()}
	}
	delivery := map[string]any{}
	if o.Grace > 0 {
		delivery["grace"] = o.Grace.String()
	}
	var note string
	if o.MessagingURL != "" || o.NotifyURL != "" { // not the embedded simulator
		t, n := o.replayTarget(api)
		if t == nil {
			return nil, n
		}
		p["target"] = t
		if o.SinkURL == "" {
			// Callbacks and webhooks stay where the service has them.
			delivery["via"] = "none"
			note = fmt.Sprintf("%s: no --sink: callbacks go where the recording sent them; delivery is not measured", api)
		}
	}
	p["clients"] = o.replayClients(api, clients)
	if o.SinkURL != "" {
		p["sink"] = o.SinkURL
	}
	if len(delivery) > 0 {
		p["delivery"] = delivery
	}
	return p, note
}

// replayTarget is the target of api's part; nil with a note when the API has
// no base URL.
func (o ReplayOptions) replayTarget(api string) (map[string]any, string) {
	base := o.MessagingURL
	if api == rundir.APINotify {
		base = o.NotifyURL
	}
	if base == "" {
		return nil, fmt.Sprintf("%s sends are not replayed: no target for the %s API (--%s-url or --target)", api, api, api)
	}
	t := map[string]any{"baseUrl": base}
	if api == rundir.APINotify {
		t["tokenUrl"] = o.TokenURL
		if o.TokenURL == "" {
			t["tokenUrl"] = strings.TrimRight(base, "/") + replayDefaultTokenPath
		}
	}
	return t, ""
}

// replayClients is api's clients: the given credentials, else one built-in
// client per recorded one (at most 1000).
func (o ReplayOptions) replayClients(api string, recorded int) any {
	creds := o.Messaging
	if api == rundir.APINotify {
		creds = o.Notify
	}
	if len(creds) == 0 {
		return max(1, min(recorded, 1000))
	}
	list := make([]map[string]string, len(creds))
	for i, c := range creds {
		list[i] = map[string]string{"clientId": c.ID, "clientSecret": c.Secret}
	}
	return list
}

// replayParse is the scenario of the parts (the only part's fields at the top
// level), named after the recording, through the scenario loader.
func replayParse(path string, parts []map[string]any) (*scenarios.Scenario, error) {
	name := "replay"
	if base := sanitize(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))); base != "" {
		name += "-" + base
	}
	doc := map[string]any{"name": name}
	if len(parts) == 1 {
		for k, v := range parts[0] {
			if k != "name" {
				doc[k] = v
			}
		}
	} else {
		doc["parts"] = parts
	}
	src, err := json.Marshal(doc) // JSON is YAML: the scenario loader checks it and applies the defaults
	if err != nil {
		return nil, err
	}
	s, err := scenarios.Parse("replay", "", src, nil)
	if err != nil {
		return nil, fmt.Errorf("replay scenario: %w", err)
	}
	return s, nil
}
