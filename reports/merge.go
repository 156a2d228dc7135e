package reports

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// errMerge means the directories given to Merge are not shards of one run.
var errMerge = errors.New("merge")

// MergeOptions are the choices of Merge.
type MergeOptions struct {
	// SinkLogs are the logs (events.jsonl, or a sink's data directory) of the
	// sink replicas the shards' services called back. When given, the merged
	// events.jsonl is read from them instead of the shards' copies, by the
	// rule a run copies from a standalone sink: the run's tagged events, and
	// the untagged ones received between the run's first start and last end.
	// A directory that holds no events.jsonl is a directory of sinks' data
	// directories (DIR/*/events.jsonl), as replicas sharing a volume write.
	SinkLogs []string
}

// shardDir is one shard's directory and its run.json.
type shardDir struct {
	dir  string
	meta rundir.Meta
}

// Merge builds in out the run directory of a sharded run from its shards'
// directories (msgload run --shard I/N) and then concludes it (Conclude; its
// reports are render.Merge's), so that
// summary.json, the reports and the verdict are what a single process would
// compute from the union of the shards' raw files: attempts.jsonl is their
// concatenation (the shards keep the run's global sequences), events.jsonl
// takes each tagged event from the shard that owns its message and every
// untagged one once, run.json spans the shards (first start, last end, every
// client, the plans added), truth.jsonl concatenates the simulators' truths. Counts
// add and percentiles are computed over every value of the union (never
// averaged); thresholds are evaluated once, on the merged figures. The merged
// raw files stay in out, so msgload report out builds the same again.
//
// Shards missing from the list make the run incomplete (run.json says which);
// directories of different runs, or two of one shard, are refused (errMerge).
func Merge(out string, dirs []string, o MergeOptions) (*Summary, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: no shard directories", errMerge)
	}
	shards := make([]shardDir, 0, len(dirs))
	for _, d := range dirs {
		b, err := rundir.ReadFile(filepath.Join(d, rundir.MetaFile), rundir.MaxDocBytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errMerge, d, err)
		}
		var m rundir.Meta
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%w: %s: %s: %v", errMerge, d, rundir.MetaFile, err)
		}
		if m.Shard == nil {
			return nil, fmt.Errorf("%w: %s is not the directory of a shard (its run.json names no shard; run it with msgload run --shard I/N)", errMerge, d)
		}
		shards = append(shards, shardDir{dir: d, meta: m})
	}
	sort.SliceStable(shards, func(i, j int) bool { return shards[i].meta.Shard.Index < shards[j].meta.Shard.Index })
	first := shards[0].meta
	seen := map[int]string{}
	for _, s := range shards {
		m := s.meta
		switch {
		case m.ID != first.ID:
			return nil, fmt.Errorf("%w: %s is of run %s, %s of run %s", errMerge, shards[0].dir, first.ID, s.dir, m.ID)
		case m.Shard.Count != first.Shard.Count || m.Shard.By != first.Shard.By || m.Shard.Clients != first.Shard.Clients:
			return nil, fmt.Errorf("%w: %s is shard %s by %s, %s shard %s by %s: not one split", errMerge, shards[0].dir, first.Shard, first.Shard.By, s.dir, m.Shard, m.Shard.By)
		case seen[m.Shard.Index] != "":
			return nil, fmt.Errorf("%w: %s and %s are both shard %s", errMerge, seen[m.Shard.Index], s.dir, m.Shard)
		}
		seen[m.Shard.Index] = s.dir
	}
	if ao, err := filepath.Abs(out); err == nil {
		for _, s := range shards {
			if ad, err := filepath.Abs(s.dir); err == nil && ad == ao {
				return nil, fmt.Errorf("%w: the merged run cannot be written into shard %s's own directory %s; name another, e.g. its parent", errMerge, s.meta.Shard, s.dir)
			}
		}
	}
	if err := os.MkdirAll(out, rundir.DirMode); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	meta := mergeMeta(shards, dirs)
	meta.Merged.SinkLogs = slices.Clone(o.SinkLogs)
	meta.Merged.Problems = shardProblems(shards, o)
	if err := mergeAttempts(out, shards); err != nil {
		return nil, err
	}
	var err error
	if len(o.SinkLogs) > 0 {
		err = mergeSinkLogs(out, meta, o.SinkLogs)
	} else {
		err = mergeEvents(out, shards)
	}
	if err != nil {
		return nil, err
	}
	if err := mergeTruth(out, shards); err != nil {
		return nil, err
	}
	if err := mergeTargetMemory(out, shards); err != nil {
		return nil, err
	}
	if err := mergeResults(out, shards); err != nil {
		return nil, err
	}
	if b, err := rundir.ReadFile(filepath.Join(shards[0].dir, rundir.ScenarioFile), rundir.MaxDocBytes); err == nil {
		if err := rundir.WriteFile(filepath.Join(out, rundir.ScenarioFile), b); err != nil {
			return nil, err
		}
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := rundir.WriteFile(filepath.Join(out, rundir.MetaFile), append(b, '\n')); err != nil {
		return nil, err
	}
	return Conclude(out)
}

