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
		return fmt.Errorf("%w: %s: %v", ErrBadRun, rundir.TruthFile, err)
	}
	r := &TruthReport{Algorithm: t.RateLimit.Algorithm, Truncated: t.Truncated,
		MeasuredLatency: a.s.Delivery.Latency, MeasuredLost: a.s.Delivery.Lost,
		MeasuredDuplicates: a.s.Delivery.Duplicates, Windows: []TruthWindow{}}
	seqOf, err := a.truthSeqs(&t)
	if err != nil {
		return err
	}

	// Arrivals at the sink, per callback: a call the sink answered (any status)
	// arrived; between its start and its answer.
	type key struct{ id, channel, state string }
	type arrival struct {
		at, done int64
		ok       bool // answered 2xx
	}
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
		if c.Kind == rundir.KindIncoming || c.Status == 0 || c.Action != rundir.CallbackSent && c.Action != rundir.CallbackRetried {
			continue
		}
		done := c.Done
		if done.IsZero() || done.Before(c.At) {
			done = c.At
		}
		k := key{c.ID, c.Channel, c.State}
		arrivals[k] = append(arrivals[k], arrival{at: c.At.UnixNano(), done: done.UnixNano(), ok: is2xx(c.Status)})
	}
	// Duplicates: a second arrival of the same state for the same id and
	// channel, unless it is the service retrying a call the sink refused.
	for _, as := range arrivals {
		slices.SortFunc(as, func(x, y arrival) int { return cmp.Compare(x.at, y.at) })
		for i := 1; i < len(as); i++ {
			if as[i-1].ok {
				r.ExpectedDuplicates++
			}
		}
	}

	// Each accepted message (the scenario's sequence) and its true end: the
	// first arrival of a record that ends it by the rule.
	type fate struct {
		endLo, endHi int64 // earliest arrival of an ending record: its call's start and answer
		steps        uint32
		ids          int
	}
	fates := map[int64]*fate{}
	trueSteps := map[[2]string]int64{}
	for _, m := range t.Messages {
		r.Messages++
		if m.Sends > 1 {
			r.DuplicateSends++
		}
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
			as := arrivals[key{m.ID, ch, st.State}]
			if ch != "" {
				as = append(as, arrivals[key{m.ID, "", st.State}]...) // a truth.json of before callbacks named their channel
			}
			idx := -1
			ends := true
			if m.API != rundir.APINotify {
				idx = a.chain.Item(ch, item)
				ends = a.chain.Ends(st.State, idx)
			}
			if len(as) > 0 && idx >= 0 {
				// What an arrival shows of the cascade: every step up to its item,
				// and the step out of it when it fails over.
				upto := idx
				if a.chain.FailsOver(st.State, idx) {
					upto = idx + 1
				}
				for i := 1; i <= upto && i < 31; i++ {
					if f.steps&(1<<i) == 0 {
						f.steps |= 1 << i
						trueSteps[[2]string{a.chain[i-1].Channel, a.chain[i].Channel}]++
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
				if f.endLo == 0 || x.at < f.endLo {
					f.endLo, f.endHi = x.at, x.done
				}
			}
		}
	}
	dl := a.deadline.UnixNano()
	if a.deadline.IsZero() {
		dl = math.MaxInt64
	}
	lo, hi := newHist(), newHist()
	for seq, f := range fates {
		m := a.msgs[seq]
		if m == nil || !m.accepted {
			continue // the attacker saw no acceptance: not expected, not lost
		}
		if f.ids > 1 {
			r.ExpectedReaccepted++
		}
		if f.endLo == 0 || f.endLo > dl {
			r.ExpectedLost++
		}
		if f.endLo != 0 && m.first > 0 {
			lo.observe(float64(f.endLo-m.first) / 1e9)
			hi.observe(float64(f.endHi-m.first) / 1e9)
		}
	}
	r.TrueLatency = lo.percentiles()
	r.TrueLatencyUpper = hi.percentiles()
	for k, n := range trueSteps {
		r.FailoverSteps = append(r.FailoverSteps, TruthStep{From: k[0], To: k[1], True: n})
	}
	for _, st := range a.s.Delivery.Failover.Steps {
		i := slices.IndexFunc(r.FailoverSteps, func(x TruthStep) bool { return x.From == st.From && x.To == st.To })
		if i < 0 {
			r.FailoverSteps = append(r.FailoverSteps, TruthStep{From: st.From, To: st.To})
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
	err := readJSONL(a.fsys, rundir.AttemptsFile, func(at rundir.Attempt) error {
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
func (a *analyzer) truthWindows(t *rundir.Truth, r *TruthReport) {
	w := t.RateLimit.Window.D().Nanoseconds()
	for _, tw := range t.Windows {
		row := TruthWindow{Client: tw.Client, Start: ts(tw.Start), Accepted: tw.Accepted, Refused: tw.Refused}
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
func (a *analyzer) judgeTruth(r *TruthReport) {
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
	if a.meta.Delivery.Via != "none" {
		count("delivery.lost", r.ExpectedLost, r.MeasuredLost)
		count("delivery.duplicates", r.ExpectedDuplicates, r.MeasuredDuplicates)
		for _, st := range r.FailoverSteps {
			count(fmt.Sprintf("failover steps %s → %s", st.From, st.To), st.True, st.Measured)
		}
		m, lo, hi := r.MeasuredLatency, r.TrueLatency, r.TrueLatencyUpper
		count("delivered messages with a latency", lo.Count, m.Count)
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
