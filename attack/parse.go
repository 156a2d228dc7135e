package attack

import (
	"bytes"
	"encoding/json"

	"github.com/msgload/msgload/internal/flatjson"
	"github.com/msgload/msgload/rundir"
)

// answer is what the attacker reads from a response body: the ids and state
// of the messaging and notify answers. Unknown fields are ignored.
type answer struct {
	TxID           string `json:"txId"`
	State          string `json:"state"`
	Channel        string `json:"channel"`
	NotificationID string `json:"notificationId"`
}

// parseAnswer reads the ids from a response body. A body that is not a JSON
// object yields an empty answer: the attempt is still recorded by its code.
func parseAnswer(body []byte) answer {
	var a answer
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] != '{' {
		return a
	}
	if a, ok := fastAnswer(b); ok {
		return a
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return answer{}
	}
	return a
}

// fastAnswer reads the common answer without encoding/json: one flat object
// whose keys and values are strings of ASCII with no escapes
// (`{"txId":"…","state":"ACCEPTED","updatedAt":"…"}`), split by
// flatjson.Fields. It gives what json.Unmarshal would (keys matched
// regardless of case, the last of a repeated key kept); ok is false for
// anything else — numbers, nesting, escapes, other bytes, broken JSON — which
// goes to encoding/json.
func fastAnswer(b []byte) (a answer, ok bool) {
	ok = flatjson.Fields(b, func(key, v []byte) bool {
		if len(v) < 2 || v[0] != '"' || !ascii(key) || !ascii(v) {
			return false // not a string, or bytes encoding/json might read otherwise
		}
		val := v[1 : len(v)-1]
		switch {
		case bytes.EqualFold(key, []byte("txId")):
			a.TxID = string(val)
		case bytes.EqualFold(key, []byte("state")):
			a.State = string(val)
		case bytes.EqualFold(key, []byte("channel")):
			a.Channel = string(val)
		case bytes.EqualFold(key, []byte("notificationId")):
			a.NotificationID = string(val)
		}
		return true
	})
	if !ok {
		return answer{}, false
	}
	return a, true
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

var externalKey = []byte(`"externalId"`)

// externalID returns the top-level-looking "externalId" string of a JSON
// body without decoding all of it (it runs once per message); "" when there is
// none or it is not a plain string.
func externalID(body []byte) string {
	i := bytes.Index(body, externalKey)
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(body[i+len(externalKey):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return ""
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) == 0 || rest[0] != '"' {
		return ""
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 {
		return ""
	}
	raw := rest[1 : 1+end]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	// Escapes: let encoding/json find the end of the string and decode it.
	var v string
	if err := json.NewDecoder(bytes.NewReader(rest)).Decode(&v); err != nil {
		return ""
	}
	return v
}

// badSendAnswer says why a 2xx send answer ans (as parsed from the body) is
// not the API's answer, or "" when it is. Messaging (seed): a txId uuid and a
// state ACCEPTED or FAILED. Notify (seed): a notificationId.
func badSendAnswer(api string, ans answer) string {
	if ans == (answer{}) {
		return "not a JSON object with the answer's fields"
	}
	if api == rundir.APINotify {
		if ans.NotificationID == "" {
			return "no notificationId"
		}
		return ""
	}
	if !rundir.IsUUID(ans.TxID) {
		return "txId is not a uuid"
	}
	if ans.State != rundir.StateAccepted && ans.State != rundir.StateFailed {
		return "state is neither ACCEPTED nor FAILED"
	}
	return ""
}