// mergeMeta is the run.json of the whole run: the first start, the last ends,
// the clients in the scenario's order, the plans added, no shard.
func mergeMeta(shards []shardDir, dirs []string) rundir.Meta {
	m := shards[0].meta
	m.MetricsAddr = ""
	sh := *m.Shard
	m.Shard = nil
	m.Planned.Requests, m.Planned.Rate = 0, 0
	m.Clients = nil
	m.Aborted, m.DiskLow, m.SinkWriteErrors, m.SinkUnread, m.Failed = nil, nil, 0, nil, ""
	merged := &rundir.Merged{Shards: sh.Count, By: sh.By, Dirs: slices.Clone(dirs), Indexes: []int{}}
	have := map[int]bool{}
	for _, s := range shards {
		x := s.meta
		have[x.Shard.Index] = true
		merged.Indexes = append(merged.Indexes, x.Shard.Index)
		if !x.Start.IsZero() && (m.Start.IsZero() || x.Start.Before(m.Start)) {
			m.Start = x.Start
		}
		if x.AttackEnd.After(m.AttackEnd) {
			m.AttackEnd = x.AttackEnd
		}
		if x.End.After(m.End) {
			m.End = x.End
		}
		// A shard with no end was killed (or is still running): the run did
		// not finish either.
		m.Interrupted = m.Interrupted || x.Interrupted || x.End.IsZero()
		m.Planned.Requests += x.Planned.Requests
		m.Planned.Rate += x.Planned.Rate
		m.Planned.Duration = max(m.Planned.Duration, x.Planned.Duration)
		if ab := x.Aborted; ab != nil && (m.Aborted == nil || ab.At.Before(m.Aborted.At)) {
			m.Aborted = ab // an abortOnFail threshold stopped a shard: the first one stopped the run
		}
		m.SinkWriteErrors += x.SinkWriteErrors
		if x.SinkUnread != nil && m.SinkUnread == nil {
			m.SinkUnread = x.SinkUnread // a shard's sink was not all read: the run's was not either (the first one said)
		}
		if d := x.DiskLow; d != nil && (m.DiskLow == nil || d.At.Before(m.DiskLow.At)) {
			m.DiskLow = d // a shard's disk ran low: the run is incomplete (the first one said)
		}
		if x.Failed != "" && m.Failed == "" {
			m.Failed = x.Failed // a shard's attack failed: the run is incomplete (the first one said)
		}
	}
	for i := 0; i < sh.Count; i++ {
		if !have[i] {
			merged.Missing = append(merged.Missing, i)
		}
	}
	// A shard that is missing did not finish: the run is incomplete.
	m.Interrupted = m.Interrupted || len(merged.Missing) > 0
	// Clients: by clients, client i was the (i/N)-th of shard i mod N; by
	// sequence every shard had all of them.
	byIndex := map[int][]string{}
	for _, s := range shards {
		byIndex[s.meta.Shard.Index] = s.meta.Clients
	}
	if sh.By == rundir.ShardByClients {
		for i := 0; i < sh.Clients; i++ {
			if cs := byIndex[i%sh.Count]; i/sh.Count < len(cs) {
				m.Clients = append(m.Clients, cs[i/sh.Count])
			}
		}
	} else {
		m.Clients = slices.Clone(shards[0].meta.Clients)
	}
	m.Merged = merged
	return m
}

