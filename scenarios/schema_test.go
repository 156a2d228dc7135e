package scenarios

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite scenarios/schema.json from the Go types")

// TestSchemaUpToDate regenerates the JSON Schema and compares it with the
// committed file; run `go test ./scenarios -run Schema -args -update` after changing a type.
func TestSchemaUpToDate(t *testing.T) {
	got, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("schema.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("scenarios/schema.json is out of date with the Go types: run go test ./scenarios -run Schema -args -update")
	}
}

// TestSchemaCoversFields checks that every top-level field the decoder accepts
// is a property of the schema and that unknown fields are refused there too.
func TestSchemaCoversFields(t *testing.T) {
	b, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Ref  string `json:"$ref"`
		Defs map[string]struct {
			Properties           map[string]json.RawMessage `json:"properties"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	def, ok := s.Defs["Scenario"]
	if !ok {
		t.Fatalf("no Scenario definition; $ref %q", s.Ref)
	}
	for name := range fieldIndex(reflectValue(&Scenario{}).Type()) {
		if _, ok := def.Properties[name]; !ok {
			t.Errorf("field %q missing from the schema", name)
		}
	}
	if def.AdditionalProperties == nil || *def.AdditionalProperties {
		t.Error("the schema allows unknown top-level fields")
	}
	for _, name := range []string{"LoadSpec", "Message", "Item", "Sim"} {
		if d := s.Defs[name]; d.AdditionalProperties == nil || *d.AdditionalProperties {
			t.Errorf("%s: the schema allows unknown fields", name)
		}
	}
}
