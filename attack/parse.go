package attack

import (
	"bytes"
	"encoding/json"

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
// whose keys and values are strings of printable ASCII with no escapes
// (`{"txId":"…","state":"ACCEPTED","updatedAt":"…"}`). It gives what
// json.Unmarshal would (keys matched regardless of case, the last of a
// repeated key kept); ok is false for anything else — numbers, nesting,
// escapes, other bytes, broken JSON — which goes to encoding/json.
func fastAnswer(b []byte) (a answer, ok bool) {
	i := skipSpace(b, 1)
	if i < len(b) && b[i] == '}' {
		return a, skipSpace(b, i+1) == len(b)
	}
	for {
		var key, val []byte
		if key, i, ok = plainString(b, i); !ok {
			return answer{}, false
		}
		if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
			return answer{}, false
		}
		if val, i, ok = plainString(b, skipSpace(b, i+1)); !ok {
			return answer{}, false
		}
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
		if i = skipSpace(b, i); i >= len(b) {
			return answer{}, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return a, skipSpace(b, i+1) == len(b)
		default:
			return answer{}, false
		}
	}
}

// plainString reads the JSON string at b[i] if it is printable ASCII with no
// escape, and returns its contents and the index after its closing quote.
func plainString(b []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, i, false
		}
	}
	return nil, i, false
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
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