// Whose a merge problem is (rundir.MergeProblem.Whose).
const (
	whoseEnvironment = "environment" // the shard could not finish: the run is incomplete
	whoseMeasurement = "measurement" // the shards' files are not a whole record of one run: error
)

// shardProblems is what is wrong with the shards given to the merge, each
// naming its shard: a plan that is not the first shard's (two runs reused
// one run id), a shard that did not finish, a raw file missing or empty, a
// shard whose own report is incomplete or error. Any of them keeps the merged
// run from passing, whatever its figures: the merged verdict is the worst of
// the shards' and the union's.
func shardProblems(shards []shardDir, o MergeOptions) []rundir.MergeProblem {
	var ps []rundir.MergeProblem
	for _, s := range shards[1:] {
		ps = append(ps, planProblems(shards[0], s)...)
	}
	for _, s := range shards {
		n, raw := rawFileProblems(s, o)
		ps = append(ps, finishProblems(s, n)...)
		ps = append(ps, startProblems(s)...)
		ps = append(ps, raw...)
		ps = append(ps, ownVerdictProblems(s)...)
	}
	return ps
}

// planProblems compares shard s with the first: one run has one scenario
// (digest), one start instant, and shards that ran within a run's span of
// each other.
func planProblems(first, s shardDir) []rundir.MergeProblem {
	a, b := first.meta, s.meta
	var what []string
	if a.ScenarioDigest != "" && b.ScenarioDigest != "" && a.ScenarioDigest != b.ScenarioDigest {
		what = append(what, fmt.Sprintf("their scenarios differ (%s, %s)", a.ScenarioDigest, b.ScenarioDigest))
	}
	// Without a start instant shards may run one after another (by hand, or
	// a Job short of nodes), but not further apart than a run lasts.
	span := a.Planned.Duration.D() + a.Delivery.Grace.D()
	switch {
	case !a.StartAt.Equal(b.StartAt):
		what = append(what, fmt.Sprintf("their start instants differ (%s, %s)", startAtText(a.StartAt), startAtText(b.StartAt)))
	case !b.End.IsZero() && a.Start.Sub(b.End) > span:
		what = append(what, fmt.Sprintf("shard %s started at %s, %s after shard %s had ended, longer than the run lasts", a.Shard, ts(a.Start), a.Start.Sub(b.End).Round(time.Second), b.Shard))
	case !a.End.IsZero() && b.Start.Sub(a.End) > span:
		what = append(what, fmt.Sprintf("shard %s started at %s, %s after shard %s had ended, longer than the run lasts", b.Shard, ts(b.Start), b.Start.Sub(a.End).Round(time.Second), a.Shard))
	}
	if len(what) == 0 {
		return nil
	}
	return []rundir.MergeProblem{{Shard: b.Shard.Index, Verdict: VerdictError, Whose: whoseMeasurement,
		Reason: fmt.Sprintf("shard %s (%s) and shard %s (%s) are not one run, though both say run %s: %s; their union measures no one run (measurement: merge the shards of one run, and give each run an id of its own)",
			b.Shard, s.dir, a.Shard, first.dir, a.ID, strings.Join(what, "; "))}}
}

func startAtText(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return ts(t)
}

