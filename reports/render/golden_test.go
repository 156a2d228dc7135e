package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/limitfit/limitfittest"
	"github.com/msgload/msgload/rundir"
)

var update = flag.Bool("update", false, "rewrite the golden files and the committed sample run")

// mcallback adds a messaging callback for seq carrying the chain in trackData,
// as the sink logs it.
func (r *run) mcallback(seq int64, sec float64, state, channel string, terminal, step bool) {
	var first time.Time
	for _, a := range r.attempts {
		if a.Seq == seq && a.Attempt == 1 {
			first = a.FirstSent
		}
	}
	tag := rundir.Tag{Run: r.meta.ID, Seq: seq, First: first, Chain: []string{"viber:DELIVERED", "sms"}}
	payload, _ := json.Marshal(map[string]any{"txId": "tx-" + itoa(seq), "state": state, "channel": channel,
		"updatedAt": at(sec).Format(time.RFC3339Nano), "trackData": tag.TrackData()})
	r.events = append(r.events, rundir.Event{Kind: rundir.KindCallback, Route: "/callback", ReceivedAt: at(sec),
		API: rundir.APIMessaging, Payload: payload,
		Corr: &rundir.Correlation{Key: "tx-" + itoa(seq), Run: r.meta.ID, Seq: seq, FirstSent: first, State: state,
			Channel: channel, Terminal: terminal, Matched: true, FailoverStep: step,
			Latency: at(sec).Sub(first).Seconds()}})
}

// fullRun is a messaging run through a fixed-window limiter (5 per 10 s per
// client, two clients at 1 request/s) with a viber → sms cascade, incoming
// replies, a malformed and an unmatched callback, and the simulator's truth.
func fullRun() *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Description = "two clients through a fixed-window limiter, viber with failover to sms"
	r.meta.Commit, r.meta.CommitTime, r.meta.Host = "0123456789abcdef0123456789abcdef01234567", "2026-11-22T18:00:00Z", "loadgen-1"
	r.meta.Clients = []string{"c1", "c2"}
	r.meta.Limit = rundir.Limit{Requests: 5, Window: rundir.Duration(10 * time.Second), Mode: "exceed"}
	r.meta.Planned = rundir.Plan{Profile: "constant", Rate: 2, Requests: 120, Duration: rundir.Duration(60 * time.Second)}
	r.meta.Thresholds = []string{"delivery.latency.p95 < 30s", "rate_limit.excess_accepted == 0", `requests.codes["429"] > 0`, "delivery.lost / delivery.expected < 5%"}
	truth := &rundir.Truth{RateLimit: rundir.TruthRateLimit{Requests: 5, Window: rundir.Duration(10 * time.Second), Algorithm: "fixed"}}
	lims := map[string]*limitfittest.Fixed{"c1": {Limit: 5, W: 10, Cur: -1}, "c2": {Limit: 5, W: 10, Cur: -1}}
	win := map[string]*rundir.TruthWindow{}
	seq := int64(0)
	for i := 0; i < 60; i++ {
		for ci, c := range []string{"c1", "c2"} {
			seq++
			sec := float64(i) + 0.5*float64(ci)
			code := 200
			if !lims[c].Allow(sec) {
				code = 429
			}
			a := r.send(seq, c, sec, code, 0.02+0.001*float64(seq%17))
			a.Intended = a.Sent.Add(-time.Duration(seq%3) * 7 * time.Millisecond) // some late starts
			a.Channel = "viber"
			key := c + at(float64(int(sec)/10*10)).String()
			if win[key] == nil {
				win[key] = &rundir.TruthWindow{Client: c, Start: at(float64(int(sec) / 10 * 10))}
				defer func(w *rundir.TruthWindow) { truth.Windows = append(truth.Windows, *w) }(win[key])
			}
			if code == 429 {
				a.RetryAfter = itoa(int64(lims[c].RetryAfter(sec)))
				win[key].Refused++
				continue
			}
			win[key].Accepted++
			tm := rundir.TruthMessage{API: rundir.APIMessaging, ID: "tx-" + itoa(seq), Client: c, AcceptedAt: at(sec), Sends: 1}
			switch {
			case seq%7 == 0: // viber expires, sms delivers
				r.mcallback(seq, sec+4, "EXPIRED", "viber", false, true)
				r.mcallback(seq, sec+6+float64(seq%5), "DELIVERED", "sms", true, true)
				tm.Steps = []rundir.TruthStep{{Channel: "viber", State: "EXPIRED", Delay: rundir.Duration(4 * time.Second)},
					{Channel: "sms", State: "DELIVERED", Delay: rundir.Duration(time.Duration(6+seq%5) * time.Second)}}
				tm.Final = "DELIVERED"
			case seq%13 == 0: // the simulator dropped the callback: lost
				tm.Steps = []rundir.TruthStep{{Channel: "viber", State: "DELIVERED", Delay: rundir.Duration(time.Second)}}
				tm.Final = "DELIVERED"
				truth.Callbacks = append(truth.Callbacks, rundir.TruthCallback{ID: tm.ID, Kind: rundir.KindCallback, State: "DELIVERED", Action: rundir.CallbackDropped, Attempt: 1, At: at(sec + 1)})
			default:
				d := 1 + float64(seq%4)*0.5
				r.mcallback(seq, sec+d, "DELIVERED", "viber", true, false)
				tm.Steps = []rundir.TruthStep{{Channel: "viber", State: "DELIVERED", Delay: rundir.Duration(time.Duration(d * float64(time.Second)))}}
				tm.Final = "DELIVERED"
				if seq%5 == 0 {
					r.mcallback(seq, sec+d+2, "SEEN", "viber", true, false)
					tm.Steps = append(tm.Steps, rundir.TruthStep{Channel: "viber", State: "SEEN", Delay: rundir.Duration(time.Duration((d + 2) * float64(time.Second)))})
					tm.Final = "SEEN"
				}
			}
			if seq%13 != 0 { // every status change was called back and answered 200
				for _, st := range tm.Steps {
					cb := at(sec).Add(st.Delay.D())
					truth.Callbacks = append(truth.Callbacks, rundir.TruthCallback{ID: tm.ID, Kind: rundir.KindCallback, State: st.State, Channel: st.Channel,
						Action: rundir.CallbackSent, Attempt: 1, At: cb, Done: cb, Status: 200})
				}
			}
			truth.Messages = append(truth.Messages, tm)
			if seq%11 == 0 { // a subscriber answers
				r.events = append(r.events, rundir.Event{Kind: rundir.KindIncoming, Route: "/incoming", ReceivedAt: at(sec + 20), API: rundir.APIMessaging,
					Corr: &rundir.Correlation{Key: "in-" + itoa(seq), Channel: "viber", OutgoingTxID: "tx-" + itoa(seq), Matched: true}})
			}
		}
	}
	r.events = append(r.events,
		rundir.Event{Kind: rundir.KindMalformed, Route: "/callback", ReceivedAt: at(30), Raw: "not json", Reason: "body is not JSON"},
		rundir.Event{Kind: rundir.KindCallback, Route: "/callback", ReceivedAt: at(31), Corr: &rundir.Correlation{Key: "foreign", Matched: false}})
	r.truth = truth
	return r
}

