package scenarios

import (
	"errors"
	"strings"
	"testing"
)

// Expansion stops as soon as the text grows past the 1 MiB bound: 20,000
// ${X} of 1 KB each are not all expanded (and looked up) before the text is
// refused. Before, the bound was checked only on the whole expansion (20 MB).
func TestExpandStopsAtTheBound(t *testing.T) {
	src := "name: a\ndescription: " + strings.Repeat("${X}", 20_000) + "\n"
	value := strings.Repeat("x", 1000)
	lookups := 0
	getenv := func(k string) string { lookups++; return value }
	_, err := Parse("many.yaml", "", []byte(src), getenv)
	if !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), "after ${VAR} expansion: larger than 1048576 bytes") {
		t.Fatalf("got %v", err)
	}
	if max := maxFileSize/len(value) + 2; lookups > max {
		t.Fatalf("%d variables looked up, want at most %d: expansion went on past the bound", lookups, max)
	}
}

// Positions after many substitutions on one line still point at what the
// file holds.
func TestExpandManyOnOneLineKeepsColumns(t *testing.T) {
	src := "name: [" + strings.Repeat("${X}, ", 3000) + "]\nbogus: 1\n"
	_, err := Parse("many.yaml", "", []byte(src), func(string) string { return "é" })
	if err == nil || !strings.Contains(err.Error(), "many.yaml:2:1") {
		t.Fatalf("got %v, want an error at many.yaml:2:1", err)
	}
}

// BenchmarkExpandManyVars: 20,000 ${X} on one line of a 140 KB file took 58 s
// when every substitution counted the line's columns from its start; one
// pass is linear.
func BenchmarkExpandManyVars(b *testing.B) {
	src := []byte("name: a\ndescription: \"" + strings.Repeat("${X} ", 20_000) + "\"\n")
	getenv := func(string) string { return "value" }
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, errs, _ := expand("b.yaml", src, getenv, maxFileSize); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