// finishProblems says whether the shard finished: a run.json with no end is
// a process that was killed (or still runs), one interrupted stopped sending
// early. Either is the environment's: the run is incomplete. n is the
// attempts it recorded (-1: unknown).
func finishProblems(s shardDir, n int64) []rundir.MergeProblem {
	m := s.meta
	var what string
	switch {
	case m.End.IsZero():
		what = "did not finish: its run.json has no end (its process was killed, or still runs)"
		if n >= 0 {
			what += fmt.Sprintf("; the merge holds the %s it recorded before", Plural(n, "attempt"))
		}
	case m.Interrupted:
		what = "was interrupted: it stopped sending before its plan was done"
	default:
		return nil
	}
	return []rundir.MergeProblem{{Shard: m.Shard.Index, Verdict: VerdictIncomplete, Whose: whoseEnvironment,
		Reason: fmt.Sprintf("shard %s (%s) %s (environment: run the shard again, or merge a run whose shards all finished)", m.Shard, s.dir, what)}}
}

// startProblems says whether the shard began with the others: its run.json
// says when it began more than a second after the start instant (late_start_s:
// a pod scheduled or pulled late) or without shards whose ready markers were
// not in the start barrier (barrier_missing). Either way the shards' loads
// did not overlap as planned, so the union is not the planned load: the
// environment's, incomplete.
func startProblems(s shardDir) []rundir.MergeProblem {
	m := s.meta
	var what []string
	if m.LateStart > 0 {
		what = append(what, fmt.Sprintf("began %s s after the start instant %s", strconv.FormatFloat(m.LateStart, 'f', -1, 64), startAtText(m.StartAt)))
	}
	if len(m.BarrierMissing) > 0 {
		idx := make([]string, len(m.BarrierMissing))
		for i, x := range m.BarrierMissing {
			idx[i] = strconv.Itoa(x)
		}
		what = append(what, fmt.Sprintf("began without shards %s, not ready at the start barrier", strings.Join(idx, ", ")))
	}
	if len(what) == 0 {
		return nil
	}
	return []rundir.MergeProblem{{Shard: m.Shard.Index, Verdict: VerdictIncomplete, Whose: whoseEnvironment,
		Reason: fmt.Sprintf("shard %s (%s) %s: the shards did not send together, so the merged load is not the one planned (environment: start every shard on time, e.g. pods scheduled and images pulled before the instant, and run again)", m.Shard, s.dir, strings.Join(what, "; "))}}
}

// rawFileProblems checks the shard's raw files as a single run's are checked
// (checkRawFiles), and more: attempts.jsonl and results.bin always, and
// events.jsonl when delivery is via the sink and no sink logs replace the
// shards' copies, must be there; a shard that finished a plan of messages
// must have recorded some. It returns the attempts recorded (-1: unknown).
func rawFileProblems(s shardDir, o MergeOptions) (int64, []rundir.MergeProblem) {
	m := s.meta
	var ps []rundir.MergeProblem
	bad := func(format string, args ...any) {
		ps = append(ps, rundir.MergeProblem{Shard: m.Shard.Index, Verdict: VerdictError, Whose: whoseMeasurement,
			Reason: fmt.Sprintf("shard %s (%s): ", m.Shard, s.dir) + fmt.Sprintf(format, args...) +
				" (a raw file missing or cut: the merged figures would leave out what it did not record)"})
	}
	need := []string{rundir.AttemptsFile, rundir.ResultsFile}
	if via := m.Delivery.Via; (via == "" || via == "sink") && len(o.SinkLogs) == 0 {
		need = append(need, rundir.EventsFile)
	}
	size := map[string]int64{}
	for _, name := range need {
		st, err := os.Stat(filepath.Join(s.dir, name))
		switch {
		case errors.Is(err, os.ErrNotExist):
			bad("%s is missing", name)
		case err != nil:
			bad("%s cannot be read (%v)", name, err)
		case st.IsDir():
			bad("%s is a directory", name)
		default:
			size[name] = st.Size()
		}
	}
	n := int64(-1)
	if _, ok := size[rundir.AttemptsFile]; ok {
		n = 0
		_ = eachLine(filepath.Join(s.dir, rundir.AttemptsFile), func([]byte) error { n++; return nil })
	}
	if m.End.IsZero() {
		return n, ps // killed: what it did not write is told by finishProblems
	}
	if n == 0 && m.Planned.Requests > 0 {
		bad("%s is empty, though the shard finished a plan of %s", rundir.AttemptsFile, Plural(m.Planned.Requests, "message"))
	}
	if r, ok := size[rundir.ResultsFile]; ok && r == 0 && n > 0 {
		bad("%s is empty, though %s holds %s", rundir.ResultsFile, rundir.AttemptsFile, Plural(n, "attempt"))
	}
	return n, ps
}

