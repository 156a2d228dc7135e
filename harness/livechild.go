package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"

	"github.com/msgload/msgload/internal/memlimit"
	"github.com/msgload/msgload/reports"
)

// The live analysis runs in a process of its own: the executable that runs
// the run, started again with liveChildEnv set (the init below: any program
// that links harness — msgload, a test binary — can be its own live
// analyser). The child runs reports.Analyze over the part's directory, the
// one analysis `msgload report` runs, under the report's memory limit
// (memlimit.ForReport), judges the abortOnFail thresholds it is given on it
// (reports.LiveThreshold), and answers with their states and, for a
// checkpoint, the partial summary.json (reports.Summary.PartialJSON), which
// the run writes. It only reads the run directory.
//
// Why a process (issue 23): in the run's own process each analysis decoded
// every line so far again beside the attack; its state and garbage came on
// top of the attack's heap, and from about minute 9 of a 1,000/s run with
// callbacks the process was analysing all the time — the run's peak of
// memory grew 16.8 bytes a message from 1 to 10 minutes while the attack
// alone stayed flat. Paced to a quarter of a core so that the sends never
// waited for it, an analysis took four times its work: a minute at minute 9,
// and an abortOnFail threshold was judged that late. In a child the
// analysis's memory is the child's, given back whole when it exits, and the
// child runs at the lowest CPU priorities (niceness liveNice for a
// checkpoint, judgeNice for a judgement alone, every thread of it, from its
// first instruction: runNiced): the
// kernel gives the attack the cores first, and the analysis any core the
// attack leaves idle at full speed. The child is killed when the
// run's process dies (Linux: PR_SET_PDEATHSIG) and when the live loop stops.

// liveChildEnv set in a process's environment makes it a live analysis (its
// request on standard input) instead of the program it is.
const liveChildEnv = "MSGLOAD_LIVE_ANALYSIS_CHILD"

// liveNice is the niceness of a checkpoint's analysis: the least priority.
// judgeNice is a judgement's alone: the least but one step, so that when a
// checkpoint reads every line so far beside it (live.go) the judgement gets
// most of what the attack leaves idle (the kernel's weights: 36 against 15)
// and a stop comes sooner; the attack's weight is 1,024. Neither is ever
// above the run's own niceness (lowerPriority).
const (
	liveNice  = 19
	judgeNice = 15
)

// niceFor is the niceness of the analysis req asks for.
func niceFor(req liveRequest) int {
	if req.Checkpoint {
		return liveNice
	}
	return judgeNice
}

func init() {
	if os.Getenv(liveChildEnv) != "1" {
		return
	}
	os.Exit(serveLiveChild(os.Stdin, os.Stdout))
}

// liveRequest is what the run asks of one live analysis.
type liveRequest struct {
	Dir        string   `json:"dir"`
	Via        string   `json:"via"`                  // the scenario's delivery.via (reports.CompileLive)
	Thresholds []string `json:"thresholds,omitempty"` // the abortOnFail thresholds to judge, as written
	Checkpoint bool     `json:"checkpoint,omitempty"` // answer the partial summary.json
}

// liveReply is a live analysis's answer.
type liveReply struct {
	States  []reports.LiveState `json:"states,omitempty"`  // one a threshold asked, in its order
	Partial []byte              `json:"partial,omitempty"` // the checkpoint's summary.json, as written
	Error   string              `json:"error,omitempty"`   // the analysis failed (the run tries again later)
	// What the child read and ran under, for a test to see: "sends" when it
	// read the sends alone (reports.AnalyzeSends), "counts" when it read
	// them in the counting passes alone (reports.AnalyzeSendsCounting),
	// "counts, then sends" when a percentile there was too near its bound,
	// "counts and events" when it read the sends and the sink's events in
	// the counting passes (reports.AnalyzeCounting; "…, then all" when a
	// percentile was too near), "all" otherwise; its niceness, the
	// niceness it was started with, and the soft memory limit during the
	// analysis (MaxInt64: none).
	Read        string `json:"read"`
	Nice        int    `json:"nice"`
	StartedNice int    `json:"started_nice"` // the niceness it was started with (runNiced)
	MemoryLimit int64  `json:"memory_limit"`
}

// serveLiveChild reads a liveRequest from in, analyses, and writes the
// liveReply to out; the exit status is 2 when there was no request to read.
func serveLiveChild(in io.Reader, out io.Writer) int {
	var req liveRequest
	if err := json.NewDecoder(in).Decode(&req); err != nil || req.Dir == "" {
		fmt.Fprintf(os.Stderr, "msgload: %s is set, but standard input holds no live analysis request (%v)\n", liveChildEnv, err)
		return 2
	}
	started := niceness()
	lowerPriority(niceFor(req))
	reply := liveAnalyze(req)
	reply.Nice, reply.StartedNice = niceness(), started
	if err := json.NewEncoder(out).Encode(reply); err != nil {
		return 1
	}
	return 0
}

