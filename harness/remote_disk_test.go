package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sink"
)

// pagedSink serves n untagged events, two a page, the cursor being the index.
func pagedSink(t *testing.T, n int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		after, _ := strconv.Atoi(r.URL.Query().Get("after"))
		p := sink.EventsPage{Events: []rundir.Event{}, Next: int64(after)}
		for i := after; i < n && i < after+2; i++ {
			p.Events = append(p.Events, rundir.Event{Kind: "status", Route: "/callback", Reason: strconv.Itoa(i)})
			p.Next = int64(i + 1)
		}
		p.More = p.Next < int64(n)
		json.NewEncoder(w).Encode(p)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fullDisk fails its first fails writes with ENOSPC (-1: all of them).
type fullDisk struct {
	*os.File
	fails, writes int
}

func (d *fullDisk) WriteAt(b []byte, off int64) (int, error) {
	d.writes++
	if d.fails < 0 || d.writes <= d.fails {
		// a short write, as a filling disk does
		n, _ := d.File.WriteAt(b[:len(b)/2], off)
		return n, syscall.ENOSPC
	}
	return d.File.WriteAt(b, off)
}

func remoteOnDisk(t *testing.T, url string, fails int) (*remoteLog, *fullDisk) {
	t.Helper()
	path := filepath.Join(t.TempDir(), rundir.EventsFile)
	l, err := newRemoteLog(url, "r1", path)
	if err != nil {
		t.Fatal(err)
	}
	d := &fullDisk{File: l.f.(*os.File), fails: fails}
	l.f = d
	return l, d
}

// A full disk while the last events are copied: once space is freed the copy
// finishes, each event once. Before, the buffered writer's error stayed after
// space was freed and the copy was retried until its 2 minutes ran out.
func TestRemoteCopyRecoversFromFreedDisk(t *testing.T) {
	defer func(w time.Duration) { retryWait = w }(retryWait)
	retryWait = time.Millisecond
	const n = 7
	l, _ := remoteOnDisk(t, pagedSink(t, n).URL, 2)
	if err := l.finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := rundir.ReadJSONL(l.path, func(e rundir.Event) error { got = append(got, e.Reason); return nil },
		func(line int, err error) { t.Errorf("line %d: %v", line, err) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || l.events.Load() != n {
		t.Fatalf("copied %v (counted %d), want each of %d once", got, l.events.Load(), n)
	}
	for i, r := range got {
		if r != strconv.Itoa(i) {
			t.Fatalf("copied %v, want 0..%d in order", got, n-1)
		}
	}
}

// A disk that stays full: the copy gives up after localTries, naming the file.
func TestRemoteCopyGivesUpOnFullDisk(t *testing.T) {
	defer func(w time.Duration) { retryWait = w }(retryWait)
	retryWait = time.Millisecond
	l, d := remoteOnDisk(t, pagedSink(t, 3).URL, -1)
	err := l.finish(t.Context())
	if !errors.Is(err, errLocalWrite) || !errors.Is(err, syscall.ENOSPC) || !bytes.Contains([]byte(err.Error()), []byte(l.path)) {
		t.Fatalf("got %v, want a write error of %s", err, l.path)
	}
	if d.writes != localTries {
		t.Fatalf("%d writes, want %d tries", d.writes, localTries)
	}
}

// A second interrupt stops the last copy from a sink that does not answer.
// Before, it ran under context.Background() for up to 2 minutes.
func TestFinishRemoteCopyStopsOnSecondInterrupt(t *testing.T) {
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hold)
	l, err := newRemoteLog(srv.URL, "r1", filepath.Join(t.TempDir(), rundir.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	abort := make(chan struct{})
	var stderr bytes.Buffer
	r := &partRun{o: &Options{Stderr: &stderr}, s: &scenarios.Scenario{Name: "x"}, dir: t.TempDir(), abortCh: abort, remote: l}
	done := make(chan struct{})
	go func() { r.finishRemoteCopy(srv.URL); close(done) }()
	close(abort)
	select {
	case <-done:
	case <-time.After(60 * time.Second): // catches the hang only: it took 2 minutes
		t.Fatal("the copy went on after a second interrupt")
	}
}
