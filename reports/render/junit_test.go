package render

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// JUnitXSD is the strict JUnit schema junit.xml must satisfy.
const junitXSD = "../testdata/junit/junit-strict.xsd"

// ValidateJUnit checks a junit.xml file against the strict JUnit XSD with
// xmllint (Debian libxml2-utils). Without xmllint the test is skipped, unless
// CI=true, where .ci/run installs it.
func validateJUnit(t *testing.T, path string) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xmllint is required when CI=true (apt-get install libxml2-utils)")
		}
		t.Skip("no xmllint (apt-get install libxml2-utils)")
	}
	xsd, err := filepath.Abs(junitXSD)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(xmllint, "--noout", "--schema", xsd, path).CombinedOutput()
	if err != nil {
		b, _ := os.ReadFile(path)
		t.Errorf("%s is not valid JUnit: %v\n%s\n%s", path, err, out, b)
	}
}

// TestJUnitValidates: junit.xml of every verdict, of thresholds failing and
// without data, of a run with and without host, validates against the strict
// JUnit XSD; and the XSD refuses what msgload used to write.
func TestJUnitValidates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *run)
		want   []string
	}{
		{"pass", func(*run) {}, []string{`failures="0" errors="0"`, `time="70"`, `hostname="localhost"`}},
		{"fail and no data", func(r *run) {
			r.meta.Thresholds = []string{"delivery.lost == 1", "delivery.by_channel[\"viber\"].p95 < 1s", "requests.total > 0"}
		}, []string{`failures="3"`, `type="no data"`}},
		{"incomplete", func(r *run) { r.meta.Interrupted = true; r.meta.Target = "embedded" }, []string{`type="incomplete"`}},
		{"error", func(r *run) { r.meta.Target = "embedded" }, []string{`<error message="ERROR`, `errors="1"`}}, // no truth.json
		{"host and a start with nanoseconds", func(r *run) {
			r.meta.Host = "ci-runner-7"
			r.meta.Start = r.meta.Start.Add(123456789 * time.Nanosecond)
			r.meta.End = r.meta.Start.Add(90*time.Second + 1500*time.Microsecond)
		}, []string{`hostname="ci-runner-7"`, `timestamp="2026-11-23T02:00:00"`, `time="90.002"`, `name="run.start" value="2026-11-23T02:00:00.123456789Z"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := passingRun()
			tc.change(r)
			dir := r.write(t)
			if _, err := Build(dir); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, rundir.JUnitFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("junit.xml lacks %s:\n%s", w, b)
				}
			}
			validateJUnit(t, path)
		})
	}
	t.Run("the schema refuses the old junit.xml", func(t *testing.T) {
		if _, err := exec.LookPath("xmllint"); err != nil {
			t.Skip("no xmllint")
		}
		old := filepath.Join(t.TempDir(), "old.xml")
		os.WriteFile(old, []byte(`<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="msgload r" tests="1" failures="0" errors="0">
  <testsuite name="msgload thresholds: s" tests="1" failures="0" errors="0" timestamp="2026-11-23T02:00:00.123456789Z">
    <testcase name="msgload verdict: PASS" classname="msgload.s"></testcase>
  </testsuite>
</testsuites>
`), 0o644)
		xsd, _ := filepath.Abs(junitXSD)
		if out, err := exec.Command("xmllint", "--noout", "--schema", xsd, old).CombinedOutput(); err == nil {
			t.Errorf("the XSD accepts the old junit.xml:\n%s", out)
		}
	})
}

// TestJUnitThresholdCasesCarryValueLimitTime: every threshold case, passing or
// not, takes the run's time, and its value and limit (with units) are in the
// suite's properties; one rule names the suite of a single run and of a part
// (junitSuiteName), in the part's own junit.xml and in the whole run's.
func TestJUnitThresholdCasesCarryValueLimitTime(t *testing.T) {
	type prop struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	type tcase struct {
		Name string `xml:"name,attr"`
		Time string `xml:"time,attr"`
	}
	type suite struct {
		Name  string  `xml:"name,attr"`
		Time  string  `xml:"time,attr"`
		Props []prop  `xml:"properties>property"`
		Cases []tcase `xml:"testcase"`
	}
	read := func(t *testing.T, path string) []suite {
		t.Helper()
		validateJUnit(t, path)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Suites []suite `xml:"testsuite"`
		}
		if err := xml.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Suites
	}
	check := func(t *testing.T, s suite, wantName string, limits map[string]string) {
		t.Helper()
		if s.Name != wantName {
			t.Errorf("suite %q, want %q", s.Name, wantName)
		}
		props := map[string]string{}
		for _, p := range s.Props {
			props[p.Name] = p.Value
		}
		n := 0
		for _, c := range s.Cases[1:] { // after the verdict's case
			n++
			key := "threshold." + strconv.Itoa(n) + "."
			if c.Time != s.Time || c.Time == "0" {
				t.Errorf("case %q: time %q, the run's is %q", c.Name, c.Time, s.Time)
			}
			if props[key+"expr"] != c.Name || props[key+"value"] == "" || props[key+"limit"] != limits[c.Name] {
				t.Errorf("case %q: properties expr %q value %q limit %q, want limit %q", c.Name, props[key+"expr"], props[key+"value"], props[key+"limit"], limits[c.Name])
			}
		}
		if n != len(limits) {
			t.Errorf("%d threshold cases, want %d", n, len(limits))
		}
	}
	limits := map[string]string{"requests.latency.p95 < 5ms": "5 ms", "delivery.lost == 0": "0"}
	dir := cardRun().write(t)
	if _, err := Build(dir); err != nil {
		t.Fatal(err)
	}
	single := read(t, filepath.Join(dir, rundir.JUnitFile))
	check(t, single[0], junitSuiteName("hand-built", ""), limits)
	if single[0].Name != "msgload hand-built" {
		t.Errorf("a single run's suite %q", single[0].Name)
	}
	whole := multiPartRun(t)
	suites := read(t, filepath.Join(whole, rundir.JUnitFile))
	if len(suites) != 2 {
		t.Fatalf("%d suites for 2 parts", len(suites))
	}
	for _, s := range suites {
		part := strings.TrimPrefix(s.Name, "msgload hand-built / ")
		want := map[string]string{"delivery.lost == 0": "0"}
		if part == "latency-part" {
			want = limits
		}
		check(t, s, junitSuiteName("hand-built", part), want)
	}
}
