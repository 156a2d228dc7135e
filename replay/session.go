package replay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// SessionOptions describe `msgload replay FILE`: a whole replay, from the file
// to a run directory with its report.
type SessionOptions struct {
	File        string
	Format      string // FormatAuto, FormatMsgload, FormatHAR, FormatVegeta
	Read        ReadOptions
	Speed       float64
	Out         string // parent of run directories
	RunID       string // "" makes one: <UTC time>-replay-<random>
	ExternalIDs string

	// Target. All empty: the embedded simulator and sink.
	MessagingURL, NotifyURL, TokenURL, SinkURL string
	Messaging, Notify                          []Cred

	Grace   time.Duration // how long to wait for callbacks after the last send (embedded: until the simulator has nothing pending)
	Timeout time.Duration // per request
	Version string
	Log     io.Writer // progress lines; nil: none
}

// SessionResult is what a replay produced.
type SessionResult struct {
	Dir        string
	Report     *Report
	Summary    *reports.Summary // nil when the reports could not be built
	SummaryErr error
}

// NewRunID returns a run id for a replay: <UTC time>-replay-<6 hex digits>.
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-replay-" + hex.EncodeToString(b[:])
}

// Session loads the file, replays it and writes the run directory: run.json,
// attempts.jsonl, results.bin, events.jsonl and truth.json (embedded), replay.json
// and the reports.
func Session(ctx context.Context, o SessionOptions) (*SessionResult, error) {
	reqs, err := LoadWith(o.File, o.Format, o.Read)
	if err != nil {
		return nil, err
	}
	if o.Speed == 0 {
		o.Speed = 1
	}
	if _, err := NewPacerOffsets(nil, o.Speed); err != nil {
		return nil, err
	}
	if o.RunID == "" {
		o.RunID = NewRunID(time.Now())
	}
	if o.Out == "" {
		o.Out = "runs"
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	dir := filepath.Join(o.Out, o.RunID)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "msgload replay: "+format+"\n", args...)
		}
	}

	embedded := o.MessagingURL == "" && o.NotifyURL == ""
	var emb *Embedded
	target := "embedded"
	if embedded {
		emb, err = StartEmbedded(dir, o.RunID, nil)
		if err != nil {
			return nil, err
		}
		defer emb.Close()
		o.MessagingURL, o.NotifyURL, o.SinkURL = emb.SimURL, emb.SimURL, emb.SinkURL
		o.TokenURL = ""
		if len(o.Messaging) == 0 {
			o.Messaging = emb.Messaging
		}
		if len(o.Notify) == 0 {
			o.Notify = emb.Notify
		}
	} else {
		target = strings.TrimSpace(o.MessagingURL + " " + o.NotifyURL)
	}

	api, sends := mainAPI(reqs)
	meta := rundir.Meta{
		ID: o.RunID, Scenario: "replay-" + sanitizeName(filepath.Base(o.File)), API: api, Target: target,
		Version: o.Version, Start: time.Now(),
		Clients: append(credIDs(o.Messaging), credIDs(o.Notify)...),
		Planned: rundir.Plan{Profile: "replay", Requests: int64(sends),
			Duration: rundir.Duration(time.Duration(float64(reqs[len(reqs)-1].Offset) / o.Speed))},
		Limit:    rundir.Limit{Mode: "exceed"},
		Delivery: rundir.Delivery{Via: "sink", Grace: rundir.Duration(o.Grace)},
	}
	if d := meta.Planned.Duration.D(); d > 0 {
		meta.Planned.Rate = float64(len(reqs)) / d.Seconds()
	}
	if err := writeJSON(filepath.Join(dir, rundir.MetaFile), meta); err != nil {
		return nil, err
	}
	logf("%d requests from %s at %v× → %s (run %s)", len(reqs), o.File, o.Speed, target, o.RunID)

	rep, err := Run(ctx, RunOptions{
		Requests: reqs, Speed: o.Speed, MessagingURL: o.MessagingURL, NotifyURL: o.NotifyURL, TokenURL: o.TokenURL,
		Messaging: o.Messaging, Notify: o.Notify, SinkURL: o.SinkURL, ExternalIDs: o.ExternalIDs,
		RunID: o.RunID, Dir: dir, Timeout: o.Timeout,
	})
	if err != nil {
		return nil, err
	}
	meta.Start, meta.AttackEnd = rep.Start, rep.End
	if embedded && ctx.Err() == nil {
		logf("waiting up to %v for callbacks", o.Grace)
		emb.Wait(ctx, o.Grace)
	} else if o.SinkURL != "" && ctx.Err() == nil && o.Grace > 0 {
		logf("waiting %v for callbacks at %s", o.Grace, o.SinkURL)
		select {
		case <-ctx.Done():
		case <-time.After(o.Grace):
		}
	}
	if embedded {
		truth := emb.Truth()
		if err := emb.Close(); err != nil {
			logf("stopping the embedded simulator and sink: %v", err)
		}
		if err := writeJSON(filepath.Join(dir, rundir.TruthFile), truth); err != nil {
			return nil, err
		}
	}
	meta.End = time.Now()
	meta.Interrupted = ctx.Err() != nil
	if err := writeJSON(filepath.Join(dir, rundir.MetaFile), meta); err != nil {
		return nil, err
	}
	res := &SessionResult{Dir: dir, Report: rep}
	res.Summary, res.SummaryErr = reports.Build(dir)
	return res, nil
}

// mainAPI is the API with most sends in reqs, and its count of sends.
func mainAPI(reqs []Request) (string, int) {
	n := map[string]int{}
	for _, r := range reqs {
		if r.Op == OpSend {
			n[r.API]++
		}
	}
	if n[APINotify] > n[APIMessaging] {
		return rundir.APINotify, n[APINotify]
	}
	return rundir.APIMessaging, n[APIMessaging]
}

func sanitizeName(s string) string {
	s = strings.TrimSuffix(s, filepath.Ext(s))
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '-'
		}
	}
	if len(b) > 32 {
		b = b[:32]
	}
	return string(b)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// WriteTable prints the recorded against replayed response codes, and how late
// the replay ran.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "replay %s at %v×: %d of %d requests sent, %d answered with the recorded code\n",
		r.RunID, r.Speed, r.Sent, r.Planned, r.Matching)
	for why, n := range r.Skipped {
		fmt.Fprintf(w, "  not replayed: %d (%s)\n", n, why)
	}
	fmt.Fprintf(w, "  %-10s %9s %9s %8s\n", "api", "recorded", "replayed", "count")
	for _, c := range r.Codes {
		fmt.Fprintf(w, "  %-10s %9s %9s %8d\n", c.API, codeText(c.Recorded), codeText(c.Replayed), c.Count)
	}
	l := r.Lateness
	fmt.Fprintf(w, "  pacing: %d of %d hits more than %v late; lateness p50 %v, p99 %v, max %v\n",
		l.Late, l.Hits, LateThreshold, l.P50, l.P99, l.Max)
	for _, e := range r.WebhookErrors {
		fmt.Fprintf(w, "  webhook not pointed at the sink: %s\n", e)
	}
	if r.TokenErrors > 0 {
		fmt.Fprintf(w, "  %d requests went without a token (the token endpoint failed)\n", r.TokenErrors)
	}
}

func codeText(c int) string {
	if c == 0 {
		return "-"
	}
	return fmt.Sprint(c)
}
