package replay

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/attack"
	"github.com/msgload/msgload/rundir"
)

// BenchmarkReplayPacing replays one second of evenly spaced messaging sends at
// 1,000 and 10,000 requests/s against a loopback target that answers at once,
// through the harness's attack path (ForAttack's plan in attack.Run: vegeta
// attacker, replay pacer, rewriting, fresh credentials, attempt recording), and
// reports the offset error (actual send − intended) p50/p99/max over all hits.
// Each iteration takes about one second.
//
//	go test ./replay -run '^$' -bench BenchmarkReplayPacing -benchtime 3x
func BenchmarkReplayPacing(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"txId":"00000000-0000-0000-0000-000000000001","state":"ACCEPTED"}`))
	}))
	defer srv.Close()
	for _, rate := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			reqs := make([]Request, rate)
			for i := range reqs {
				reqs[i] = Request{Offset: time.Duration(i) * time.Second / time.Duration(rate), Method: "POST",
					Path: "/messaging/v1/send", API: apiMessaging, Op: OpSend, ClientID: "app", RecordedCode: 200,
					Body:   []byte(`{"scenario":[{"channel":"sms","sender":"s","recipient":{"type":"MSISDN","value":"+79990000000"}}]}`),
					Header: http.Header{"Content-Type": {"application/json"}}}
			}
			var errs []time.Duration
			for i := 0; b.Loop(); i++ {
				dir := b.TempDir()
				plan, err := ForAttack(reqs, apiMessaging, []string{"app"}, AttackRewrite{SinkURL: "http://127.0.0.1:1"}, 1)
				if err != nil {
					b.Fatal(err)
				}
				rec, err := attack.NewRecorder(dir)
				if err != nil {
					b.Fatal(err)
				}
				_, err = attack.Run(b.Context(), attack.Options{API: rundir.APIMessaging, BaseURL: srv.URL,
					Clients: []attack.Client{{ID: "app", Secret: "pw"}}, Pacer: plan.Pacer, Requests: plan.Requests,
					Body: plan.Body, ClientFor: plan.ClientFor, RunID: fmt.Sprintf("bench-%d", i), Out: rec, Workers: 50})
				if err != nil {
					b.Fatal(err)
				}
				if err := rec.Close(); err != nil {
					b.Fatal(err)
				}
				rundir.ReadJSONL(filepath.Join(dir, rundir.AttemptsFile), func(a rundir.Attempt) error {
					errs = append(errs, a.Late())
					return nil
				}, nil)
			}
			slices.Sort(errs)
			b.ReportMetric(float64(quantile(errs, 0.50).Microseconds()), "p50_µs")
			b.ReportMetric(float64(quantile(errs, 0.99).Microseconds()), "p99_µs")
			b.ReportMetric(float64(errs[len(errs)-1].Microseconds()), "max_µs")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkPacerVsConstant runs vegeta's attacker with plain targets (no
// rewriting, no recording) for one second at 1,000 and 10,000 requests/s, once
// with the replay Pacer over evenly spaced offsets and once with vegeta's own
// ConstantPacer, and reports the error of vegeta's hit timestamps against the
// plan (i/rate): the two side by side separate the pacer from the rest of the replay path.
//
//	go test ./replay -run '^$' -bench 'BenchmarkReplayPacing|BenchmarkPacerVsConstant' -benchtime 2x
func BenchmarkPacerVsConstant(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	for _, rate := range []int{1000, 10000} {
		for _, kind := range []string{"replay", "constant"} {
			b.Run(fmt.Sprintf("rate=%d/pacer=%s", rate, kind), func(b *testing.B) {
				var errs []time.Duration
				for b.Loop() {
					var p vegeta.Pacer = vegeta.ConstantPacer{Freq: rate, Per: time.Second}
					if kind == "replay" {
						offs := make([]time.Duration, rate)
						for i := range offs {
							offs[i] = time.Duration(i) * time.Second / time.Duration(rate)
						}
						p, _ = newPacerOffsets(offs, 1)
					}
					tr := vegeta.NewStaticTargeter(vegeta.Target{Method: "GET", URL: srv.URL})
					atk := vegeta.NewAttacker(vegeta.Workers(50), vegeta.MaxBody(0))
					var began time.Time
					for res := range atk.Attack(tr, p, time.Second, "bench") {
						if began.IsZero() || res.Timestamp.Before(began) {
							began = res.Timestamp
						}
						errs = append(errs, res.Timestamp.Sub(began.Add(time.Duration(res.Seq)*time.Second/time.Duration(rate))))
					}
				}
				for i := range errs {
					errs[i] = max(errs[i], 0)
				}
				slices.Sort(errs)
				b.ReportMetric(float64(quantile(errs, 0.50).Microseconds()), "p50_µs")
				b.ReportMetric(float64(quantile(errs, 0.99).Microseconds()), "p99_µs")
				b.ReportMetric(float64(errs[len(errs)-1].Microseconds()), "max_µs")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
