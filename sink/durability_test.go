package sink

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// childEnv switches the test binary into a standalone sink (TestMain), so the
// durability test can SIGKILL a real process without building anything else.
const childEnv = "MSGLOAD_SINK_TEST_CHILD_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(runChild(dir))
	}
	os.Exit(m.Run())
}

func runChild(dir string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err := Serve(ctx, ServerConfig{Addr: "127.0.0.1:0", Dir: dir, Ready: func(addr string) {
		fmt.Printf("ADDR %s\n", addr)
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child sink:", err)
		return 1
	}
	return 0
}

type child struct {
	cmd  *exec.Cmd
	addr string
}

func startChild(t *testing.T, dir string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ADDR ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child sink did not start: %q %v", line, err)
	}
	go io.Copy(io.Discard, out)
	return &child{cmd: cmd, addr: strings.TrimSpace(strings.TrimPrefix(line, "ADDR "))}
}

// TestDurabilitySIGKILL posts callbacks from many goroutines to a sink in a child
// process, kills it with SIGKILL at a random moment, restarts it on the same data
// directory, and checks that every call answered 2xx is in the log.
func TestDurabilitySIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	killCycles(t, 1)
}

// soakEnv asks for the durability soak: that many SIGKILL cycles.
const soakEnv = "MSGLOAD_SINK_SOAK"

// TestDurabilitySoak is TestDurabilitySIGKILL repeated: MSGLOAD_SINK_SOAK
// cycles of start, 16 writers, SIGKILL at a random moment, on one data
// directory; then every call answered 2xx in any cycle must be in the log.
//
//	MSGLOAD_SINK_SOAK=100 go test ./sink/ -run TestDurabilitySoak -v -timeout 30m
func TestDurabilitySoak(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(soakEnv))
	if n <= 0 {
		t.Skip("set " + soakEnv + "=<cycles> to run the durability soak")
	}
	killCycles(t, n)
}

// killCycles runs cycles of: start a sink in a child process on one data
// directory, post from 16 goroutines, SIGKILL it 100–400 ms in; then a last
// start that must take calls and exit 0 on SIGTERM; then every call answered
// 200 must be in the log, with at most one cut line per kill.
func killCycles(t *testing.T, cycles int) {
	dir := t.TempDir()
	began := time.Now()
	var acked sync.Map // txId → true, answered 200
	var seq atomic.Int64
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func(addr string) (bool, error) {
		tx := txID(int(seq.Add(1)))
		resp, err := client.Post("http://"+addr+"/callback", "application/json", strings.NewReader(status(tx, "DELIVERED", "sms", nil)))
		if err != nil {
			return false, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			acked.Store(tx, true)
			return true, nil
		}
		return false, nil
	}

	var okBefore atomic.Int64
	for cycle := range cycles {
		c := startChild(t, dir)
		var wg sync.WaitGroup
		var okThis atomic.Int64
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 2000; i++ { // bounded; the kill comes first
					ok, err := post(c.addr)
					if err != nil {
						return
					}
					if ok {
						okThis.Add(1)
					}
				}
			}()
		}
		// The kill comes 100–400 ms after the first acknowledgement, not after
		// the start: on a busy machine the child may take longer than that to
		// answer at all, and a kill before any call was taken tests nothing.
		var ended atomic.Bool // every writer gave up (the child died): no wait
		go func() { wg.Wait(); ended.Store(true) }()
		for okThis.Load() == 0 && !ended.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(100+rand.IntN(300)) * time.Millisecond)
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		c.cmd.Wait()
		wg.Wait()
		client.CloseIdleConnections()
		if okThis.Load() == 0 {
			t.Fatalf("cycle %d: no call was acknowledged before the kill; nothing was tested", cycle+1)
		}
		okBefore.Add(okThis.Load())
	}

	// The restarted sink appends to the same log.
	c2 := startChild(t, dir)
	for range 20 {
		if ok, err := post(c2.addr); err != nil || !ok {
			t.Fatalf("post after restart: ok=%v err=%v", ok, err)
		}
	}
	if err := c2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := c2.cmd.Wait(); err != nil {
		t.Fatalf("child did not exit cleanly on SIGTERM: %v", err)
	}

	inLog := map[string]bool{}
	bad := 0
	err := rundir.ReadJSONL(dir+"/"+rundir.EventsFile, func(e rundir.Event) error {
		if e.Corr != nil {
			inLog[e.Corr.Key] = true
		}
		return nil
	}, func(int, error) { bad++ })
	if err != nil {
		t.Fatal(err)
	}
	missing := 0
	acked.Range(func(k, _ any) bool {
		if !inLog[k.(string)] {
			missing++
		}
		return true
	})
	total := 0
	acked.Range(func(any, any) bool { total++; return true })
	t.Logf("%d SIGKILL cycles under 16 writers in %v: acknowledged %d before the kills, %d in all; %d events in the log; %d cut lines; %d acknowledged events lost",
		cycles, time.Since(began).Round(time.Second), okBefore.Load(), total, len(inLog), bad, missing)
	if missing > 0 {
		t.Errorf("%d acknowledged events are missing from the log", missing)
	}
	if bad > cycles {
		t.Errorf("%d broken lines; at most one cut by each of the %d kills is allowed", bad, cycles)
	}
}