// ownVerdictProblems takes the verdict of the shard's own report
// (summary.json, built when it finished) when it is incomplete or error: a
// shard that fell behind its plan or disagreed with its truth makes the run
// so even where the union's figures hide it. Fail is the union's to judge (the
// thresholds are evaluated once, on the merged figures).
func ownVerdictProblems(s shardDir) []rundir.MergeProblem {
	m := s.meta
	if m.End.IsZero() || m.Interrupted {
		return nil // said by finishProblems
	}
	b, err := rundir.ReadFile(filepath.Join(s.dir, rundir.SummaryFile), rundir.MaxDocBytes)
	if err != nil {
		return nil // not built (a second interrupt): the checks above stand
	}
	var own struct {
		Verdict string   `json:"verdict"`
		Reasons []string `json:"verdict_reasons"`
	}
	if json.Unmarshal(b, &own) != nil || (own.Verdict != VerdictIncomplete && own.Verdict != VerdictError) {
		return nil
	}
	whose := whoseEnvironment
	if own.Verdict == VerdictError {
		whose = whoseMeasurement
	}
	return []rundir.MergeProblem{{Shard: m.Shard.Index, Verdict: own.Verdict, Whose: whose,
		Reason: fmt.Sprintf("shard %s (%s): its own report is %s: %s", m.Shard, s.dir, strings.ToUpper(own.Verdict), strings.Join(own.Reasons, "; "))}}
}

// noEndText is the reason of a run whose run.json has no end.
const noEndText = "run.json has no end: the run did not finish (its process was killed, or still runs); the figures cover what it recorded before"

// unfinishedReasons adds to the verdict's reasons what did not finish: a run
// whose run.json has no end (its process was killed: what it flushed is
// reported, incomplete), and in a merged run what the merge found (run.json
// merged.problems) and the shards missing from it: a problem of verdict
// incomplete makes the run incomplete at best, any other error.
func (a *analyzer) unfinishedReasons() {
	s := a.s
	if a.meta.End.IsZero() {
		s.early = append(s.early, reason(WhoseEnvironment, VerdictIncomplete, noEndText,
			"find why the process ended (a kill, the OOM killer, a pod's termination grace) and run again"))
	}
	m := a.meta.Merged
	if m == nil {
		return
	}
	if len(m.Missing) > 0 {
		idx := make([]string, len(m.Missing))
		for i, x := range m.Missing {
			idx[i] = strconv.Itoa(x)
		}
		what := fmt.Sprintf("shard %s of %d is missing from the merge: the figures lack what it sent", idx[0], m.Shards)
		if len(idx) > 1 {
			what = fmt.Sprintf("shards %s of %d are missing from the merge: the figures lack what they sent", strings.Join(idx, ", "), m.Shards)
		}
		s.early = append(s.early, reason(WhoseEnvironment, VerdictIncomplete, what, "merge every shard's directory (msgload report --merge OUT DIR…)"))
	}
	for _, p := range m.Problems {
		whose, next := p.Whose, "run the shard again, or the whole run"
		if whose == "" {
			whose = WhoseEnvironment
		}
		if whose == WhoseMeasurement {
			next = "merge only the shards of one run: the same scenario, run id and start instant"
		}
		verdict := p.Verdict
		if verdict != VerdictIncomplete {
			verdict = VerdictError
		}
		s.early = append(s.early, reason(whose, verdict, p.Reason, next))
	}
}

