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
	"sync"
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
	Dir   string       // the run directory
	Parts []PartResult // one per API of the recording, in the order messaging, notify
}

// PartResult is the replay of one API. A recording of one API is replayed in
// the run directory itself; one of both APIs in DIR/messaging and DIR/notify,
// at once and on the same clock, each with its own simulator and sink when
// embedded (as the harness runs the parts of a scenario).
type PartResult struct {
	API        string
	Dir        string
	Report     *Report
	Summary    *reports.Summary // nil when the reports could not be built
	SummaryErr error
	Err        error // the part could not run
}

// Interrupted reports whether any part was cut short.
func (r *SessionResult) Interrupted() bool {
	for _, p := range r.Parts {
		if p.Report != nil && p.Report.Interrupted {
			return true
		}
	}
	return false
}

// NewRunID returns a run id for a replay: <UTC time>-replay-<6 hex digits>.
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-replay-" + hex.EncodeToString(b[:])
}

// splitParts splits reqs by API: messaging (with requests of no known API) and
// notify (with token calls). Offsets are kept: the parts share one clock.
func splitParts(reqs []Request) map[string][]Request {
	out := map[string][]Request{}
	for _, r := range reqs {
		api := rundir.APIMessaging
		if r.API == APINotify || r.API == APIToken {
			api = rundir.APINotify
		}
		out[api] = append(out[api], r)
	}
	// A notify part of token calls alone has nothing to replay.
	onlyTokens := true
	for _, r := range out[rundir.APINotify] {
		if r.API != APIToken {
			onlyTokens = false
		}
	}
	if onlyTokens {
		delete(out, rundir.APINotify)
	}
	return out
}

// Session loads the file, replays it and writes the run directory: run.json,
// attempts.jsonl, results.bin, events.jsonl and truth.json (embedded), replay.json
// and the reports, per part.
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
	if o.Log != nil {
		o.Log = &lockedWriter{w: o.Log} // the parts log at once
	}
	parts := splitParts(reqs)
	apis := []string{}
	for _, api := range []string{rundir.APIMessaging, rundir.APINotify} {
		if len(parts[api]) > 0 {
			apis = append(apis, api)
		}
	}
	res := &SessionResult{Dir: dir, Parts: make([]PartResult, len(apis))}
	var wg sync.WaitGroup
	for i, api := range apis {
		pdir := dir
		if len(apis) > 1 {
			pdir = filepath.Join(dir, api)
			if err := os.Mkdir(pdir, 0o755); err != nil {
				return nil, fmt.Errorf("create part directory: %w", err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Parts[i] = runPart(ctx, o, api, parts[api], pdir)
		}()
	}
	wg.Wait()
	for _, p := range res.Parts {
		if p.Err != nil && len(res.Parts) == 1 {
			return nil, p.Err
		}
	}
	return res, nil
}

// runPart replays the requests of one API into dir.
func runPart(ctx context.Context, o SessionOptions, api string, reqs []Request, dir string) PartResult {
	pr := PartResult{API: api, Dir: dir}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "msgload replay: %s: "+format+"\n", append([]any{api}, args...)...)
		}
	}
	embedded := o.MessagingURL == "" && o.NotifyURL == ""
	var emb *Embedded
	target := "embedded"
	if embedded {
		var err error
		emb, err = StartEmbedded(dir, o.RunID, nil)
		if err != nil {
			pr.Err = err
			return pr
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
	} else if api == rundir.APINotify {
		target = o.NotifyURL
		if o.SinkURL == "" {
			logf("no --sink: webhooks stay where the service has them; delivery is not measured")
		}
	} else {
		target = o.MessagingURL
		if o.SinkURL == "" {
			logf("no --sink: callbacks go to the recorded callback URLs; delivery is not measured")
		}
	}
	sends := 0
	for _, r := range reqs {
		if r.Op == OpSend {
			sends++
		}
	}
	clients := credIDs(o.Messaging)
	if api == rundir.APINotify {
		clients = credIDs(o.Notify)
	}
	first, last := reqs[0].Offset, reqs[len(reqs)-1].Offset
	meta := rundir.Meta{
		ID: o.RunID, Scenario: "replay-" + sanitizeName(filepath.Base(o.File)), API: api, Target: target,
		Version: o.Version, Host: rundir.Hostname(), Start: time.Now(), Clients: clients,
		Planned: rundir.Plan{Profile: "replay", Requests: int64(sends),
			Duration: rundir.Duration(time.Duration(float64(last-first) / o.Speed))},
		Limit:    rundir.Limit{Mode: "exceed"},
		Delivery: rundir.Delivery{Via: "sink", Grace: rundir.Duration(o.Grace)},
	}
	if d := meta.Planned.Duration.D(); d > 0 {
		meta.Planned.Rate = float64(len(reqs)) / d.Seconds()
	}
	if err := writeJSON(filepath.Join(dir, rundir.MetaFile), meta); err != nil {
		pr.Err = err
		return pr
	}
	logf("%d requests from %s at %v× → %s (run %s)", len(reqs), o.File, o.Speed, target, o.RunID)
	rep, err := Run(ctx, RunOptions{
		Requests: reqs, Speed: o.Speed, MessagingURL: o.MessagingURL, NotifyURL: o.NotifyURL, TokenURL: o.TokenURL,
		Messaging: o.Messaging, Notify: o.Notify, SinkURL: o.SinkURL, ExternalIDs: o.ExternalIDs,
		RunID: o.RunID, Dir: dir, Timeout: o.Timeout,
	})
	if err != nil {
		pr.Err = err
		return pr
	}
	pr.Report = rep
	meta.Start, meta.AttackEnd = rep.Start, rep.End
	if used := usedClients(rep, api); len(used) > 0 {
		meta.Clients = used // the clients the replay really used, not every one it was given
	}
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
			pr.Err = err
			return pr
		}
	}
	meta.End = time.Now()
	meta.Interrupted = ctx.Err() != nil
	if err := writeJSON(filepath.Join(dir, rundir.MetaFile), meta); err != nil {
		pr.Err = err
		return pr
	}
	pr.Summary, pr.SummaryErr = reports.Build(dir)
	return pr
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

// lockedWriter serialises writes from the parts.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// usedClients lists the replay clients the recorded ones were mapped onto.
func usedClients(rep *Report, api string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range rep.Clients[api] {
		if !seen[p[1]] {
			seen[p[1]] = true
			out = append(out, p[1])
		}
	}
	return out
}
