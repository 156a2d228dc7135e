package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// scaleFor is how much each built-in is shortened so the whole library runs in
// a test: windows, durations and delays shrink together, so the counts per
// window (and so the 429 behaviour) stay what the full-length scenario has.
var scaleFor = map[string]float64{
	"smoke":                   1,
	"messaging-failover":      0.2,
	"messaging-poll":          0.2,
	"notify-exceed-limit":     0.25,
	"notify-idempotent-retry": 0.1,
	"notify-respect-limit":    0.25,
	"soak":                    0.02,
}

// minTestGrace is the least grace period a scaled built-in waits. Scale
// shrinks the grace with the delays the simulator draws, but not the time a
// busy machine adds to every answer and callback: the soak at 0.02 waits
// 1.2 s, and on a loaded CI machine (request p99 1.31 s, the attacker 1.84 s
// behind) one message's callback missed it — FAIL on delivery.lost, the
// truth agreeing, in two CI runs of about forty (26 and 27 November). The
// wait ends as soon as every callback is in, so a longer one costs a green
// run nothing, and a message still lost after it is lost.
const minTestGrace = 10 * time.Second

// floorGrace raises the grace period of s and of its parts to at least min.
func floorGrace(s *scenarios.Scenario, min time.Duration) {
	if s.Delivery.Grace.D < min {
		s.Delivery.Grace.D = min
	}
	for i := range s.Parts {
		floorGrace(&s.Parts[i], min)
	}
}

// TestBuiltinsRunGreen runs every built-in scenario against the embedded
// simulator and sink and requires every threshold to hold, every report file
// to exist, and no secret to reach the run directory.
func TestBuiltinsRunGreen(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every built-in scenario (about a minute)")
	}
	for _, name := range scenarios.Builtins() {
		t.Run(name, func(t *testing.T) {
			f, ok := scaleFor[name]
			if !ok {
				t.Fatalf("built-in %q has no scale in this test: add one", name)
			}
			s, err := scenarios.Load(name, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			s.Scale(f)
			floorGrace(s, minTestGrace)
			out := t.TempDir()
			var stdout, stderr bytes.Buffer
			res, err := Run(context.Background(), Options{Scenario: s, Out: out, Stdout: &stdout, Stderr: &stderr, Version: "test"})
			if err != nil {
				t.Fatalf("Run: %v\n%s", err, stderr.String())
			}
			for _, p := range res.Parts {
				if p.Err != nil {
					t.Errorf("part %s: %v", p.Name, p.Err)
					continue
				}
				var term bytes.Buffer
				render.Terminal(&term, p.Summary)
				if planNotHeld(p.Summary) {
					t.Logf("part %s: the machine could not hold the plan, and the verdict says so:\n%s", p.Name, term.String())
				} else if !p.Summary.OK() {
					t.Errorf("part %s: a threshold failed:\n%s\nstderr:\n%s", p.Name, term.String(), stderr.String())
				}
				for _, f := range []string{rundir.ScenarioFile, rundir.MetaFile, rundir.ResultsFile, rundir.AttemptsFile,
					rundir.EventsFile, rundir.TruthStreamFile, rundir.SummaryFile, rundir.HTMLFile, rundir.MarkdownFile, rundir.JUnitFile} {
					if fi, err := os.Stat(filepath.Join(p.Dir, f)); err != nil || fi.Size() == 0 {
						t.Errorf("part %s: %s missing or empty", p.Name, f)
					}
				}
				var meta rundir.Meta
				b, err := os.ReadFile(filepath.Join(p.Dir, rundir.MetaFile))
				if err != nil || json.Unmarshal(b, &meta) != nil {
					t.Fatalf("part %s: run.json unreadable: %v", p.Name, err)
				}
				if meta.Start.IsZero() || meta.AttackEnd.Before(meta.Start) || meta.End.Before(meta.AttackEnd) {
					t.Errorf("part %s: run.json times out of order: start %v attack end %v end %v", p.Name, meta.Start, meta.AttackEnd, meta.End)
				}
			}
			if res.Interrupted || res.Aborted {
				t.Errorf("run marked interrupted (%v) or aborted (%v) without a signal", res.Interrupted, res.Aborted)
			}
			if len(res.Parts) > 1 {
				// The whole run at the top: its verdict, each part's, one junit suite per part.
				for _, f := range []string{rundir.SummaryFile, rundir.HTMLFile, rundir.MarkdownFile, rundir.JUnitFile} {
					if fi, err := os.Stat(filepath.Join(res.Dir, f)); err != nil || fi.Size() == 0 {
						t.Errorf("whole run: %s missing or empty", f)
					}
				}
				w, err := reports.ReadSummary(filepath.Join(res.Dir, rundir.SummaryFile))
				if err != nil || w.Kind != reports.KindRun || w.Verdict != res.Verdict() || len(w.Whole.Parts) != len(res.Parts) {
					t.Errorf("whole run summary.json: %+v, %v; want kind run, verdict %s, %d parts", w, err, res.Verdict(), len(res.Parts))
				}
				if res.Whole == nil || !strings.HasPrefix(res.Whole.Line(res.Dir), s.Name+": PASS (") {
					t.Errorf("whole run: %+v", res.Whole)
				}
			}
		})
	}
}

