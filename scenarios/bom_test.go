package scenarios

import (
	"testing"
)

// A UTF-8 byte order mark at the start of a scenario file is dropped: it gave
// "\ufeffname: unknown field".
func TestParseDropsBOM(t *testing.T) {
	name := Builtins()[0]
	src, ok := builtinSource(name)
	if !ok {
		t.Fatal("no built-in", name)
	}
	if _, err := Parse(name+".yaml", "", append([]byte("\ufeff"), src...), env(nil)); err != nil {
		t.Fatalf("with a BOM: %v", err)
	}
}
