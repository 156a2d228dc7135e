package yamlguard

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

var small = Limits{MaxBytes: 1 << 20, MaxDepth: 8, MaxNodes: 50}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name      string
		src       string
		err       error // nil: passes
		line, col int
	}{
		// what a real file looks like passes
		{"mapping", "api: notify\nload: { rate: 1/s, requests: 3 }\nmessage:\n  text: \"load {{.Seq}}\"\n", nil, 0, 0},
		// brackets inside quoted, plain and block scalars and comments are text, not nesting
		{"brackets in text", "a: '[[[[[[[[[['\nb: \"{{{{{{{{{{\\\"[[[[\"\nc: x[[[[[[[[[[[\nd: |\n  [[[[[[[[[[[[\n  {{{{{{{{{{{{\ne: 1 # [[[[[[[[[[[[[\n", nil, 0, 0},
		// a quoted scalar over several lines keeps its brackets as text
		{"multi-line quote", "a: \"one [[[[[\n  [[[[[[[[[ two\"\nb: 'it''s [[[[[[[[[\n [[[[[[['\n", nil, 0, 0},
		// a plain scalar continued on the next line, starting with [
		{"plain continuation", "a: one\n  [[[[[[[[[[ two\nb: 1\n", nil, 0, 0},
		// nested flow sequences: the document is level 1, refused at the eighth [
		{"flow nesting", strings.Repeat("[", 20) + strings.Repeat("]", 20), errTooDeep, 1, 8},
		// flow mappings count too, after a key
		{"flow mapping nesting", "a: " + strings.Repeat("{b: ", 20), errTooDeep, 1, 32},
		// block mappings by indentation: level 9 is the ninth line
		{"block nesting", func() string {
			var b strings.Builder
			for i := range 20 {
				b.WriteString(strings.Repeat(" ", i) + "a:\n")
			}
			return b.String()
		}(), errTooDeep, 9, 9},
		// compact sequences nest on one line
		{"compact sequences", strings.Repeat("- ", 20) + "x\n", errTooDeep, 1, 17},
		// block and flow add up
		{"block then flow", "a:\n  b:\n    c: [[[[[[[[[[]]]]]]]]]]\n", errTooDeep, 3, 13},
		// nodes: a flat list of 60 entries
		{"many nodes", "[" + strings.Repeat("1,", 60) + "1]", errTooManyNodes, 1, 51},
		// a block scalar ends where the indentation comes back: nesting after it counts
		{"after block scalar", "a: |\n  text\nb: " + strings.Repeat("[", 10), errTooDeep, 3, 11},
		// positions count runes
		{"rune columns", "é: " + strings.Repeat("[", 10), errTooDeep, 1, 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check([]byte(tc.src), small)
			if tc.err == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, tc.err) {
				t.Fatalf("got %v, want %v", err, tc.err)
			}
			if err.Line != tc.line || err.Col != tc.col {
				t.Fatalf("at %d:%d, want %d:%d (%v)", err.Line, err.Col, tc.line, tc.col, err)
			}
		})
	}
}

// The file of issue 13: 40 KB of nested flow sequences is refused at once,
// where the parser took 670 MB.
func TestCheckNestedFlowFast(t *testing.T) {
	src := []byte(strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000))
	start := time.Now()
	err := Check(src, Default)
	if !errors.Is(err, errTooDeep) || err.Line != 1 || err.Col != Default.MaxDepth {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v", d)
	}
	// a megabyte of it is read to its end only when nothing refuses it
	big := []byte(strings.Repeat("a: [1, 2]\n", 100_000))
	if err := Check(big, Limits{MaxBytes: 1 << 20, MaxDepth: 64}); err != nil {
		t.Fatal(err)
	}
	if err := Check(append(big, make([]byte, 1<<20)...), Default); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
}

// endless is /dev/zero.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += int64(len(p))
	return len(p), nil
}

// Read stops one byte past the bound, whatever the source.
func TestReadStopsAtBound(t *testing.T) {
	r := &endless{}
	_, err := read(r, 1000)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
	if r.n > 1000+512 {
		t.Fatalf("read %d bytes", r.n)
	}
	b, err := read(io.LimitReader(r, 1000), 1000)
	if err != nil || len(b) != 1000 {
		t.Fatalf("exactly the bound: %d bytes, %v", len(b), err)
	}
}

// The first bad byte of each line, in rune columns.
func TestInvalidUTF8(t *testing.T) {
	got := InvalidUTF8([]byte("ok: é\nname: é\xff\xfe\n\nx: \xc3\n"), 10)
	want := []Pos{{2, 8}, {4, 4}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %v, want %v", got, want)
	}
	if InvalidUTF8([]byte("é: ü\n"), 10) != nil {
		t.Fatal("valid text refused")
	}
	if n := len(InvalidUTF8([]byte("\xff\n\xff\n\xff\n"), 2)); n != 2 {
		t.Fatalf("%d places, want at most 2", n)
	}
}
