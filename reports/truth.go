package reports

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/msgload/msgload/rundir"
)

// TruthTolerance is how far a measured latency percentile may be from the
// true one: max(1 ms, 1 %) of the true value. Counts must agree exactly.
const (
	truthAbsTolerance = 0.001
	truthRelTolerance = 0.01
)

// truth compares the measured figures with truth.json, when the run has one:
// the delays, outcomes and callbacks the embedded simulator drew are judged by
// the same end-of-message rule (rundir.Chain) and set beside what the sink and
// the attacker measured. Any difference beyond the tolerance is a
// disagreement, and a run whose measurements disagree with the truth fails:
// a measurement bug shows in the first run that meets it.
func (a *analyzer) truth() error {
	b, err := fs.ReadFile(a.fsys, rundir.TruthFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read truth: %w", err)
	}
	var t rundir.Truth
	if err := json.Unmarshal(b, &t); err != nil {
		return fmt.Errorf("%w: %s: %v", errBadRun, rundir.TruthFile, err)
	}
	r := &truthReport{Algorithm: t.RateLimit.Algorithm, Truncated: t.Truncated,
		MeasuredLatency: a.s.Delivery.Latency, MeasuredLost: a.s.Delivery.Lost,
		MeasuredDuplicates: a.s.Delivery.Duplicates, Windows: []truthWindow{}}
	seqOf, err := a.truthSeqs(&t)
	if err != nil {
		return err
	}

	// Arrivals at the sink, per callback. A call the sink answered (any
	// status) surely arrived, between its start and its answer; a call that
	// got no answer (reset, timeout) may have arrived — the sink may have
	// logged it and the answer been lost on the way back. Every figure is
	// computed twice, without and with those, and the measurement must lie
	// between the two.
	type key struct{ id, channel, state string }
	arrivals := map[key][]arrival{}
	for _, c := range t.Callbacks {
		switch c.Action {
		case rundir.CallbackDropped:
			r.CallbacksDropped++
		case rundir.CallbackFailed:
			r.CallbacksFailed++
		case rundir.CallbackDuplicated:
			r.CallbacksDup++
		}
		if c.Kind == rundir.KindIncoming || c.Action != rundir.CallbackSent && c.Action != rundir.CallbackRetried {
			continue
		}
		done := c.Done
		if done.IsZero() || done.Before(c.At) {
			done = c.At
		}
		if c.Status == 0 {
			r.Unanswered++
		}
		k := key{c.ID, c.Channel, c.State}
		arrivals[k] = append(arrivals[k], arrival{at: c.At.UnixNano(), done: done.UnixNano(), ok: c.Status == 0 || is2xx(c.Status), sure: c.Status != 0})
	}
	for _, as := range arrivals {
		slices.SortFunc(as, func(x, y arrival) int { return cmp.Compare(x.at, y.at) })
	}
	dl := a.deadline.UnixNano()
	if a.deadline.IsZero() {
		dl = math.MaxInt64
	}
	// judge computes the true figures with the unanswered calls taken as
	// arrived (maybe) or not.
	type figures struct {
		lost, dups, received, reaccepted int64
		steps                            map[[2]string]int64
		end                              map[int64][3]int64 // seq → earliest ending arrival's start and answer, the last ending arrival's answer
	}
	judge := func(maybe bool) figures {
		fg := figures{steps: map[[2]string]int64{}, end: map[int64][3]int64{}}
		use := func(as []arrival) []arrival {
			if maybe {
				return as
			}
			out := as[:0:0]
			for _, x := range as {
				if x.sure {
					out = append(out, x)
				}
			}
			return out
		}
		// Duplicates: a second arrival of the same state for the same id and
		// channel, unless it is the service retrying a call the sink refused.
		for _, as := range arrivals {
			as = use(as)
			for i := 1; i < len(as); i++ {
				if as[i-1].ok {
					fg.dups++
				}
			}
		}
		type fate struct {
			end   [3]int64
			steps uint32
			ids   int
		}
		fates := map[int64]*fate{}
		for _, m := range t.Messages {
			seq := seqOf(&m)
			f := fates[seq]
			if f == nil {
				f = &fate{}
				if seq != 0 {
					fates[seq] = f
				}
			}
			f.ids++
			item := 0
			for _, st := range m.Steps {
				ch := st.Channel
				if m.API == rundir.APINotify {
					ch = ""
				}
				as := use(arrivals[key{m.ID, ch, st.State}])
				if ch != "" {
					as = append(as, use(arrivals[key{m.ID, "", st.State}])...) // a truth.json of before callbacks named their channel
				}
				idx := -1
				ends := true
				if m.API != rundir.APINotify {
					idx = a.chain.Item(ch, item)
					ends = a.chain.Ends(st.State, idx)
				}
				if len(as) > 0 && idx >= 0 {
					// What an arrival shows of the cascade: every step up to its
					// item, and the step out of it when it fails over.
					upto := idx
					if a.chain.FailsOver(st.State, idx) {
						upto = idx + 1
					}
					for i := 1; i <= upto && i < 31; i++ {
						if f.steps&(1<<i) == 0 {
							f.steps |= 1 << i
							fg.steps[[2]string{a.chain[i-1].Channel, a.chain[i].Channel}]++
						}
					}
				}
				if idx >= 0 && a.chain.FailsOver(st.State, idx) {
					item = idx + 1
				}
				if !ends {
					continue
				}
				for _, x := range as {
					if f.end[0] == 0 || x.at < f.end[0] {
						f.end[0], f.end[1] = x.at, x.done
					}
					f.end[2] = max(f.end[2], x.done)
				}
			}
		}
		for seq, f := range fates {
			m := a.msgs[seq]
			if m == nil || !m.accepted {
				continue // the attacker saw no acceptance: not expected, not lost
			}
			if f.ids > 1 {
				fg.reaccepted++
			}
			if f.end[0] == 0 || f.end[0] > dl {
				fg.lost++
			}
			if f.end[0] != 0 && m.first > 0 {
				fg.received++
				fg.end[seq] = f.end
			}
		}
		return fg
	}
	sure, maybe := judge(false), judge(true)
	for _, m := range t.Messages {
		r.Messages++
		if m.Sends > 1 {
			r.DuplicateSends++
		}
	}
	r.ExpectedLost, r.ExpectedLostMin = sure.lost, maybe.lost
	r.ExpectedDuplicates, r.ExpectedDuplicatesMax = sure.dups, maybe.dups
	r.ExpectedReaccepted = sure.reaccepted
	r.ExpectedReceived, r.ExpectedReceivedMax = sure.received, maybe.received
	// Latency: from the earliest possible arrival of an ending record to the
	// latest its first arrival can have been (the answer of the first sure
	// one, else of the last maybe one).
	lo, hi := newHist(), newHist()
	for seq, e := range maybe.end {
		m := a.msgs[seq]
		up := e[2] // only unanswered calls: the first arrival was one of them
		if se, ok := sure.end[seq]; ok {
			up = se[1]
		}
		lo.observe(float64(e[0]-m.first) / 1e9)
		hi.observe(float64(max(up, e[1])-m.first) / 1e9)
	}
	trueSteps := map[[2]string][2]int64{}
	for k, n := range sure.steps {
		trueSteps[k] = [2]int64{n, maybe.steps[k]}
	}
	for k, n := range maybe.steps {
		if _, ok := trueSteps[k]; !ok {
			trueSteps[k] = [2]int64{0, n}
		}
	}
	r.TrueLatency = lo.percentiles()
	r.TrueLatencyUpper = hi.percentiles()
	for k, n := range trueSteps {
		r.FailoverSteps = append(r.FailoverSteps, truthStep{From: k[0], To: k[1], True: n[0], TrueMax: n[1]})
	}
	for _, st := range a.s.Delivery.Failover.Steps {
		i := slices.IndexFunc(r.FailoverSteps, func(x truthStep) bool { return x.From == st.From && x.To == st.To })
		if i < 0 {
			r.FailoverSteps = append(r.FailoverSteps, truthStep{From: st.From, To: st.To})
			i = len(r.FailoverSteps) - 1
		}
		r.FailoverSteps[i].Measured = st.Count
	}
	sort.Slice(r.FailoverSteps, func(i, j int) bool {
		x, y := r.FailoverSteps[i], r.FailoverSteps[j]
		if xi, yi := a.chain.Index(x.From), a.chain.Index(y.From); xi != yi {
			return xi < yi
		}
		return x.From+"\x00"+x.To < y.From+"\x00"+y.To
	})
	a.truthWindows(&t, r)
	a.judgeTruth(r)
	a.s.Truth = r
	return nil
}

