package sink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/msgload/msgload/rundir"
)

// fault is what faultyFile does on one call.
type fault int

const (
	pass       fault = iota
	shortWrite       // writes half of the bytes, then ENOSPC (a disk filling up mid-write)
	noSpace          // writes nothing, ENOSPC
	syncEIO          // the bytes are in the file, fsync fails with EIO
	truncEIO         // the cut back fails with EIO, nothing is cut
)

// faultyFile is the log's file with faults injected by decide (op is "write",
// "sync" or "truncate"). Only the log's writer goroutine calls it.
type faultyFile struct {
	*os.File
	mu       sync.Mutex
	decide   func(op string) fault
	injected map[fault]int
}

func (f *faultyFile) pick(op string) fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.decide == nil {
		return pass
	}
	k := f.decide(op)
	if k != pass {
		if f.injected == nil {
			f.injected = map[fault]int{}
		}
		f.injected[k]++
	}
	return k
}

func (f *faultyFile) set(decide func(op string) fault) {
	f.mu.Lock()
	f.decide = decide
	f.mu.Unlock()
}

func (f *faultyFile) count(k fault) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected[k]
}

func (f *faultyFile) Write(p []byte) (int, error) {
	switch f.pick("write") {
	case shortWrite:
		n, err := f.File.Write(p[:len(p)/2])
		if err != nil {
			return n, err
		}
		return n, syscall.ENOSPC
	case noSpace:
		return 0, syscall.ENOSPC
	}
	return f.File.Write(p)
}

func (f *faultyFile) Sync() error {
	if f.pick("sync") == syncEIO {
		return syscall.EIO
	}
	return f.File.Sync()
}

func (f *faultyFile) Truncate(size int64) error {
	if f.pick("truncate") == truncEIO {
		return syscall.EIO
	}
	return f.File.Truncate(size)
}

var nopObserver = prometheus.ObserverFunc(func(float64) {})

// A failed write, a failed fsync and a failed cut each leave the file at its
// last acknowledged line: the scripted sequence of the full-disk report (a torn
// line, then space again) loses nothing.
func TestLogCutsBackAfterFailures(t *testing.T) {
	for _, mode := range []FsyncMode{FsyncBatch, fsyncAlways, fsyncNone} {
		t.Run(string(mode), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), rundir.EventsFile)
			ff := &faultyFile{}
			l, err := openLog(path, mode, nopObserver, nopObserver, func(f *os.File) LogFile { ff.File = f; return ff })
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			step := func(name string, script []fault, wantErr error) {
				t.Helper()
				i := 0
				ff.set(func(string) fault {
					if i < len(script) {
						i++
						return script[i-1]
					}
					return pass
				})
				line := fmt.Sprintf(`{"kind":"callback","reason":%q}`+"\n", name)
				err := l.append([]byte(line))
				switch {
				case wantErr == nil && err != nil:
					t.Fatalf("%s: %v", name, err)
				case wantErr != nil && !errors.Is(err, wantErr):
					t.Fatalf("%s: error %v, want %v", name, err, wantErr)
				case err == nil:
					want.WriteString(line)
				}
			}
			step("first", nil, nil)
			step("torn by a full disk", []fault{shortWrite}, syscall.ENOSPC)
			step("after space is freed", nil, nil)
			step("no space at all", []fault{noSpace}, syscall.ENOSPC)
			if mode != fsyncNone {
				step("fsync fails", []fault{pass, syncEIO}, syscall.EIO)
				// The cut after a failed fsync fails too: the next call is refused
				// without writing, until a cut succeeds.
				step("fsync fails, cut fails", []fault{pass, syncEIO, truncEIO}, syscall.EIO)
				step("cut still failing", []fault{truncEIO}, errLogBroken)
			} else {
				step("torn, cut fails", []fault{shortWrite, truncEIO}, errLogBroken)
				step("cut still failing", []fault{truncEIO}, errLogBroken)
			}
			step("repaired", nil, nil)
			step("last", nil, nil)
			if err := l.close(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("log:\n%s\nwant only the acknowledged lines:\n%s", got, want.Bytes())
			}
			if ff.count(truncEIO) == 0 || ff.count(noSpace) != 1 {
				t.Errorf("faults injected: %v", ff.injected)
			}
		})
	}
}