// mergeAttempts concatenates the shards' attempts.jsonl: every shard kept the
// run's global sequences, so the union is the run's.
func mergeAttempts(out string, shards []shardDir) error {
	return writeLines(out, rundir.AttemptsFile, func(emit func([]byte) error) error {
		for _, s := range shards {
			if err := eachLine(filepath.Join(s.dir, rundir.AttemptsFile), func(line []byte) error { return emit(line) }); err != nil {
				return err
			}
		}
		return nil
	})
}

// mergeTargetMemory concatenates the shards' samples of the target's memory
// (each sampled the one target; the drift takes each window's mean of them
// all), when any shard sampled it; a shard whose file is missing adds none.
func mergeTargetMemory(out string, shards []shardDir) error {
	var from []string
	for _, s := range shards {
		if _, err := os.Stat(filepath.Join(s.dir, rundir.TargetMemoryFile)); s.meta.TargetMemory != nil && err == nil {
			from = append(from, filepath.Join(s.dir, rundir.TargetMemoryFile))
		}
	}
	if len(from) == 0 {
		return nil
	}
	return writeLines(out, rundir.TargetMemoryFile, func(emit func([]byte) error) error {
		for _, path := range from {
			if err := eachLine(path, emit); err != nil {
				return err
			}
		}
		return nil
	})
}

// eventTag is what merging needs of an event line.
type eventTag struct {
	ReceivedAt time.Time `json:"received_at"`
	Corr       *struct {
		Run string `json:"run"`
		Seq int64  `json:"seq"`
	} `json:"corr"`
}

