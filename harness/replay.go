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
	embedded := o.MessagingURL == "" && o.NotifyURL == ""
	o.LimitMode = cmp.Or(o.LimitMode, "exceed")
	o.ExternalIDs = cmp.Or(o.ExternalIDs, replay.ExternalIDsKeep)
	o.Format = cmp.Or(o.Format, replay.FormatAuto)
	if o.Speed == 0 {
		o.Speed = 1
	}
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
	var parts []map[string]any
	for _, api := range []string{rundir.APIMessaging, rundir.APINotify} {
		if recorded[api] == nil {
			continue
		}
		p := map[string]any{
			"name": api,
			"api":  api,
			"load": map[string]any{"profile": "replay", "file": file, "speed": o.Speed, "format": o.Format,
				"clientHeader": o.ClientHeader, "externalIds": o.ExternalIDs},
			"limit": map[string]any{"mode": o.LimitMode},
		}
		if o.Timeout > 0 {
			p["retry"] = map[string]any{"timeout": o.Timeout.String()}
		}
		delivery := map[string]any{}
		if o.Grace > 0 {
			delivery["grace"] = o.Grace.String()
		}
		creds := o.Messaging
		base := o.MessagingURL
		if api == rundir.APINotify {
			creds, base = o.Notify, o.NotifyURL
		}
		if !embedded {
			if base == "" {
				notes = append(notes, fmt.Sprintf("%s sends are not replayed: no target for the %s API (--%s-url or --target)", api, api, api))
				continue
			}
			t := map[string]any{"baseUrl": base}
			if api == rundir.APINotify {
				t["tokenUrl"] = o.TokenURL
				if o.TokenURL == "" {
					t["tokenUrl"] = strings.TrimRight(base, "/") + replayDefaultTokenPath
				}
			}
			p["target"] = t
			if o.SinkURL == "" {
				// Callbacks and webhooks stay where the service has them.
				delivery["via"] = "none"
				notes = append(notes, fmt.Sprintf("%s: no --sink: callbacks go where the recording sent them; delivery is not measured", api))
			}
		}
		if len(creds) > 0 {
			list := make([]map[string]string, len(creds))
			for i, c := range creds {
				list[i] = map[string]string{"clientId": c.ID, "clientSecret": c.Secret}
			}
			p["clients"] = list
		} else {
			p["clients"] = max(1, min(len(recorded[api]), 1000))
		}
		if o.SinkURL != "" {
			p["sink"] = o.SinkURL
		}
		if len(delivery) > 0 {
			p["delivery"] = delivery
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		if len(notes) > 0 {
			return nil, notes, errors.New(strings.Join(notes, "; "))
		}
		return nil, nil, fmt.Errorf("%s: %w (no messaging or notification sends)", o.File, replay.ErrNoRequests)
	}
	name := "replay"
	if base := sanitize(strings.TrimSuffix(filepath.Base(o.File), filepath.Ext(o.File))); base != "" {
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
		return nil, notes, err
	}
	s, err = scenarios.Parse("replay", "", src, nil)
	if err != nil {
		return nil, notes, fmt.Errorf("replay scenario: %w", err)
	}
	return s, notes, nil
}
