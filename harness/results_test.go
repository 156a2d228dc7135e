package harness

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// TestResultsBinVegetaTools: results.bin of a run with retries (a third of the
// answers are 503, retried after a backoff, so results finish far out of send
// order) is in time order, and `vegeta plot` and `vegeta report` accept it;
// the run's junit.xml validates against the strict JUnit XSD.
func TestResultsBinVegetaTools(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of a few seconds and go tool vegeta")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	src := `
name: retries
api: messaging
target: embedded
sink: embedded
load: { profile: constant, rate: 40/s, requests: 80 }
message:
  recipient: "+7999{0000000-0000999}"
  text: "retry {{.Seq}}"
  scenario: [ { channel: sms, sender: msgload } ]
retry: { on: [503], max: 4, backoff: 150ms }
delivery: { via: sink, grace: 10s }
sim:
  seed: 5
  faults: { error503: 33% }
  profiles: { sms: { median: 50ms, p95: 100ms, outcomes: { DELIVERED: 100% } } }
thresholds: [ "idempotency.retries > 10" ]
`
	p, stderr := runSource(t, "retries.yaml", t.TempDir(), src)
	requireGreen(t, p, stderr)
	bin := filepath.Join(p.Dir, rundir.ResultsFile)

	// In time order, numbered in that order, one result per attempt.
	f, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	dec := vegeta.NewDecoder(f)
	var prev time.Time
	n := 0
	for ; ; n++ {
		var r vegeta.Result
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if r.Seq != uint64(n) || r.Timestamp.Before(prev) {
			t.Fatalf("result %d: seq %d at %v after %v: not in time order", n, r.Seq, r.Timestamp, prev)
		}
		prev = r.Timestamp
	}
	f.Close()
	if int64(n) != p.Summary.Requests.Total {
		t.Errorf("%d results, %d requests", n, p.Summary.Requests.Total)
	}

	run := func(args ...string) string {
		cmd := exec.Command(goBin, append([]string{"tool", "vegeta"}, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("go tool vegeta %s: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.String()
	}
	if html := run("plot", bin); !strings.Contains(html, "<html") || !strings.Contains(html, "retries") {
		t.Errorf("vegeta plot wrote no plot:\n%.500s", html)
	}
	if rep := run("report", bin); !strings.Contains(rep, "Status Codes") || !strings.Contains(rep, "503:") {
		t.Errorf("vegeta report:\n%s", rep)
	}

	// junit.xml of a real run: the strict JUnit XSD (xmllint; required in CI).
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xmllint is required when CI=true (apt-get install libxml2-utils)")
		}
		t.Skip("no xmllint")
	}
	xsd, _ := filepath.Abs("../reports/testdata/junit/junit-strict.xsd")
	if out, err := exec.Command(xmllint, "--noout", "--schema", xsd, filepath.Join(p.Dir, rundir.JUnitFile)).CombinedOutput(); err != nil {
		t.Errorf("junit.xml of the run: %v\n%s", err, out)
	}
	if host, _ := os.Hostname(); p.Summary.Run.Host != host {
		t.Errorf("run.host %q, want this machine's %q", p.Summary.Run.Host, host)
	}
}
