package scenarios

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/invopop/jsonschema"

	"github.com/msgload/msgload/rundir"
)

// The scenario schema's generator: only `go test` writes schema.json
// (-update) and checks it against the committed one, so no command carries it.

// SchemaID is the $id of the generated JSON Schema.
const SchemaID = "https://github.com/msgload/msgload/scenarios/schema.json"

// Schema returns the JSON Schema of scenario files, generated from the Go types
// (committed as scenarios/schema.json; a test keeps it in sync). Editors use it
// through a modeline: # yaml-language-server: $schema=../scenarios/schema.json
func Schema() ([]byte, error) {
	r := &jsonschema.Reflector{RequiredFromJSONSchemaTags: true}
	s := r.Reflect(&Scenario{})
	scalarOrString := &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}, {Type: "number"}, {Type: "boolean"}}}
	// YAML writes retry codes as numbers (on: [500, 503, timeout]) and trackData
	// values may be numbers; the decoder takes any scalar there, so does the schema.
	if d, ok := s.Definitions["Retry"]; ok {
		if on, ok := d.Properties.Get("on"); ok {
			on.Items = &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string", Enum: []any{"timeout", "reset"}}, {Type: "integer", Minimum: "400", Maximum: "599"}, {Type: "string", Pattern: "^[45][0-9][0-9]$"}}}
		}
	}
	// The seeds' words and limits are rundir's, not repeated in struct tags.
	words := func(def, prop string, f func(p *jsonschema.Schema)) {
		if d, ok := s.Definitions[def]; ok {
			if p, ok := d.Properties.Get(prop); ok {
				f(p)
			}
		}
	}
	enum := func(ws []string) []any {
		out := make([]any, len(ws))
		for i, w := range ws {
			out[i] = w
		}
		return out
	}
	words("Item", "channel", func(p *jsonschema.Schema) { p.Enum = enum(rundir.Channels()) })
	words("Item", "sender", func(p *jsonschema.Schema) {
		p.Description = fmt.Sprintf("sender name: at most %d characters for %s, %d otherwise", rundir.MaxSenderSMS, rundir.ChannelSMS, rundir.MaxSender)
	})
	words("Failover", "ttl", func(p *jsonschema.Schema) { p.Maximum = json.Number(strconv.Itoa(rundir.MaxFailoverTTL)) })
	words("Failover", "condition_status", func(p *jsonschema.Schema) { p.Enum = enum(rundir.ConditionStatuses()) })
	words("Attachment", "type", func(p *jsonschema.Schema) { p.Enum = enum(rundir.AttachmentTypes()) })
	if d, ok := s.Definitions["Message"]; ok {
		if td, ok := d.Properties.Get("trackData"); ok {
			td.AdditionalProperties = scalarOrString
		}
	}
	if err := schemaDefaults(s); err != nil {
		return nil, err
	}
	s.ID = SchemaID
	s.Title = "msgload scenario"
	s.Description = "A msgload scenario file; see scenarios/README.md for every field."
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return append(b, '\n'), nil
}

// schemaDefaults writes each default of the table (defaults.go) as the
// `default` of its property, so editors show what a field left out becomes.
// A default with a condition (notify only, profile replay) is written too: the
// field's description says when it applies.
func schemaDefaults(root *jsonschema.Schema) error {
	for _, fd := range defaults {
		prop, err := schemaProperty(root, fd.path)
		if err != nil {
			return err
		}
		v, err := fd.json()
		if err != nil {
			return err
		}
		prop.Default = v
	}
	return nil
}

// schemaProperty finds the property at path (JSON names, "[]" for the items of
// a list) from the Scenario definition, following $ref into the definitions.
func schemaProperty(root *jsonschema.Schema, path string) (*jsonschema.Schema, error) {
	def := root.Definitions["Scenario"]
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		name, each := strings.CutSuffix(seg, "[]")
		if def == nil || def.Properties == nil {
			return nil, fmt.Errorf("schema: no object on the way to %s", path)
		}
		prop, ok := def.Properties.Get(name)
		if !ok {
			return nil, fmt.Errorf("schema: no property %s on the way to %s", name, path)
		}
		if i == len(segs)-1 {
			return prop, nil
		}
		next := prop
		if each {
			next = prop.Items
		}
		if next != nil && next.Ref != "" {
			next = root.Definitions[strings.TrimPrefix(next.Ref, "#/$defs/")]
		}
		def = next
	}
	return nil, fmt.Errorf("schema: empty path")
}

// json is the default as the schema writes it.
func (fd fieldDefault) json() (any, error) {
	var v any
	if err := yaml.Unmarshal([]byte(fd.yaml), &v); err != nil {
		return nil, fmt.Errorf("default of %s: %w", fd.path, err)
	}
	return v, nil
}
