package scenarios

import (
	"encoding/json"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/invopop/jsonschema"
)

// Hosts is the confirm: field: the hosts (or host:port) that may receive real
// traffic although they are not loopback. YAML takes one host, a
// comma-separated string or a list, so a notification API whose token
// endpoint is on another host can be confirmed with both.
type Hosts []string

// SplitHosts reads "a, b" (as --confirm-target and confirm: take it) into
// its hosts, dropping empty entries.
func SplitHosts(s string) Hosts {
	var out Hosts
	for _, h := range strings.Split(s, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// decodeNode reads a host, "a, b" or a list of hosts.
func (h *Hosts) decodeNode(d *decoder, n ast.Node, path string) {
	if seq, ok := n.(*ast.SequenceNode); ok {
		var out Hosts
		for _, e := range seq.Values {
			s, ok := scalar(d.unwrap(e, path))
			if !ok {
				d.errorf(e, path, "want a host name, got %s", kindName(e))
				continue
			}
			out = append(out, SplitHosts(s)...)
		}
		*h = out
		return
	}
	s, ok := scalar(n)
	if !ok {
		d.errorf(n, path, "want a host or a list of hosts, got %s", kindName(n))
		return
	}
	*h = SplitHosts(s)
}

// marshal writes one host as a string (as confirm: was before lists), more as a list.
func (h Hosts) marshal() any {
	if len(h) == 1 {
		return h[0]
	}
	return []string(h)
}

// MarshalJSON writes one host as a string, more as a list.
func (h Hosts) MarshalJSON() ([]byte, error) { return json.Marshal(h.marshal()) }

// MarshalYAML writes one host as a string, more as a list.
func (h Hosts) MarshalYAML() (any, error) { return h.marshal(), nil }

// JSONSchema: a host, or a list of hosts.
func (Hosts) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Description: "hosts allowed as non-loopback targets (like --confirm-target): one host, \"a, b\" or a list",
		OneOf: []*jsonschema.Schema{
			{Type: "string"},
			{Type: "array", Items: &jsonschema.Schema{Type: "string"}},
		},
	}
}
