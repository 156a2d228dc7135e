package reports

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// JUnitXSD is the strict JUnit schema junit.xml must satisfy.
const junitXSD = "testdata/junit/junit-strict.xsd"

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