// truthSeqs returns how a true message joins the attacker's messages: by the
// tag the simulator read from trackData or the externalId, else by the id it
// answered with (txId, notificationId) or the scenario's own externalId, as
// attempts.jsonl has them.
func (a *analyzer) truthSeqs(t *rundir.Truth) (func(m *rundir.TruthMessage) int64, error) {
	want := map[string]int64{}
	for _, m := range t.Messages {
		want[m.ID] = 0
		if m.ExternalID != "" {
			want[m.ExternalID] = 0
		}
	}
	err := readJSONLFunc(a.fsys, rundir.AttemptsFile, a.decodeAttempt, func(at rundir.Attempt) error {
		if at.Op != "send" || at.Seq <= 0 {
			return nil
		}
		for _, k := range []string{at.TxID, at.NotificationID, at.ExternalID} {
			if v, ok := want[k]; k != "" && ok && v == 0 {
				want[k] = at.Seq
			}
		}
		return nil
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rundir.AttemptsFile, err)
	}
	return func(m *rundir.TruthMessage) int64 {
		if tag, err := rundir.ParseExternalID(m.ExternalID); err == nil && (a.meta.ID == "" || tag.Run == a.meta.ID) {
			return tag.Seq
		}
		if run, seq, ok := strings.Cut(m.ExternalID, "."); ok && m.API == rundir.APIMessaging && (a.meta.ID == "" || run == a.meta.ID) {
			var n int64
			if _, err := fmt.Sscan(seq, &n); err == nil && n > 0 {
				return n // the simulator's key of a messaging tag: "<run>.<seq>"
			}
		}
		if s := want[m.ExternalID]; m.ExternalID != "" && s != 0 {
			return s
		}
		return want[m.ID]
	}, nil
}