// mergeEvents joins the shards' events.jsonl, each shard's in its order. All
// shards share the run id, so a tagged event of the run is taken only from the
// shard that owns its message (a shard that copied another's, as from a sink
// all shards read, adds nothing); every other event (untagged, each shard
// copying those of its own window from one sink; another run's) once, however
// many shards copied it: the sink's record of one call is the same line in
// every copy.
func mergeEvents(out string, shards []shardDir) error {
	return writeLines(out, rundir.EventsFile, func(emit func([]byte) error) error {
		once := map[[32]byte]bool{}
		for _, s := range shards {
			sh := *s.meta.Shard
			run := s.meta.ID
			err := eachLine(filepath.Join(s.dir, rundir.EventsFile), func(line []byte) error {
				var e eventTag
				if json.Unmarshal(line, &e) == nil && e.Corr != nil && e.Corr.Run == run && e.Corr.Seq > 0 {
					if !sh.Owns(e.Corr.Seq) {
						return nil
					}
					return emit(line)
				}
				k := sha256.Sum256(bytes.TrimSpace(line))
				if once[k] {
					return nil
				}
				once[k] = true
				return emit(line)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// mergeSinkLogs reads the run's events from the sink replicas' logs, by the
// rule of a run's copy: tagged with the run, or untagged and received in the
// run's window.
func mergeSinkLogs(out string, meta rundir.Meta, logs []string) error {
	from, to := meta.Start, meta.End
	return writeLines(out, rundir.EventsFile, func(emit func([]byte) error) error {
		files, err := sinkLogFiles(logs)
		if err != nil {
			return err
		}
		for _, l := range files {
			err := eachLine(l, func(line []byte) error {
				var e eventTag
				if json.Unmarshal(line, &e) != nil {
					return nil // not a record of the sink: not the run's
				}
				if e.Corr != nil && e.Corr.Run != "" {
					if e.Corr.Run != meta.ID {
						return nil
					}
					return emit(line)
				}
				if (!from.IsZero() && e.ReceivedAt.Before(from)) || (!to.IsZero() && e.ReceivedAt.After(to)) {
					return nil
				}
				return emit(line)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// sinkLogFiles finds the logs: a file is one; a sink's data directory holds
// one (events.jsonl); any other directory holds sinks' data directories, one
// per replica (DIR/*/events.jsonl), as replicas sharing a volume write them.
func sinkLogFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%w: sink log: %v", errMerge, err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		if _, err := os.Stat(filepath.Join(p, rundir.EventsFile)); err == nil {
			files = append(files, filepath.Join(p, rundir.EventsFile))
			continue
		}
		found, _ := filepath.Glob(filepath.Join(p, "*", rundir.EventsFile))
		if len(found) == 0 {
			return nil, fmt.Errorf("%w: sink log %s: neither %s in it nor sink data directories holding one", errMerge, p, rundir.EventsFile)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	return files, nil
}

// mergeResults writes one results.bin (vegeta's gob encoding, one stream)
// with every shard's results, merged by send time (each shard's file is in
// send-time order; equal times keep the shards' order) and numbered Seq 0, 1,
// 2… in that order, as one process writes it, so vegeta plot reads it.
func mergeResults(out string, shards []shardDir) error {
	type source struct {
		dec  vegeta.Decoder
		f    *os.File
		next vegeta.Result
		ok   bool
		name string
	}
	var srcs []*source
	defer func() {
		for _, s := range srcs {
			s.f.Close()
		}
	}()
	advance := func(s *source) error {
		var r vegeta.Result
		err := s.dec.Decode(&r)
		switch {
		case err == nil:
			s.next, s.ok = r, true
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			s.ok = false // a file cut short (a killed run) ends where it was cut
		default:
			return fmt.Errorf("merge %s: %w", s.name, err)
		}
		return nil
	}
	for _, sh := range shards {
		name := filepath.Join(sh.dir, rundir.ResultsFile)
		f, err := rundir.OpenRegular(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		s := &source{f: f, dec: vegeta.NewDecoder(bufio.NewReader(f)), name: name}
		srcs = append(srcs, s)
		if err := advance(s); err != nil {
			return err
		}
	}
	if len(srcs) == 0 {
		return nil
	}
	path := filepath.Join(out, rundir.ResultsFile)
	f, err := rundir.CreateAtomic(path)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	defer f.Abort()
	w := bufio.NewWriter(f)
	enc := vegeta.NewEncoder(w)
	for seq := uint64(0); ; seq++ {
		var first *source
		for _, s := range srcs { // few shards: a scan is as good as a heap
			if s.ok && (first == nil || s.next.Timestamp.Before(first.next.Timestamp)) {
				first = s
			}
		}
		if first == nil {
			break
		}
		r := first.next
		r.Seq = seq
		if err := enc.Encode(&r); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		if err := advance(first); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return f.Commit()
}

// eachLine calls fn with every non-blank line of path (without its newline);
// a missing file has none.
func eachLine(path string, fn func([]byte) error) error {
	f, err := rundir.OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	defer f.Close()
	err = rundir.ScanLines(f, func(_ int, line []byte, lerr error) error {
		if lerr != nil {
			// kept as a line that does not decode, so the merged report
			// counts it as a bad line instead of losing it unsaid
			return fn([]byte(tooLongMark))
		}
		if t := bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(t)) > 0 {
			return fn(t)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("merge %s: %w", path, err)
	}
	return nil
}

// tooLongMark stands in the merged files for a line longer than
// rundir.MaxLineBytes: not JSON, so it is counted as a bad line.
const tooLongMark = "!line too long, skipped by msgload report --merge"

// writeLines writes out/name from the lines fill emits, atomically
// (rundir.CreateAtomic).
func writeLines(out, name string, fill func(emit func([]byte) error) error) error {
	f, err := rundir.CreateAtomic(filepath.Join(out, name))
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	defer f.Abort()
	w := bufio.NewWriterSize(f, 1<<16)
	err = fill(func(line []byte) error {
		if _, err := w.Write(line); err != nil {
			return err
		}
		return w.WriteByte('\n')
	})
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Commit()
	}
	if err != nil {
		return fmt.Errorf("merge %s: %w", name, err)
	}
	return nil
}