// TestNoSecretInRunDirectory runs both APIs with secrets that appear nowhere
// else and scans every file the run wrote for them, for the Basic auth header
// value and for a JWT.
func TestNoSecretInRunDirectory(t *testing.T) {
	const msgSecret, notifySecret = "pw-Zq81-messaging-secret", "cs-Kx55-notify-secret"
	env := map[string]string{"MSG_PASSWORD": msgSecret, "NOTIFY_SECRET": notifySecret}
	src := `name: secrets
target: embedded
parts:
  - name: n
    api: notify
    auth: { clientId: acme, clientSecret: "${NOTIFY_SECRET}" }
    clients: 2
    load: { rate: 20/s, requests: 20 }
    limit: { rate: 100/1m, mode: respect }
    message: { recipient: "+7999{0000000-0000999}", text: "hello {{.Seq}}" }
    idempotency: { probes: 20% }
    delivery: { grace: 10s }
    thresholds: [ "delivery.lost == 0" ]
  - name: m
    api: messaging
    auth: { login: acme-login, password: "${MSG_PASSWORD}" }
    load: { rate: 20/s, requests: 20 }
    message:
      recipient: "+7999{0000000-0000999}"
      text: "hello {{.Seq}}"
      scenario: [ { channel: sms, sender: acme } ]
    delivery: { grace: 10s }
    thresholds: [ "delivery.lost == 0" ]
`
	s, err := scenarios.Parse("secrets.yaml", t.TempDir(), []byte(src), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	res, err := Run(context.Background(), Options{Scenario: s, Out: out, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() {
		for _, p := range res.Parts {
			if p.Err != nil {
				t.Errorf("part %s: %v", p.Name, p.Err)
			} else if !p.Summary.OK() && !planNotHeld(p.Summary) {
				var b bytes.Buffer
				render.Terminal(&b, p.Summary)
				t.Errorf("part %s failed:\n%s", p.Name, b.String())
			}
		}
		t.Fatalf("run did not pass; stderr:\n%s", stderr.String())
	}
	basic := "YWNtZS1sb2dpbjpwdy1acTgxLW1lc3NhZ2luZy1zZWNyZXQ" // base64("acme-login:pw-Zq81-messaging-secret") without padding
	forbidden := []string{msgSecret, notifySecret, basic, "eyJhbGciOi", "Bearer ", "Basic "}
	files := 0
	err = filepath.WalkDir(res.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, f := range forbidden {
			if bytes.Contains(b, []byte(f)) {
				t.Errorf("%s contains %q", strings.TrimPrefix(path, out), f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("scanned only %d files; the run directory is incomplete", files)
	}
	for _, f := range forbidden[:3] {
		if strings.Contains(stdout.String()+stderr.String(), f) {
			t.Errorf("output shows a secret %q", f)
		}
	}
}

// TestInterruptKeepsWhatWasCollected interrupts a run once: sends stop, the
// grace period is still waited, reports are written and the run says it was
// interrupted. Interrupting twice skips the reports but keeps the raw files.
func TestInterruptKeepsWhatWasCollected(t *testing.T) {
	for _, twice := range []bool{false, true} {
		name := "once"
		if twice {
			name = "twice"
		}
		t.Run(name, func(t *testing.T) {
			src := `name: long
api: notify
target: embedded
clients: 2
load: { rate: 20/s, duration: 10m }
limit: { rate: 1000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x" }
delivery: { grace: 30s }
sim: { rateLimit: { rate: 1000/1m } }
thresholds: [ "delivery.lost == 0" ]
`
			s, err := scenarios.Parse("long.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			sig := make(chan os.Signal, 2)
			go func() {
				time.Sleep(1500 * time.Millisecond)
				sig <- os.Interrupt
				if twice {
					sig <- os.Interrupt
				}
			}()
			var stderr bytes.Buffer
			start := time.Now()
			res, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr, Signals: sig})
			if err != nil {
				t.Fatal(err)
			}
			if time.Since(start) > 2*time.Minute {
				t.Fatalf("run of 10 minutes did not stop on interrupt")
			}
			if !res.Interrupted {
				t.Error("Result.Interrupted is false after an interrupt")
			}
			if res.Aborted != twice {
				t.Errorf("Result.Aborted = %v, want %v", res.Aborted, twice)
			}
			p := res.Parts[0]
			var meta rundir.Meta
			b, _ := os.ReadFile(filepath.Join(p.Dir, rundir.MetaFile))
			if err := json.Unmarshal(b, &meta); err != nil || !meta.Interrupted || meta.End.IsZero() {
				t.Errorf("run.json: interrupted %v end %v (err %v, part err %v); want both set", meta.Interrupted, meta.End, err, p.Err)
			}
			attempts := 0
			err = rundir.ReadJSONL(filepath.Join(p.Dir, rundir.AttemptsFile), func(rundir.Attempt) error { attempts++; return nil },
				func(line int, err error) { t.Errorf("attempts.jsonl line %d: %v", line, err) })
			if err != nil || attempts == 0 {
				t.Fatalf("attempts.jsonl: %d records (err %v); what was sent must be kept", attempts, err)
			}
			_, serr := os.Stat(filepath.Join(p.Dir, rundir.SummaryFile))
			if twice && serr == nil {
				t.Error("summary.json written after a second interrupt; want the run to stop at once")
			}
			if !twice {
				if serr != nil || p.Summary == nil {
					t.Fatalf("no summary after one interrupt: %v %v", serr, p.Err)
				}
				if lost := p.Summary.Delivery.Lost; lost != 0 {
					t.Errorf("%d messages lost although the grace period was waited", lost)
				}
				// Its threshold held, yet an interrupted run is never a pass.
				if p.Summary.Verdict != reports.VerdictIncomplete || p.Summary.OK() {
					t.Errorf("summary verdict %q (ok %v), want incomplete: %q", p.Summary.Verdict, p.Summary.OK(), p.Summary.VerdictReasons)
				}
			}
			if v := res.Verdict(); v != reports.VerdictIncomplete || res.OK() {
				t.Errorf("Result.Verdict() = %q, want incomplete", v)
			}
		})
	}
}
