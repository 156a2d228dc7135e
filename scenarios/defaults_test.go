package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/parser"
)

// TestDefaultsInSchema: every default of the table is the `default` of its
// property in the committed schema.json, so editors show what the loader does.
func TestDefaultsInSchema(t *testing.T) {
	b, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	defs, _ := root["$defs"].(map[string]any)
	for _, fd := range defaults {
		prop, err := jsonProperty(defs, fd.path)
		if err != nil {
			t.Errorf("%s: %v", fd.path, err)
			continue
		}
		got, ok := prop["default"]
		if !ok {
			t.Errorf("%s: schema.json has no default (want %s)", fd.path, fd.yaml)
			continue
		}
		want, err := fd.json()
		if err != nil {
			t.Fatal(err)
		}
		// compare as JSON: the table's YAML and the schema's JSON read alike
		wb, _ := json.Marshal(want)
		gb, _ := json.Marshal(got)
		if string(wb) != string(gb) {
			t.Errorf("%s: schema.json default %s, the table says %s", fd.path, gb, wb)
		}
	}
}

// jsonProperty walks the generated schema as plain JSON, independently of
// Schema's own walk: from the Scenario definition through properties, items
// and $ref.
func jsonProperty(defs map[string]any, path string) (map[string]any, error) {
	def, _ := defs["Scenario"].(map[string]any)
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		name, each := strings.CutSuffix(seg, "[]")
		props, _ := def["properties"].(map[string]any)
		prop, ok := props[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("no property %s", name)
		}
		if i == len(segs)-1 {
			return prop, nil
		}
		if each {
			prop, _ = prop["items"].(map[string]any)
		}
		if ref, _ := prop["$ref"].(string); ref != "" {
			prop, _ = defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		}
		def = prop
	}
	return nil, fmt.Errorf("empty path")
}

// minimal scenarios that between them meet every condition of the table.
func minimalScenarios(t *testing.T) map[string]*Scenario {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rec.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := map[string]*Scenario{}
	for name, src := range map[string]string{
		"notify":     "api: notify\nload: { rate: 1/s, duration: 1s }\n",
		"messaging":  "api: messaging\nload: { rate: 1/s, duration: 1s }\n",
		"recipients": "api: messaging\nload: { rate: 1/s, duration: 1s }\nmessage: { recipients: { from: \"+79990000000\", to: \"+79990000009\" } }\n",
		"replay":     "api: notify\nload: { profile: replay, file: rec.jsonl }\nidempotency: { probes: 5% }\n",
		"real":       "api: notify\ntarget: { baseUrl: \"http://127.0.0.1:1\", tokenUrl: \"http://127.0.0.1:1/token\" }\nauth: { clientId: a, clientSecret: b }\nload: { rate: 1/s, duration: 1s }\n",
	} {
		s, err := Parse(name+".yaml", dir, []byte(src), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = s
	}
	return out
}

// TestDefaultsParsed: a minimal scenario ends up with the table's values, read
// at the table's paths; where a default's condition does not hold, the field
// stays unset. Every default is met at least once.
func TestDefaultsParsed(t *testing.T) {
	met := map[string]bool{}
	for name, s := range minimalScenarios(t) {
		written := func(p string) bool { _, ok := s.pos[p]; return ok }
		for _, fd := range defaults {
			if written(fd.path) {
				continue // the file's own value (the minimal scenarios write no list item's field)
			}
			applies := fd.when == nil || fd.when(s, written)
			fields := fieldsAt(reflectValue(s), fd.path)
			for _, f := range fields {
				if !applies {
					if !unset(f) {
						t.Errorf("%s: %s = %v, though its default does not apply (%s)", name, fd.path, f.Interface(), fd.applies)
					}
					continue
				}
				met[fd.path] = true
				if want := fd.value(f.Type()); !reflect.DeepEqual(f.Interface(), want.Interface()) {
					t.Errorf("%s: %s = %#v, want the default %#v", name, fd.path, f.Interface(), want.Interface())
				}
			}
		}
	}
	for _, fd := range defaults {
		if !met[fd.path] {
			t.Errorf("%s: no minimal scenario meets its default (%s)", fd.path, fd.applies)
		}
	}
}

// TestDefaultsNotShared: a default list is each scenario's own.
func TestDefaultsNotShared(t *testing.T) {
	ss := minimalScenarios(t)
	a, b := ss["notify"], ss["real"]
	a.Retry.On[0] = "429"
	if b.Retry.On[0] == "429" {
		t.Fatal("two scenarios share the default retry.on")
	}
}

// decodeOnly decodes src without defaults or checks, the way Parse does.
func decodeOnly(t *testing.T, src string) (*Scenario, *checker) {
	t.Helper()
	f, err := parser.ParseBytes([]byte(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	d := newDecoder("t.yaml")
	s := &Scenario{File: "t.yaml"}
	d.decode(f.Docs[0].Body, reflectValue(s), "")
	if len(d.errs) > 0 {
		t.Fatal(d.errs)
	}
	s.pos = d.pos
	return s, &checker{file: "t.yaml", pos: d.pos, bad: d.bad}
}

// TestChecksSetNothing: the checks read a scenario and report; run on
// scenarios the defaults have not filled, they leave every field as it was.
func TestChecksSetNothing(t *testing.T) {
	for _, src := range []string{
		"api: notify\nload: { rate: 1/s, duration: 1s }\nidempotency: { probes: 5% }\n",
		"api: messaging\nload: { rate: 1/s, duration: 1s }\nmessage: { scenario: [{ channel: sms }, { channel: viber }], recipients: { from: \"+79990000000\", to: \"+79990000009\" } }\nretry: { max: 1 }\n",
		"api: notify\nload: { profile: replay }\nclients: [{ clientId: a }, { login: b }]\n",
	} {
		s, c := decodeOnly(t, src)
		derive(s)
		want, _ := decodeOnly(t, src)
		derive(want)
		c.check(s, "")
		if !reflect.DeepEqual(s, want) {
			t.Errorf("the checks changed the scenario:\n%+v\nwant\n%+v", s, want)
		}
		if len(c.errs) == 0 {
			t.Errorf("%q: without defaults the checks found nothing (they should miss e.g. the fill)", src)
		}
	}
}

var defaultsBegin, defaultsEnd = "<!-- defaults: generated from the table in defaults.go by TestDefaultsREADME (go test ./scenarios -run DefaultsREADME -args -update) -->\n", "<!-- end of defaults -->\n"

// defaultsMarkdown is the README's table of defaults.
func defaultsMarkdown() string {
	var b strings.Builder
	b.WriteString(defaultsBegin)
	b.WriteString("| field | default | applies |\n|---|---|---|\n")
	for _, fd := range defaults {
		applies := fd.applies
		if applies == "" {
			applies = "always"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", fd.path, fd.yaml, applies)
	}
	b.WriteString(defaultsEnd)
	return b.String()
}

// TestDefaultsREADME keeps the README's table of defaults the table's.
func TestDefaultsREADME(t *testing.T) {
	const readme = "README.md"
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i, j := strings.Index(text, defaultsBegin), strings.Index(text, defaultsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated defaults section (%q … %q)", readme, defaultsBegin, defaultsEnd)
	}
	got, want := text[i:j+len(defaultsEnd)], defaultsMarkdown()
	if *update && got != want {
		text = text[:i] + want + text[j+len(defaultsEnd):]
		if err := os.WriteFile(readme, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		got = want
	}
	if got != want {
		t.Errorf("%s: the defaults section is out of date: go test ./scenarios -run DefaultsREADME -args -update", readme)
	}
}
