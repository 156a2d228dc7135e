package scenarios

import (
	"reflect"

	"github.com/goccy/go-yaml/ast"
	"github.com/invopop/jsonschema"
)

// Threshold is one threshold of a scenario: an expression over the summary's
// fields, written as a plain string, or as a mapping { expr, abortOnFail,
// delayAbortEval } (k6's words) that also asks the run to judge it live and
// stop the attack when it fails (README.md, "Soak runs").
type Threshold struct {
	Expr string `json:"expr" jsonschema:"required" jsonschema_description:"the expression over summary.json's fields"`
	// AbortOnFail stops the attack as soon as the threshold fails live:
	// a count that only grows, once over its bound; any other figure,
	// failing at an evaluation after DelayAbortEval.
	AbortOnFail bool `json:"abortOnFail,omitempty" jsonschema_description:"judge it live during the run and stop the attack once it fails (the run ends fail)"`
	// DelayAbortEval is how long after the start the live evaluation begins.
	DelayAbortEval Duration `json:"delayAbortEval,omitempty" jsonschema_description:"with abortOnFail: no live judgement before this time after the start (a warm-up)"`
}

// Plain reports whether the threshold is only an expression (written as a string).
func (t Threshold) Plain() bool { return !t.AbortOnFail && t.DelayAbortEval.IsZero() }

// decodeNode reads a string, or a mapping { expr, abortOnFail, delayAbortEval }.
func (t *Threshold) decodeNode(d *decoder, n ast.Node, path string) {
	if s, ok := scalar(n); ok {
		*t = Threshold{Expr: s}
		return
	}
	if _, ok := mappingValues(n); !ok {
		d.errorf(n, path, "want an expression, or a mapping { expr, abortOnFail, delayAbortEval }, got %s", kindName(n))
		return
	}
	type plain Threshold
	var p plain
	d.decodeStruct(n, reflect.ValueOf(&p).Elem(), path)
	*t = Threshold(p)
}

// MarshalYAML writes a plain threshold as its expression, any other as the mapping.
func (t Threshold) MarshalYAML() (any, error) {
	if t.Plain() {
		return t.Expr, nil
	}
	type plain Threshold
	return plain(t), nil
}

// JSONSchema: an expression, or the mapping.
func (Threshold) JSONSchema() *jsonschema.Schema {
	r := &jsonschema.Reflector{DoNotReference: true, RequiredFromJSONSchemaTags: true}
	type plain Threshold
	obj := r.ReflectFromType(reflect.TypeFor[plain]())
	obj.Version, obj.ID = "", ""
	obj.Description = "an expression with what to do live: { expr, abortOnFail, delayAbortEval }"
	return &jsonschema.Schema{
		Description: "an expression over summary.json's fields that must hold for the run to pass, or a mapping that also judges it live",
		OneOf: []*jsonschema.Schema{
			{Type: "string"},
			obj,
		},
	}
}

// ThresholdExprs are the expressions of the scenario's thresholds, in order.
func (s *Scenario) ThresholdExprs() []string {
	out := make([]string, len(s.Thresholds))
	for i, t := range s.Thresholds {
		out[i] = t.Expr
	}
	return out
}
