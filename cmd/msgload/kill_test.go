package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// processArgsEnv carries the arguments of msgload to TestMsgloadProcess.
const processArgsEnv = "MSGLOAD_TEST_PROCESS_ARGS"

// TestMsgloadProcess is not a test: it is the msgload process that
// TestKilledRunKeepsWhatItSent starts (this test binary, run again) and kills.
func TestMsgloadProcess(t *testing.T) {
	js := os.Getenv(processArgsEnv)
	if js == "" {
		t.Skip("the msgload process of TestKilledRunKeepsWhatItSent")
	}
	var args []string
	if err := json.Unmarshal([]byte(js), &args); err != nil {
		t.Fatal(err)
	}
	os.Args = append([]string{"msgload"}, args...)
	main() // exits
}

// TestKilledRunKeepsWhatItSent: a msgload run killed mid-attack — SIGKILL, or
// SIGTERM and SIGKILL soon after, as a pod is stopped — keeps in
// attempts.jsonl every send the process had counted (its own metrics,
// scraped) a second and a half before the kill, and in results.bin the
// results in time order; msgload report of its directory is then incomplete
// (run.json has no end), never pass. What was sent is what the process said
// it sent, so a machine that does not keep up changes the counts, not the
// outcome.
func TestKilledRunKeepsWhatItSent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs msgload in a subprocess for some seconds")
	}
	// Webhooks come late (median 20 s), so after SIGTERM the run is still
	// waiting for them when it is killed.
	scen := writeScenario(t, `name: killed
api: notify
target: embedded
load: { rate: 20/s, duration: 2m }
limit: { rate: 100000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x" }
delivery: { grace: 30s }
sim: { rateLimit: { rate: 100000/1m }, notifyDelay: { median: 20s, p95: 40s } }
`)
	for _, term := range []bool{false, true} {
		name := "SIGKILL"
		if term {
			name = "SIGTERM then SIGKILL"
		}
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			p := startMsgload(t, "run", "--out", out, "--metrics-addr", "127.0.0.1:0", scen)
			sent := p.waitSends(t, 20)
			if term {
				if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(1500 * time.Millisecond)
			p.kill(t)

			dirs, _ := filepath.Glob(filepath.Join(out, "*", rundir.MetaFile))
			if len(dirs) != 1 {
				t.Fatalf("run directories: %v\nstderr:\n%s", dirs, p.stderr())
			}
			dir := filepath.Dir(dirs[0])
			sends := 0
			err := rundir.ReadJSONL(filepath.Join(dir, rundir.AttemptsFile), func(a rundir.Attempt) error {
				if a.Op == "send" {
					sends++
				}
				return nil
			}, func(line int, err error) { t.Errorf("attempts.jsonl line %d: %v", line, err) })
			if err != nil || float64(sends) < sent {
				t.Errorf("attempts.jsonl holds %d sends (%v); the process had counted %v of them 1.5 s before it was killed", sends, err, sent)
			}
			if n := countResults(t, filepath.Join(dir, rundir.ResultsFile)); float64(n) < sent {
				t.Errorf("results.bin holds %d results; the process had counted %v sends 1.5 s before it was killed", n, sent)
			}

			code, _, stderr := runProgram(t, nil, nil, "report", "--quiet", dir)
			var s reports.Summary
			b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
			if err == nil {
				err = json.Unmarshal(b, &s)
			}
			if err != nil || s.Verdict != reports.VerdictIncomplete || code != exitIncomplete {
				t.Errorf("msgload report of the killed run: exit %d, verdict %q %q (%v), want incomplete\n%s", code, s.Verdict, s.VerdictReasons, err, stderr)
			}
		})
	}
}

// msgloadProcess is msgload running in a subprocess.
type msgloadProcess struct {
	cmd     *exec.Cmd
	metrics chan string // the /metrics URL, once it said it
	done    chan struct{}
	mu      sync.Mutex
	errText strings.Builder
}

// startMsgload runs msgload with args in a subprocess (this test binary, as
// TestMsgloadProcess), killed at the test's end if still running.
func startMsgload(t *testing.T, args ...string) *msgloadProcess {
	t.Helper()
	js, _ := json.Marshal(args)
	p := &msgloadProcess{metrics: make(chan string, 1), done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestMsgloadProcess$")
	p.cmd.Env = append(os.Environ(), processArgsEnv+"="+string(js))
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.readStderr(stderr)
	t.Cleanup(func() { p.kill(t) })
	return p
}

// readStderr keeps what the process says and hands on its metrics address.
func (p *msgloadProcess) readStderr(r io.Reader) {
	defer close(p.done)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		p.errText.WriteString(line + "\n")
		p.mu.Unlock()
		if u, ok := strings.CutPrefix(line, "metrics: "); ok {
			select {
			case p.metrics <- strings.TrimSpace(u):
			default:
			}
		}
	}
}

func (p *msgloadProcess) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errText.String()
}

// kill sends SIGKILL and waits for the process to end.
func (p *msgloadProcess) kill(t *testing.T) {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	<-p.done
}

// waitSends waits until the process's metrics count at least n sends and
// returns the count it scraped.
func (p *msgloadProcess) waitSends(t *testing.T, n float64) float64 {
	t.Helper()
	var url string
	select {
	case url = <-p.metrics:
	case <-p.done:
		t.Fatalf("msgload ended before serving its metrics:\n%s", p.stderr())
	case <-time.After(time.Minute):
		t.Fatalf("msgload did not serve its metrics in a minute:\n%s", p.stderr())
	}
	deadline := time.Now().Add(time.Minute)
	for {
		sent, err := scrapeSends(url)
		if err == nil && sent >= n {
			return sent
		}
		if time.Now().After(deadline) {
			t.Fatalf("msgload counted %v sends in a minute (%v), want %v:\n%s", sent, err, n, p.stderr())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// scrapeSends is the sum of msgload_requests_total{operation="send"}.
func scrapeSends(url string) (float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "msgload_requests_total{") || !strings.Contains(line, `operation="send"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// countResults counts the results of a results.bin in time order, up to its
// end or a record cut short by the kill.
func countResults(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := vegeta.NewDecoder(bufio.NewReader(f))
	var prev time.Time
	n := 0
	for ; ; n++ {
		var r vegeta.Result
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return n
		}
		if err != nil {
			t.Fatalf("results.bin result %d: %v", n, err)
		}
		if r.Timestamp.Before(prev) {
			t.Fatalf("results.bin result %d sent %v, before the one above it (%v)", n, r.Timestamp, prev)
		}
		prev = r.Timestamp
	}
}