// sortEvents orders events by arrival, as the sink writes them.
func (r *run) sortEvents() {
	ev := r.events
	for i := 1; i < len(ev); i++ {
		for j := i; j > 0 && ev[j].ReceivedAt.Before(ev[j-1].ReceivedAt); j-- {
			ev[j], ev[j-1] = ev[j-1], ev[j]
		}
	}
}

// sampleRun is the committed sample run directory (also the README's report).
const sampleRun = "../testdata/runs/sample"

func TestGoldenWriters(t *testing.T) {
	r := fullRun()
	r.sortEvents()
	dir := r.write(t)
	if *update {
		if err := os.MkdirAll(sampleRun, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{rundir.MetaFile, rundir.AttemptsFile, rundir.EventsFile, rundir.TruthFile} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sampleRun, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The committed sample and the generator agree (so the golden files describe it).
	for _, f := range []string{rundir.MetaFile, rundir.AttemptsFile, rundir.EventsFile, rundir.TruthFile} {
		want, err := os.ReadFile(filepath.Join(sampleRun, f))
		if err != nil {
			t.Fatalf("%v (run with -update to create the sample run)", err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, f))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the generator and %s differ (run with -update)", f, sampleRun)
		}
	}
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	var term bytes.Buffer
	Terminal(&term, s)
	base := *s
	base.Run.ID = "base-run"
	base.Delivery.Latency.P95 *= 0.8
	base.Delivery.Lost = 0
	var ctext, cmd bytes.Buffer
	cmp := reports.CompareRuns(reports.Run{Summary: &base}, reports.Run{Summary: s}, reports.DefaultTolerance())
	if err := cmp.WriteText(&ctext); err != nil {
		t.Fatal(err)
	}
	if err := cmp.WriteMarkdown(&cmd); err != nil {
		t.Fatal(err)
	}
	outputs := map[string][]byte{"terminal.txt": term.Bytes(), "compare.txt": ctext.Bytes(), "compare.md": cmd.Bytes()}
	for _, f := range []string{rundir.SummaryFile, rundir.HTMLFile, rundir.MarkdownFile, rundir.JUnitFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		outputs[f] = b
	}
	// The chart files report.md links, so that its links resolve here too.
	charts, _ := filepath.Glob(filepath.Join(dir, rundir.ChartGlob))
	for _, f := range charts {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outputs[filepath.Base(f)] = b
	}
	for name, got := range outputs {
		p := filepath.Join("..", "testdata", "golden", name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (run with -update if the change is meant):\n%s", name, p, firstDiff(got, want))
		}
	}
}

func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < max(len(la), len(lb)); i++ {
		var x, y []byte
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if !bytes.Equal(x, y) {
			return "line " + itoa(int64(i+1)) + ":\n got: " + string(x) + "\nwant: " + string(y)
		}
	}
	return ""
}
