package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSummarySchema compiles the shipped summary.schema.json.
func compileSummarySchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SummarySchemaJSON))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SummarySchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(SummarySchemaID)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// TestSummarySchemaShipped: the shipped summary.schema.json is what the Go
// types generate (-update rewrites it), it is valid JSON Schema, and it
// refuses a summary with a field renamed.
func TestSummarySchemaShipped(t *testing.T) {
	want, err := SummarySchema()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("summary.schema.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(want, SummarySchemaJSON) {
		t.Fatal("reports/summary.schema.json is not what the Go types generate: run go test ./reports -run TestSummarySchemaShipped -update")
	}
	sch := compileSummarySchema(t)
	var s map[string]any
	b, err := os.ReadFile("testdata/golden/summary.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	s["verdict_reason"] = s["verdict_reasons"] // a renamed field
	delete(s, "verdict_reasons")
	if sch.Validate(s) == nil {
		t.Error("the schema accepts a summary.json whose verdict_reasons was renamed")
	}
}
