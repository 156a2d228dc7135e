package benchload

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/attack"
	"github.com/msgload/msgload/rundir"
)

// Report is the line benchload prints at the end.
type Report struct {
	Sent, Errors, Capped int64
	First, Last          time.Time
}

// Main runs the command with args (without the program name); the report
// goes to stdout.
func Main(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("benchload", flag.ContinueOnError)
	url := fs.String("url", "", "base URL of the target")
	rate := fs.Int("rate", 1000, "messages per second")
	du := fs.Duration("duration", 0, "attack duration (0 = until -requests)")
	n := fs.Int64("requests", 0, "messages (0 = until -duration)")
	dir := fs.String("dir", "", "directory for attempts.jsonl and results.bin")
	prof := fs.String("cpuprofile", "", "write a CPU profile here")
	workers := fs.Uint64("max-workers", 0, "vegeta's max workers (0 = the attacker's default)")
	inFlight := fs.Int("max-in-flight", 0, "cap on messages in flight (0 = attack.DefaultMaxInFlight, -1 = none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	return run(*url, *rate, *du, *n, *dir, *workers, *inFlight, stdout)
}

func run(url string, rate int, du time.Duration, n int64, dir string, workers uint64, inFlight int, stdout io.Writer) error {
	rec, err := attack.NewRecorder(dir)
	if err != nil {
		return err
	}
	span := &spanRecorder{next: rec}
	m, err := attack.NewMetrics(prometheus.NewRegistry(), 20)
	if err != nil {
		return err
	}
	res, err := attack.Run(context.Background(), attack.Options{
		API: rundir.APIMessaging, BaseURL: url, Clients: []attack.Client{{ID: "bench", Secret: "bench-pass"}},
		Pacer: attack.Constant(vegeta.Rate{Freq: rate, Per: time.Second}), Duration: du, Requests: n,
		Body: Body, Chain: []string{"sms"}, RunID: "bench", Out: span, Metrics: m,
		Retry:       attack.Retry{On: []int{503}, Max: 2, Backoff: 10 * time.Millisecond},
		MaxWorkers:  workers,
		MaxInFlight: inFlight,
	})
	if err != nil {
		return err
	}
	if err := rec.Close(); err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(Report{Sent: res.Sent, Errors: res.Errors, Capped: res.Capped, First: span.first, Last: span.last})
}

// spanRecorder notes the first and last send times.
type spanRecorder struct {
	next        attack.Recorder
	mu          sync.Mutex
	first, last time.Time
}

func (s *spanRecorder) Record(a *rundir.Attempt, r *vegeta.Result) error {
	s.mu.Lock()
	if a.Attempt == 1 && a.Op == attack.OpSend {
		if s.first.IsZero() || a.Sent.Before(s.first) {
			s.first = a.Sent
		}
		if a.Sent.After(s.last) {
			s.last = a.Sent
		}
	}
	s.mu.Unlock()
	return s.next.Record(a, r)
}

// Body is a realistic messaging send, unique per message (recipient, text,
// clientRequestId, tag).
func Body(seq int64, client string, tag rundir.Tag) ([]byte, error) {
	b := make([]byte, 0, 320)
	b = append(b, `{"trackData":{"`+rundir.TrackRun+`":"`...)
	b = append(b, tag.Run...)
	b = append(b, `","`+rundir.TrackSeq+`":"`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `","`+rundir.TrackSent+`":"`...)
	b = strconv.AppendInt(b, tag.First.UnixNano(), 10)
	b = append(b, `","`+rundir.TrackChain+`":"sms"},"clientRequestId":"`...)
	b = strconv.AppendInt(b, seq, 36)
	b = append(b, `","scenario":[{"channel":"sms","sender":"Acme","recipient":{"type":"MSISDN","value":"+7999`...)
	b = fmt.Appendf(b, "%07d", seq%10_000_000)
	b = append(b, `"},"text":"Your code is `...)
	b = strconv.AppendInt(b, (seq*7919)%1_000_000, 10)
	b = append(b, `. Message `...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `."}]}`...)
	return b, nil
}