// truthWindows sets the limiter's true decisions per window beside what the
// attacker saw in the same windows (by send time: informative only, a request
// near a window's edge may be decided in the next one).
func (a *analyzer) truthWindows(t *rundir.Truth, r *truthReport) {
	w := t.RateLimit.Window.D().Nanoseconds()
	for _, tw := range t.Windows {
		row := truthWindow{Client: tw.Client, Start: ts(tw.Start), Accepted: tw.Accepted, Refused: tw.Refused}
		if w > 0 {
			lo, hi := tw.Start.UnixNano(), tw.Start.UnixNano()+w
			rs := a.clients[tw.Client]
			i := sort.Search(len(rs), func(i int) bool { return rs[i].t >= lo })
			for ; i < len(rs) && rs[i].t < hi; i++ {
				switch {
				case is2xx(int(rs[i].code)):
					row.MeasuredAccepted++
				case rs[i].code == 429:
					row.MeasuredRefused++
				}
			}
		}
		if row.MeasuredAccepted != row.Accepted || row.MeasuredRefused != row.Refused {
			r.WindowMismatches++
		}
		r.Windows = append(r.Windows, row)
	}
	sort.SliceStable(r.Windows, func(i, j int) bool {
		x, y := r.Windows[i], r.Windows[j]
		if x.Client != y.Client {
			return x.Client < y.Client
		}
		return x.Start < y.Start
	})
}

// judgeTruth sets Agrees and lists every figure that disagrees.
func (a *analyzer) judgeTruth(r *truthReport) {
	if r.Truncated {
		r.Disagreements = []string{"the simulator's truth buffer was full: the measurements were not compared"}
		return // Agrees stays null: no data
	}
	var dis []string
	count := func(what string, truth, measured int64) {
		if truth != measured {
			dis = append(dis, fmt.Sprintf("%s: measured %d, true %d", what, measured, truth))
		}
	}
	between := func(what string, lo, hi, measured int64) {
		if lo == hi {
			count(what, lo, measured)
		} else if measured < lo || measured > hi {
			dis = append(dis, fmt.Sprintf("%s: measured %d, true %d to %d (%s the sink may or may not have logged)", what, measured, lo, hi, plural(r.Unanswered, "call")))
		}
	}
	if a.meta.Delivery.Via != "none" {
		between("delivery.lost", r.ExpectedLostMin, r.ExpectedLost, r.MeasuredLost)
		between("delivery.duplicates", r.ExpectedDuplicates, r.ExpectedDuplicatesMax, r.MeasuredDuplicates)
		for _, st := range r.FailoverSteps {
			between(fmt.Sprintf("failover steps %s → %s", st.From, st.To), st.True, st.TrueMax, st.Measured)
		}
		m, lo, hi := r.MeasuredLatency, r.TrueLatency, r.TrueLatencyUpper
		between("delivered messages with a latency", r.ExpectedReceived, r.ExpectedReceivedMax, m.Count)
		if m.Count == lo.Count && m.Count > 0 {
			for _, p := range []struct {
				name          string
				got, min, max float64
			}{
				{"p50", m.P50, lo.P50, hi.P50},
				{"p95", m.P95, lo.P95, hi.P95},
				{"p99", m.P99, lo.P99, hi.P99},
				{"max", m.Max, lo.Max, hi.Max},
			} {
				tol := max(truthAbsTolerance, truthRelTolerance*p.min)
				if p.got < p.min-tol || p.got > p.max+tol {
					dis = append(dis, fmt.Sprintf("delivery.latency.%s: measured %s, true %s to %s (tolerance %s)",
						p.name, dur(p.got), dur(p.min), dur(p.max), dur(tol)))
				}
			}
		}
	}
	if v, want := a.s.RateLimit.Algorithm.Verdict, trueVerdict(r.Algorithm); want != "" && namesAlgorithm(v) && v != want {
		dis = append(dis, fmt.Sprintf("rate_limit.algorithm: measured %q, true %q", v, want))
	}
	agrees := len(dis) == 0
	r.Agrees = &agrees
	r.Disagreements = dis
}

// trueVerdict names the simulator's limiter as the rate-limit analysis does.
func trueVerdict(alg string) string {
	switch alg {
	case "sliding":
		return "sliding window"
	case "fixed":
		return "fixed window"
	case "token-bucket":
		return "token bucket"
	}
	return ""
}

// namesAlgorithm reports whether a verdict claims an algorithm (not "cannot
// tell", "not exercised").
func namesAlgorithm(v string) bool {
	return v == "sliding window" || v == "fixed window" || v == "token bucket"
}

// arrival is one call of the simulator to the sink, as truth.json records it.
type arrival struct {
	at, done int64 // the call's start and its answer (or error)
	ok       bool  // answered 2xx, or unanswered (the sink would have answered 2xx)
	sure     bool  // answered at all: it surely reached the sink
}