// liveAnalyze is one live analysis as the child runs it. A judgement
// alone, of thresholds that all read figures of the sends, reads the sends
// alone (reports.AnalyzeSends: the same figures, from a third of a run with
// callbacks's bytes), and when none reads the id collisions or a drift
// slope (reports.LiveThreshold.Counted: a count, a share, a max, a mean, a
// percentile), only as far as the pass that counts them
// (reports.AnalyzeSendsCounting: two readings of attempts.jsonl instead of
// three, the first of them only each line's sequence; a percentile is known
// there to 0.1 %, and one that close to its bound sends the judgement to
// AnalyzeSends). A judgement that reads delivery's counts too (those the
// carried analysis judges when it carries the run: LiveThreshold.Carried)
// reads the sends and the sink's events in the counting passes, the
// simulator's truth unread (reports.AnalyzeCounting; a percentile too
// near its bound: Analyze); a checkpoint reads everything.
func liveAnalyze(req liveRequest) (reply liveReply) {
	defer memlimit.ForReport()()
	reply.MemoryLimit = debug.SetMemoryLimit(-1)
	ths := make([]*reports.LiveThreshold, len(req.Thresholds))
	errs := make([]error, len(req.Thresholds))
	sends, counted, carried := !req.Checkpoint, !req.Checkpoint, !req.Checkpoint
	for i, src := range req.Thresholds {
		ths[i], errs[i] = reports.CompileLive(src, req.Via)
		sends = sends && errs[i] == nil && ths[i].Sends()
		counted = counted && errs[i] == nil && ths[i].Counted()
		carried = carried && errs[i] == nil && (ths[i].Sends() || ths[i].Carried())
	}
	// whole (named wholeRead) judges a percentile too near its bound.
	analyze, read, whole, wholeRead := reports.Analyze, "all", reports.Analyze, "all"
	switch {
	case sends && counted:
		analyze, read, whole, wholeRead = reports.AnalyzeSendsCounting, "counts", reports.AnalyzeSends, "sends"
	case sends:
		analyze, read = reports.AnalyzeSends, "sends"
	case carried && counted:
		// Counts of the sink's too (delivery.duplicates, …): the sends
		// and the events in the counting passes, the truth unread.
		analyze, read = reports.AnalyzeCounting, "counts and events"
	}
	s, err := analyze(req.Dir)
	if err != nil {
		reply.Error = err.Error()
		return reply
	}
	var undecided bool
	reply.States, undecided = judgeAll(req.Thresholds, ths, errs, s)
	if undecided {
		// A percentile within its span of a bound (0.1 %): the third
		// pass, which keeps the values of the wanted buckets, judges.
		if s, err = whole(req.Dir); err != nil {
			reply.Error = err.Error()
			return reply
		}
		reply.States, _ = judgeAll(req.Thresholds, ths, errs, s)
		read += ", then " + wholeRead
	}
	reply.Read = read
	if req.Checkpoint {
		if reply.Partial, err = s.PartialJSON(); err != nil {
			reply.Error = err.Error()
		}
	}
	return reply
}

// judgeAll judges each threshold srcs[i] (compiled ths[i], or errs[i]) on
// s, and says whether one is undecided on the counting pass's spans.
func judgeAll(srcs []string, ths []*reports.LiveThreshold, errs []error, s *reports.Summary) (states []reports.LiveState, undecided bool) {
	for i, src := range srcs {
		if errs[i] != nil {
			states = append(states, reports.LiveState{Expr: src, Why: errs[i].Error()})
			continue
		}
		st := liveState(ths[i].Judge(s))
		undecided = undecided || st.Undecided
		states = append(states, st)
	}
	return states, undecided
}

// liveState is a threshold's judgement as the run takes it: a value that
// is not a number is not known yet.
func liveState(st reports.LiveState) reports.LiveState {
	if math.IsNaN(st.Value) || math.IsInf(st.Value, 0) {
		st.Known, st.Value, st.Why = false, 0, "its figure has no value yet"
	}
	return st
}

// liveChildStderr is how much of a child's standard error a failure quotes.
const liveChildStderr = 4 << 10

// runLiveChild runs one live analysis in a child process of exe, killed
// when ctx ends.
func runLiveChild(ctx context.Context, exe string, req liveRequest) (liveReply, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return liveReply{}, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), liveChildEnv+"=1")
	cmd.Stdin = bytes.NewReader(in)
	var out bytes.Buffer
	errs := &capped{max: liveChildStderr}
	cmd.Stdout, cmd.Stderr = &out, errs
	cmd.SysProcAttr = liveChildAttr()
	cmd.WaitDelay = time.Second
	if err := runNiced(niceFor(req), cmd.Run); err != nil {
		if ctx.Err() != nil {
			return liveReply{}, ctx.Err()
		}
		return liveReply{}, fmt.Errorf("live analysis (%s): %w: %s", exe, err, strings.TrimSpace(errs.b.String()))
	}
	var reply liveReply
	if err := json.Unmarshal(out.Bytes(), &reply); err != nil {
		return liveReply{}, fmt.Errorf("live analysis (%s): its answer: %w", exe, err)
	}
	if reply.Error != "" {
		return reply, errors.New(reply.Error)
	}
	return reply, nil
}

// capped keeps the first max bytes written to it.
type capped struct {
	b   bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
