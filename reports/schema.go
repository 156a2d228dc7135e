package reports

import (
	_ "embed"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/msgload/msgload/reports/summary"
)

// SummarySchemaID is the $id of summary.schema.json.
const SummarySchemaID = "https://github.com/msgload/msgload/reports/summary.schema.json"

// SummarySchemaJSON is reports/summary.schema.json, the JSON Schema of
// summary.json (a run's, or a whole run's of kind run), shipped so that CI
// scripts can validate what they read. A test keeps it equal to
// SummarySchema and validates every summary.json of testdata against it.
//
//go:embed summary.schema.json
var SummarySchemaJSON []byte

// SummarySchema generates the JSON Schema of summary.json from the Go types:
// every field without omitempty is required, no other field is allowed, and
// every number may be null (a figure without data is null, never 0), as may a
// pointer field (truth, drift).
func SummarySchema() ([]byte, error) {
	r := &jsonschema.Reflector{Mapper: nullableNumber}
	part, whole := r.Reflect(&summary.Summary{}), r.Reflect(&RunSummary{})
	defs := jsonschema.Definitions{}
	for _, s := range []*jsonschema.Schema{part, whole} {
		for k, v := range s.Definitions {
			defs[k] = v
		}
	}
	nullablePointers(reflect.TypeOf(summary.Summary{}), defs, map[reflect.Type]bool{})
	nullablePointers(reflect.TypeOf(RunSummary{}), defs, map[reflect.Type]bool{})
	kindRun := jsonschema.NewProperties()
	kindRun.Set("kind", &jsonschema.Schema{Const: KindRun})
	root := &jsonschema.Schema{
		Version: jsonschema.Version, ID: SummarySchemaID,
		Title:       "msgload summary.json",
		Description: "Every figure of a msgload run (reports/README.md); a run with parts has a whole-run summary of kind run at the top.",
		If:          &jsonschema.Schema{Properties: kindRun, Required: []string{"kind"}},
		Then:        &jsonschema.Schema{Ref: "#/$defs/RunSummary"},
		Else:        &jsonschema.Schema{Ref: "#/$defs/Summary"},
		Definitions: defs,
	}
	b, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// nullableNumber maps every number of the summary to "a number or null".
func nullableNumber(t reflect.Type) *jsonschema.Schema {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "number"}, {Type: "null"}}}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "integer"}, {Type: "null"}}}
	}
	return nil
}

// nullablePointers lets every pointer field of t's structs (reached through
// fields, slices and maps) be null, as encoding/json writes a nil one.
func nullablePointers(t reflect.Type, defs jsonschema.Definitions, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	def := defs[t.Name()]
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if def != nil && def.Properties != nil && f.Type.Kind() == reflect.Pointer {
			if p, ok := def.Properties.Get(name); ok && p.AnyOf == nil {
				def.Properties.Set(name, &jsonschema.Schema{AnyOf: []*jsonschema.Schema{p, {Type: "null"}}})
			}
		}
		nullablePointers(f.Type, defs, seen)
	}
}
