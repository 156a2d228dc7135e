package scenarios

import (
	"reflect"

	"github.com/invopop/jsonschema"
)

// JSONSchema: "embedded" or the addresses of a real service.
func (Target) JSONSchema() *jsonschema.Schema {
	props := jsonschema.NewProperties()
	props.Set("baseUrl", &jsonschema.Schema{Type: "string", Format: "uri", Description: "base URL of the API"})
	props.Set("tokenUrl", &jsonschema.Schema{Type: "string", Format: "uri", Description: "token endpoint (notify only)"})
	props.Set("metrics", &jsonschema.Schema{Type: "string", Format: "uri", Description: "the target's Prometheus metrics endpoint: its memory is sampled during the attack (drift.memory_slope)"})
	props.Set("memoryMetric", &jsonschema.Schema{Type: "string", Pattern: memoryMetricPattern, Default: DefaultMemoryMetric, Description: "the metric read at metrics, the sum of its series"})
	return &jsonschema.Schema{
		Description: "embedded (the built-in simulator) or the addresses of a real service",
		OneOf: []*jsonschema.Schema{
			{Type: "string", Enum: []any{"embedded"}},
			{Type: "object", Properties: props, AdditionalProperties: jsonschema.FalseSchema},
		},
	}
}

// JSONSchema: a count or a list of credentials.
func (Clients) JSONSchema() *jsonschema.Schema {
	r := &jsonschema.Reflector{DoNotReference: true, RequiredFromJSONSchemaTags: true}
	cred := r.ReflectFromType(reflect.TypeFor[Cred]())
	cred.Version = ""
	return &jsonschema.Schema{
		Description: "number of integrations the load is spread across, or a list of their credentials",
		OneOf: []*jsonschema.Schema{
			{Type: "integer", Minimum: "1", Maximum: "10000"},
			{Type: "array", Items: cred},
		},
	}
}
