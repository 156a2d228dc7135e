package attack

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// randomResult is a result with each field zero or not, short or long (a
// length past one byte of gob's), times in several zones (one with seconds
// in its offset, which MarshalBinary writes in its longer form), latencies
// of both signs, and now and then a body or headers.
func randomResult(rng *rand.Rand) *vegeta.Result {
	str := func() string {
		switch rng.IntN(4) {
		case 0:
			return ""
		case 1:
			return "POST"
		case 2:
			return "http://127.0.0.1:8081/messaging/v1/send"
		}
		return strings.Repeat("é", rng.IntN(300))
	}
	num := func() uint64 {
		switch rng.IntN(3) {
		case 0:
			return 0
		case 1:
			return uint64(rng.IntN(200))
		}
		return rng.Uint64() >> rng.IntN(64)
	}
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("", 3*3600), time.FixedZone("odd", -(5*3600 + 30*60 + 17))}
	r := &vegeta.Result{Attack: str(), Seq: num(), Code: uint16(num()), BytesOut: num(), BytesIn: num(), Error: str(), Method: str(), URL: str()}
	if rng.IntN(8) > 0 {
		r.Timestamp = time.Unix(int64(rng.Uint32())+1_700_000_000, int64(rng.IntN(1e9))).In(zones[rng.IntN(len(zones))])
	}
	r.Latency = time.Duration(int64(num()) >> 1)
	if rng.IntN(2) == 0 {
		r.Latency = -r.Latency
	}
	if rng.IntN(10) == 0 {
		r.Body = []byte(str())
	}
	if rng.IntN(10) == 0 {
		r.Headers = http.Header{"Retry-After": {"1"}}
	}
	return r
}

// TestResultEncoderWritesGob: a stream of results written by resultEncoder
// is byte for byte the one vegeta's gob encoder writes of them (each with
// the Seq given), and the results after the first were encoded by hand.
func TestResultEncoderWritesGob(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for stream := range 50 {
		var want, got bytes.Buffer
		ref := vegeta.NewEncoder(&want)
		enc := newResultEncoder(&got)
		first := &vegeta.Result{Attack: "run", Code: 200, Timestamp: time.Now(), Latency: time.Millisecond, Method: "POST", URL: "http://x/"}
		rs := []*vegeta.Result{first}
		for range 200 {
			rs = append(rs, randomResult(rng))
		}
		for i, r := range rs {
			before := *r
			seq := uint64(i) * 977
			out := *r
			out.Seq = seq
			if err := ref.Encode(&out); err != nil {
				t.Fatal(err)
			}
			if err := enc.encode(r, seq); err != nil {
				t.Fatal(err)
			}
			if !r.Equal(before) {
				t.Fatalf("stream %d, result %d: changed by the encoder", stream, i)
			}
			if enc.typeID == nil {
				t.Fatalf("stream %d: the hand encoder disagreed with gob on the first result", stream)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("stream %d, result %d (%+v): the stream differs from gob's from byte %d", stream, i, out, firstDiff(got.Bytes(), want.Bytes()))
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// BenchmarkResultEncoder: a result as the engine records a send, encoded
// into results.bin's stream by resultEncoder and, for comparison, by
// vegeta's gob encoder (what results.bin was written with before).
func BenchmarkResultEncoder(b *testing.B) {
	r := &vegeta.Result{Attack: "20261126-120000-abcd", Code: 200, Timestamp: time.Now(), Latency: 734 * time.Microsecond,
		BytesOut: 160, BytesIn: 92, Method: http.MethodPost, URL: "http://127.0.0.1:8081/messaging/v1/send"}
	for _, tc := range []struct {
		name string
		new  func(*bytes.Buffer) func(*vegeta.Result, uint64) error
	}{
		{"hand", func(w *bytes.Buffer) func(*vegeta.Result, uint64) error { return newResultEncoder(w).encode }},
		{"gob", func(w *bytes.Buffer) func(*vegeta.Result, uint64) error {
			enc := vegeta.NewEncoder(w)
			return func(r *vegeta.Result, seq uint64) error { out := *r; out.Seq = seq; return enc.Encode(&out) }
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var buf bytes.Buffer
			encode := tc.new(&buf)
			b.ReportAllocs()
			var seq uint64
			for b.Loop() {
				if buf.Len() > 1<<20 {
					buf.Reset()
				}
				if err := encode(r, seq); err != nil {
					b.Fatal(err)
				}
				seq++
			}
		})
	}
}