// Many callers, random short writes, ENOSPC, failed fsyncs and failed cuts,
// each refused call retried like a service would: every call answered 200
// reads back exactly once, with no bad line, and no refused attempt is in the
// log; the retry that got in is the first arrival (not a duplicate, with its
// latency), as a reader of the log sees it.
func TestLogFaultsUnderLoad(t *testing.T) {
	for _, mode := range []FsyncMode{FsyncBatch, fsyncAlways, fsyncNone} {
		t.Run(string(mode), func(t *testing.T) {
			ff := &faultyFile{}
			rng := rand.New(rand.NewPCG(1, uint64(len(mode))))
			ff.set(func(op string) fault {
				x := rng.Float64()
				switch op {
				case "write":
					if x < 0.15 {
						return shortWrite
					}
					if x < 0.25 {
						return noSpace
					}
				case "sync":
					if x < 0.15 {
						return syncEIO
					}
				case "truncate":
					if x < 0.3 {
						return truncEIO
					}
				}
				return pass
			})
			h := newHarness(t, Options{Fsync: mode, WrapLog: func(f *os.File) LogFile { ff.File = f; return ff }})
			const writers, each, tries = 8, 40, 50
			var mu sync.Mutex
			acked := map[string]int{}
			refused, gaveUp := 0, 0
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					for i := range each {
						tx := txID(w*1000 + i)
						tag := &rundir.Tag{Run: "r", Seq: int64(w*1000 + i + 1), First: fixedNow.Add(-time.Second)}
						for range tries {
							code := h.post("/callback", status(tx, "DELIVERED", "sms", tag), nil)
							mu.Lock()
							if code == http.StatusOK {
								acked[tx]++
								mu.Unlock()
								break
							}
							refused++
							mu.Unlock()
							if code != http.StatusInternalServerError {
								t.Errorf("answered %d", code)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			ff.set(nil)
			if err := h.s.Close(); err != nil {
				t.Fatal(err)
			}
			inLog := map[string]int{}
			bad := 0
			err := rundir.ReadJSONL(h.log, func(e rundir.Event) error {
				inLog[e.Corr.Key]++
				if e.Corr.Duplicate || e.Corr.Latency != 1 || !e.Corr.Terminal {
					t.Errorf("%s: logged as duplicate %v, latency %v, terminal %v; want the first arrival", e.Corr.Key, e.Corr.Duplicate, e.Corr.Latency, e.Corr.Terminal)
				}
				return nil
			}, func(int, error) { bad++ })
			if err != nil {
				t.Fatal(err)
			}
			gaveUp = writers*each - len(acked)
			t.Logf("%d acknowledged, %d refused attempts (%d events never acknowledged); faults: short %d, ENOSPC %d, fsync %d, cut %d",
				len(acked), refused, gaveUp, ff.count(shortWrite), ff.count(noSpace), ff.count(syncEIO), ff.count(truncEIO))
			if bad != 0 {
				t.Errorf("%d lines do not decode", bad)
			}
			for tx := range acked {
				if inLog[tx] != 1 {
					t.Errorf("%s answered 200 is %d times in the log", tx, inLog[tx])
				}
			}
			for tx, n := range inLog {
				if acked[tx] == 0 {
					t.Errorf("%s never answered 200 is %d times in the log", tx, n)
				}
			}
			if refused == 0 || ff.count(shortWrite) == 0 || ff.count(truncEIO) == 0 || (mode != fsyncNone && ff.count(syncEIO) == 0) {
				t.Errorf("not every fault was exercised: refused %d, injected %v", refused, ff.injected)
			}
			if st := h.s.Stats(); st.Events != int64(len(acked)) || st.WriteErrors != int64(refused) ||
				st.Duplicates != 0 || st.TerminalMatched != int64(len(acked)) {
				t.Errorf("stats: events %d write errors %d duplicates %d terminal %d; want %d, %d, 0, %d",
					st.Events, st.WriteErrors, st.Duplicates, st.TerminalMatched, len(acked), refused, len(acked))
			}
			// The metric Grafana shows is the same count, each a write that failed.
			if got := testutil.ToFloat64(h.s.met.notWritten.WithLabelValues(notWrittenFailed)); got != float64(refused) {
				t.Errorf("msgload_sink_write_errors_total{reason=failed} %v, want the %d refused", got, refused)
			}
		})
	}
}

// TestFullDiskTmpfs is the report of issue 13 on a real file system: a sink on
// a 2 MB tmpfs, the disk filled to the last byte, calls refused while it is
// full, space freed, the refused calls retried: every call answered 200 reads
// back and no line is torn. It mounts a tmpfs, so it runs as root with CI=true.
func TestFullDiskTmpfs(t *testing.T) {
	if os.Getenv("CI") != "true" || os.Geteuid() != 0 {
		t.Skip("mounts a tmpfs: runs only as root with CI=true (sudo CI=true go test ./sink/ -run TestFullDiskTmpfs)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "msgload-sink-test", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	for _, mode := range []FsyncMode{FsyncBatch, fsyncAlways, fsyncNone} {
		t.Run(string(mode), func(t *testing.T) {
			path := filepath.Join(dir, string(mode)+"-"+rundir.EventsFile)
			h := newHarness(t, Options{LogPath: path, Fsync: mode})
			acked := map[string]bool{}
			var refused []string
			seq := 0
			// A line of about 6 KB: more than the slack in the log's last page, so
			// a write on the full disk is short (or writes nothing).
			post := func(tx string) int {
				body := fmt.Sprintf(`{"txId":%q,"updatedAt":"2026-11-23T02:00:00Z","state":"DELIVERED","pad":%q}`, tx, strings.Repeat("x", 6000))
				code := h.post("/callback", body, nil)
				if code == http.StatusOK {
					acked[tx] = true
				}
				return code
			}
			next := func() string { seq++; return txID(seq) }
			for range 5 {
				if code := post(next()); code != 200 {
					t.Fatalf("before the disk is full: %d", code)
				}
			}
			filler := filepath.Join(dir, "filler")
			fill(t, filler)
			for range 10 {
				tx := next()
				switch code := post(tx); code {
				case http.StatusOK:
				case http.StatusInternalServerError:
					refused = append(refused, tx)
				default:
					t.Fatalf("disk full: answered %d", code)
				}
			}
			if len(refused) == 0 {
				t.Fatal("no call was refused on the full disk; nothing was tested")
			}
			// While the disk is still full the log ends at its last complete line.
			if b, err := os.ReadFile(path); err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
				t.Errorf("log after the failed writes: %d bytes, err %v, ends in %q", len(b), err, b[len(b)-1:])
			}
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			for _, tx := range refused { // the service retries
				if code := post(tx); code != 200 {
					t.Errorf("retry after space was freed: %d", code)
				}
			}
			for range 15 {
				if code := post(next()); code != 200 {
					t.Errorf("after space was freed: %d", code)
				}
			}
			if err := h.s.Close(); err != nil {
				t.Fatal(err)
			}
			inLog := map[string]int{}
			bad := 0
			if err := rundir.ReadJSONL(path, func(e rundir.Event) error { inLog[e.Corr.Key]++; return nil },
				func(int, error) { bad++ }); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d acknowledged, %d refused while the disk was full (then retried), %d bad lines", len(acked), len(refused), bad)
			if bad != 0 {
				t.Errorf("%d lines do not decode", bad)
			}
			for tx := range acked {
				if inLog[tx] != 1 {
					t.Errorf("%s answered 200 is %d times in the log", tx, inLog[tx])
				}
			}
			if len(inLog) != len(acked) {
				t.Errorf("%d keys in the log, %d acknowledged", len(inLog), len(acked))
			}
			os.Remove(path) // room for the next mode
		})
	}
}

// fill writes path until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := bytes.Repeat([]byte{'f'}, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	for { // the last bytes, one at a time
		if _, err := f.Write(chunk[:1]); err != nil {
			break
		}
	}
}

// The read API serves acknowledged lines only: not a batch written and waiting
// for its fsync, nor one cut back after the fsync failed; a cursor it gave
// stays at a line boundary after the cut.
func TestReadAPISeesOnlyAcknowledged(t *testing.T) {
	ff := &faultyFile{}
	h := newHarness(t, Options{WrapLog: func(f *os.File) LogFile { ff.File = f; return ff }})
	page := func(after int64) EventsPage {
		t.Helper()
		resp, err := http.Get(fmt.Sprintf("%s/v1/events?after=%d", h.srv.URL, after))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p EventsPage
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if code := h.post("/callback", status(txID(1), "DELIVERED", "sms", nil), nil); code != 200 {
		t.Fatal(code)
	}
	p1 := page(0)
	if len(p1.Events) != 1 {
		t.Fatalf("%d events after the first call", len(p1.Events))
	}
	entered, release := make(chan struct{}), make(chan struct{})
	once := false
	ff.set(func(op string) fault {
		if op == "sync" && !once {
			once = true
			close(entered)
			<-release
			return syncEIO
		}
		return pass
	})
	answered := make(chan int, 1)
	go func() { answered <- h.post("/callback", status(txID(2), "DELIVERED", "sms", nil), nil) }()
	<-entered // the line of call 2 is in the file, its fsync under way
	if p := page(p1.Next); len(p.Events) != 0 || p.Next != p1.Next {
		t.Errorf("while the fsync is under way the read API gives %d events, cursor %d (was %d)", len(p.Events), p.Next, p1.Next)
	}
	close(release)
	if code := <-answered; code != 500 {
		t.Fatalf("call 2 with a failed fsync: %d", code)
	}
	if code := h.post("/callback", status(txID(3), "DELIVERED", "sms", nil), nil); code != 200 {
		t.Fatal(code)
	}
	p3 := page(p1.Next)
	if len(p3.Events) != 1 || p3.Events[0].Corr.Key != txID(3) {
		t.Errorf("after the cut the cursor gives %+v, want call 3 only", p3.Events)
	}
}

// While the log cannot be cut back, /healthz answers 503 (a probe takes the
// sink out of service) and calls 500; once a cut succeeds, both are back.
func TestHealthzWhileLogBroken(t *testing.T) {
	ff := &faultyFile{}
	h := newHarness(t, Options{WrapLog: func(f *os.File) LogFile { ff.File = f; return ff }})
	ff.set(func(op string) fault {
		switch op {
		case "write":
			return shortWrite
		case "truncate":
			return truncEIO
		}
		return pass
	})
	if code := h.post("/callback", status(txID(1), "DELIVERED", "sms", nil), nil); code != 500 {
		t.Fatalf("torn write: %d", code)
	}
	if code := get(t, h.srv.URL, "/healthz", ""); code != 503 {
		t.Errorf("/healthz with the log broken: %d", code)
	}
	ff.set(nil)
	if code := h.post("/callback", status(txID(1), "DELIVERED", "sms", nil), nil); code != 200 {
		t.Fatalf("after the cut succeeds: %d", code)
	}
	if code := get(t, h.srv.URL, "/healthz", ""); code != 200 {
		t.Errorf("/healthz after the repair: %d", code)
	}
	if evs := h.events(); len(evs) != 1 || evs[0].Corr.Duplicate {
		t.Errorf("log: %+v", evs)
	}
}
