package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
)

// External id modes.
const (
	ExternalIDsKeep = "keep" // send the recorded externalIds: a second replay must get the same notificationIds
	ExternalIDsNew  = "new"  // send fresh, run-tagged externalIds (rundir.Tag), the same for repeats of one recorded id
)

// clientMap maps recorded client ids onto the scenario's clients, per API, in
// order of first appearance: the first recorded client gets the first scenario
// client, and so on, round robin when the recording has more clients than the
// scenario. Requests with no recorded client are spread by position.
type clientMap struct {
	clients map[string][]string          // api → scenario clients
	m       map[string]map[string]string // api → recorded → scenario
	order   map[string][]string          // api → recorded, in order of first appearance
}

// newClientMap builds the map for reqs. clients gives the scenario's client ids
// per API (apiMessaging: logins, apiNotify: client_ids); an API with none keeps
// its recorded ids.
func newClientMap(reqs []Request, clients map[string][]string) *clientMap {
	cm := &clientMap{clients: clients, m: map[string]map[string]string{}, order: map[string][]string{}}
	for _, r := range reqs {
		api := clientAPI(r.API)
		cs := clients[api]
		if r.ClientID == "" || len(cs) == 0 {
			continue
		}
		if cm.m[api] == nil {
			cm.m[api] = map[string]string{}
		}
		if _, ok := cm.m[api][r.ClientID]; ok {
			continue
		}
		cm.m[api][r.ClientID] = cs[len(cm.order[api])%len(cs)]
		cm.order[api] = append(cm.order[api], r.ClientID)
	}
	return cm
}

// clientAPI is the API whose clients a request uses: token calls are notify's.
func clientAPI(api string) string {
	if api == apiToken {
		return apiNotify
	}
	return api
}

// Client returns the scenario client for request i of the replay.
func (cm *clientMap) Client(i int, r *Request) string {
	api := clientAPI(r.API)
	cs := cm.clients[api]
	if len(cs) == 0 {
		return r.ClientID
	}
	if s, ok := cm.m[api][r.ClientID]; ok {
		return s
	}
	return cs[i%len(cs)]
}

// Pairs lists the mapping, recorded → scenario, per API, in order of first
// appearance (for the replay report).
func (cm *clientMap) Pairs() map[string][][2]string {
	out := map[string][][2]string{}
	for api, rec := range cm.order {
		for _, r := range rec {
			out[api] = append(out[api], [2]string{r, cm.m[api][r]})
		}
	}
	return out
}

// bodyRewrite says how to change a request body for replay.
type bodyRewrite struct {
	SinkURL    string            // sink base URL: messaging `callback` → SinkURL/callback, webhook registrations → SinkURL/webhook; "" keeps them
	ExternalID string            // notify: externalId to send; "" keeps the recorded one
	TrackData  map[string]string // messaging: entries added to trackData (the correlation tag)
}

// rewriteBody returns the body of r rewritten for replay. Bodies that are not
// JSON objects are returned unchanged; masked phone numbers (digits replaced by
// '*' at recording) get digits again, the same for the same masked number.
func rewriteBody(r *Request, o bodyRewrite) ([]byte, error) {
	t := bytes.TrimSpace(r.Body)
	if len(t) == 0 || t[0] != '{' {
		return r.Body, nil
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return r.Body, nil // sent as recorded: the service's answer to it is part of the replay
	}
	switch {
	case r.API == apiMessaging && r.Op == OpSend:
		if o.SinkURL != "" {
			m["callback"] = strings.TrimRight(o.SinkURL, "/") + "/callback"
		}
		if len(o.TrackData) > 0 {
			td, _ := m["trackData"].(map[string]any)
			if td == nil {
				td = map[string]any{}
			}
			for k, v := range o.TrackData {
				td[k] = v
			}
			m["trackData"] = td
		}
	case r.API == apiNotify && r.Op == OpSend:
		if o.ExternalID != "" {
			m["externalId"] = o.ExternalID
		}
	case r.API == apiNotify && r.Op == opWebhook:
		if o.SinkURL != "" {
			for _, k := range []string{"url", "webhookUrl", "webhook", "callbackUrl", "callback"} {
				if _, ok := m[k].(string); ok {
					m[k] = strings.TrimRight(o.SinkURL, "/") + "/webhook"
				}
			}
		}
	}
	unmaskAll(m)
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("rewrite body: %w", err)
	}
	return b, nil
}

// unmask gives a masked phone number digits again: each '*' becomes a digit
// drawn from a hash of the masked number, so one masked number always gives the
// same number and distinct ones rarely collide.
func unmask(s string) string {
	if !strings.Contains(s, "*") || !maskedRE(s) {
		return s
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	x := h.Sum64()
	b := []byte(s)
	for i := range b {
		if b[i] == '*' {
			b[i] = byte('0' + x%10)
			x /= 10
			if x == 0 {
				x = h.Sum64() ^ uint64(i)
			}
		}
	}
	return string(b)
}

func maskedRE(s string) bool {
	t := strings.TrimPrefix(s, "+")
	if len(t) < 10 || len(t) > 15 {
		return false
	}
	for _, c := range t {
		if (c < '0' || c > '9') && c != '*' {
			return false
		}
	}
	return true
}

func unmaskAll(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = unmaskAll(e)
		}
	case []any:
		for i := range x {
			x[i] = unmaskAll(x[i])
		}
	case string:
		return unmask(x)
	}
	return v
}
