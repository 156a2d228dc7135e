package attack

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// cannedTransport answers every send at once with the messaging send answer,
// with no network: what is left is the engine's own work on a message.
type cannedTransport struct{ n atomic.Int64 }

func (t *cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	body := `{"txId":"00000000-0000-0000-0000-` + strconv.FormatInt(100000000000+t.n.Add(1), 10) +
		`","state":"ACCEPTED","updatedAt":"2026-01-01T00:00:00Z"}`
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader([]byte(body))),
		ContentLength: int64(len(body)), Request: r}, nil
}

// BenchmarkEngineMessage is the engine's CPU and allocation a message, one
// attempt each, recorded to attempts.jsonl and results.bin as a run records
// them (FileRecorder), without metrics (a run that serves none), against a
// transport that answers at once: vegeta's attacker, the targeter, the
// RoundTripper, the answer's parse, the recorder. The canned answer's own
// cost (a Response, its header and body) is in it too.
//
//	go test ./attack -run '^$' -bench BenchmarkEngineMessage -benchtime 20000x
func BenchmarkEngineMessage(b *testing.B) {
	rec, err := NewRecorder(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	tr := &cannedTransport{}
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	res, err := Run(context.Background(), Options{
		API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("c1"),
		Pacer: Constant(vegeta.Rate{Freq: 1_000_000, Per: time.Second}), Requests: int64(b.N), Workers: 4,
		Body: cheapBody, RunID: "bench", Out: rec, Transport: tr,
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	if res.Snapshot.Accepted != int64(b.N) {
		b.Fatalf("%d of %d messages accepted", res.Snapshot.Accepted, b.N)
	}
}

// processCPU is the process's CPU time so far, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cheapBody is a messaging send's body built as the scenario's generator
// builds one (appended, not marshalled), so that the body's cost is a run's.
func cheapBody(seq int64, client string, tag rundir.Tag) ([]byte, error) {
	b := make([]byte, 0, 320)
	b = append(b, `{"recipient":"+79990000001","text":"bench `...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `","trackData":"`...)
	b = append(b, tag.ExternalID()...)
	return append(b, `","scenario":[{"channel":"sms","sender":"msgload"}]}`...), nil
}

// pointerRecorder keeps what Record was given: the attempts' values, and
// how many distinct attempt structs it was handed.
type pointerRecorder struct {
	mu       sync.Mutex
	attempts []rundir.Attempt
	structs  map[*rundir.Attempt]bool
}

func (p *pointerRecorder) Record(a *rundir.Attempt, _ *vegeta.Result) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attempts = append(p.attempts, *a)
	p.structs[a] = true
	return nil
}

// TestSendAttemptsReused: the attempts of the sends are recorded each with
// its own values (a retry after a 503 too), while the structs that carry
// them are reused from one message to the next instead of one allocated a
// request (Recorder: a copy is kept, never the pointer).
func TestSendAttemptsReused(t *testing.T) {
	const n = 200
	rec := &pointerRecorder{structs: map[*rundir.Attempt]bool{}}
	tr := &cannedTransport{}
	var calls atomic.Int64
	flaky := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) == 10 { // the 10th request fails once: a retry follows
			r.Body.Close()
			return &http.Response{StatusCode: 503, Status: "503 Service Unavailable", Body: http.NoBody, Header: http.Header{}, Request: r}, nil
		}
		return tr.RoundTrip(r)
	})
	_, err := Run(context.Background(), Options{
		API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("c1"),
		Pacer: Constant(vegeta.Rate{Freq: 2000, Per: time.Second}), Requests: n, Workers: 1,
		Body: cheapBody, RunID: "reuse", Out: rec, Transport: flaky, Retry: Retry{On: []int{503}, Max: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.attempts) != n+1 {
		t.Fatalf("%d attempts recorded, want %d (%d messages, one retried)", len(rec.attempts), n+1, n)
	}
	seen := map[int64]int{}
	for _, a := range rec.attempts {
		seen[a.Seq]++
		if a.Op != OpSend || a.Seq < 1 || a.Seq > n || a.Sent.IsZero() || (a.Code != 200 && a.Code != 503) ||
			(a.Code == 200) != (a.TxID != "") || (a.Code == 503) != (a.Attempt == 1 && a.Error != "") {
			t.Errorf("attempt recorded with the wrong values: %+v", a)
		}
	}
	for seq := int64(1); seq <= n; seq++ {
		if seen[seq] < 1 || seen[seq] > 2 {
			t.Errorf("message %d: %d attempts recorded", seq, seen[seq])
		}
	}
	if len(rec.structs) > n/2 {
		t.Errorf("%d distinct attempt structs for %d attempts: a new one a request, not reused", len(rec.structs), len(rec.attempts))
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
