package harness

// The oracle's own figures (oracle_test.go): computed from the raw files of a
// run — run.json, attempts.jsonl, events.jsonl, truth.json — with code of its
// own. Nothing here calls package reports or sink, nor the rule helpers of
// rundir (its record types and constants are only used to decode).

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/rundir"
)

// oFigures are the figures the oracle expects of summary.json.
type oFigures struct {
	Total, Messages, Accepted, Retries, Probes int64
	Codes                                      map[string]int64
	Expected, Received, Lost, Late, Duplicates int64
	Latency                                    oPct
	ByChannel                                  map[string]oPct  // the censored latency by the channel of the final state (censored: the channel at the deadline)
	Steps                                      map[string]int64 // "from>to" → messages that stepped
	Redelivered, Refused                       int64            // arrivals the sink caused (its faults), its refusals
	DupDeliveries                              int64            // messages ended under two txIds / with two terminal statuses
	Unconfirmed                                int64            // messages that ended although no attempt was accepted (the answer was lost)
	Channelless                                int64            // status records that named no channel (placed by the chain)
	Incoming, Replies                          int64            // incoming messages, those replying to a message of the run
	BesidePolls                                int64            // callbacks or webhooks logged in a poll run

	// From truth.json, when there is one.
	HasTruth                    bool
	TruthMessages               int64
	TrueLatency                 oPct  // per message, from its (first) acceptance to its first ending status, as drawn
	LostLo, LostHi              int64 // from the calls the run could see
	LostWaitedHi                int64 // most lost had the run waited to attack_end+grace
	Dropped, Duplicated, Failed int64
	Unsent                      int64    // status changes whose callback the simulator never tried before the run closed it
	TrueFromSend                oPct     // every accepted message: the start of truth's first ending callback from the first send, censored at the deadline
	TrueAmbiguous               int      // accepted messages whose true end the oracle cannot tell (TrueFromSend is then not compared)
	TrueSame, MeasuredSame      oPct     // the messages that surely ended in time: truth's callback start vs measured arrival, both from the first send
	Transit                     []string // messages whose measured end is not the arrival of their true ending callback
	PollTruth                   []string // a polled run: messages whose measured end is not what the polls could see
	notes                       []string // what the oracle could not decide
}

// oPct are nearest-rank percentiles in seconds, rounded to the microsecond.
// Censored of the Count had no value by the deadline; Bound names the
// figures that are then only lower bounds (nearestRankCensored).
type oPct struct {
	Count, Censored         int64
	P50, P90, P95, P99, Max float64
	Bound                   map[string]bool
}

// nearestRankCensored computes oPct over the values ds and the censored
// waits (DESIGN.md: every accepted message counts; one without a final
// status by the deadline is censored at its wait, first send to deadline,
// and ranks after every value): the figure at rank ceil(q/100·n) among the
// values when the rank falls among them, else a lower bound, the rank-th of
// values and waits sorted together; max likewise.
func nearestRankCensored(ds, waits []time.Duration) oPct {
	if len(waits) == 0 {
		return nearestRank(ds)
	}
	vs := slices.Sorted(slices.Values(ds))
	all := slices.Sorted(slices.Values(append(slices.Clone(ds), waits...)))
	n := len(all)
	p := oPct{Count: int64(n), Censored: int64(len(waits)), Bound: map[string]bool{}}
	at := func(q int, name string) float64 {
		r := max((q*n+99)/100, 1)
		if r <= len(vs) {
			return usec(vs[r-1])
		}
		p.Bound[name] = true
		return usec(all[r-1])
	}
	p.P50, p.P90, p.P95, p.P99, p.Max = at(50, "p50"), at(90, "p90"), at(95, "p95"), at(99, "p99"), at(100, "max")
	return p
}

// nearestRank computes oPct over durations: the value at rank ceil(q/100·n),
// 1-based, in ascending order.
func nearestRank(ds []time.Duration) oPct {
	if len(ds) == 0 {
		return oPct{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	at := func(q int) float64 {
		r := (q*n + 99) / 100
		if r < 1 {
			r = 1
		}
		return usec(s[r-1])
	}
	return oPct{Count: int64(n), P50: at(50), P90: at(90), P95: at(95), P99: at(99), Max: usec(s[n-1])}
}

// usec is d in seconds, rounded to the microsecond.
func usec(d time.Duration) float64 {
	return math.Round(float64(d)/1e3) / 1e6
}

// oRaw is a run directory as read.
type oRaw struct {
	meta     rundir.Meta
	attempts []rundir.Attempt
	events   []rundir.Event
	truth    *rundir.Truth
	// cbChannels[i] is the channel of truth.Callbacks[i] when truth.json has it.
	cbChannels []string
}

func readJSONLines[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(b), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// readRaw reads dir; truthPath "" means dir/truth.json if present.
func readRaw(dir, truthPath string) (*oRaw, error) {
	r := &oRaw{}
	b, err := os.ReadFile(filepath.Join(dir, rundir.MetaFile))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &r.meta); err != nil {
		return nil, fmt.Errorf("run.json: %v", err)
	}
	if r.attempts, err = readJSONLines[rundir.Attempt](filepath.Join(dir, rundir.AttemptsFile)); err != nil {
		return nil, err
	}
	if r.events, err = readJSONLines[rundir.Event](filepath.Join(dir, rundir.EventsFile)); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if truthPath == "" {
		truthPath = filepath.Join(dir, rundir.TruthFile)
	}
	if b, err := os.ReadFile(truthPath); err == nil {
		r.truth = &rundir.Truth{}
		if err := json.Unmarshal(b, r.truth); err != nil {
			return nil, fmt.Errorf("%s: %v", truthPath, err)
		}
		// A simulator that names the channel of each call (later versions
		// of truth.json) lets the oracle tell two calls of one state apart.
		var chans struct {
			Callbacks []struct {
				Channel string `json:"channel"`
			} `json:"callbacks"`
		}
		if json.Unmarshal(b, &chans) == nil && len(chans.Callbacks) == len(r.truth.Callbacks) {
			for _, cb := range chans.Callbacks {
				r.cbChannels = append(r.cbChannels, cb.Channel)
			}
		}
	}
	return r, nil
}

// Final states of status records.
var oFinal = map[string]bool{"DELIVERED": true, "SEEN": true, "NOT_DELIVERED": true, "FAILED": true, "EXPIRED": true}

// oRule is the end of a message on the chain: what a status record of state
// on the item at index i (-1: not in the chain) does. ends: the message ends;
// step: a failover step to item i+1.
func oRule(chain []oItem, i int, state string) (ends, step bool) {
	if i < 0 || i >= len(chain) {
		return oFinal[state], false
	}
	it := chain[i]
	if it.Cond != "" && i < len(chain)-1 {
		switch state {
		case "SEEN":
			return true, false // SEEN implies DELIVERED
		case "DELIVERED":
			return it.Cond == "DELIVERED", false // under SEEN: neither
		case "NOT_DELIVERED", "FAILED", "EXPIRED":
			return false, true
		}
		return false, false
	}
	return oFinal[state], false
}

func chainIndex(chain []oItem, ch string) int {
	for i, it := range chain {
		if it.Channel == ch {
			return i
		}
	}
	return -1
}

// oMsg is one message (a scenario sequence) as the raw files show it.
type oMsg struct {
	firstSent time.Time
	accepted  bool
	ended     bool
	end       time.Time
	steps     map[string]bool
	txs       map[string]bool // txIds the service answered the message's sends with
	finalCh   string          // the channel of its final state (the best ending status): "" none
	finalRank int
	finalAt   time.Time
	item      int // the chain item its records show it reached (after their failover steps)
}

// oStateRank ranks the final states: the final state of a message that
// ended more than once (DELIVERED then SEEN, or under two txIds) is the best.
var oStateRank = map[string]int{"FAILED": 1, "EXPIRED": 2, "NOT_DELIVERED": 3, "DELIVERED": 4, "SEEN": 5}

// figures computes every expected figure of run r of case c.
func (c oCase) figures(r *oRaw) oFigures {
	f := oFigures{Codes: map[string]int64{}, Steps: map[string]int64{}}
	msgs := map[int64]*oMsg{}
	get := func(seq int64) *oMsg {
		m := msgs[seq]
		if m == nil {
			m = &oMsg{steps: map[string]bool{}}
			msgs[seq] = m
		}
		return m
	}
	txSeq, nidSeq, extSeq := map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, a := range r.attempts {
		f.Total++
		f.Codes[strconv.Itoa(a.Code)]++
		if a.Attempt > 1 && a.Probe == "" && a.Op != "send" {
			f.Retries++ // README: attempts after the first, probes excluded (webhook registration too)
		}
		if a.Op != "send" || a.Seq <= 0 {
			continue
		}
		m := get(a.Seq)
		switch {
		case a.Probe != "":
			f.Probes++
		case a.Attempt == 1:
			f.Messages++
		default:
			f.Retries++
		}
		// The first attempt's send time as the attacker carries it in the
		// tag (taken just before the request leaves; Sent is a little later).
		if m.firstSent.IsZero() || a.Attempt == 1 && a.Probe == "" {
			m.firstSent = a.FirstSent
			if m.firstSent.IsZero() {
				m.firstSent = a.Sent
			}
		}
		if a.ExternalID != "" {
			extSeq[a.ExternalID] = a.Seq
		}
		ok2xx := a.Code >= 200 && a.Code < 300
		if c.API == rundir.APIMessaging {
			if ok2xx && a.TxID != "" && a.State == "ACCEPTED" {
				m.accepted = true
			}
			if a.TxID != "" {
				txSeq[a.TxID] = a.Seq
				if m.txs == nil {
					m.txs = map[string]bool{}
				}
				m.txs[a.TxID] = true
			}
		} else {
			if ok2xx && a.NotificationID != "" {
				m.accepted = true
			}
			if a.NotificationID != "" {
				nidSeq[a.NotificationID] = a.Seq
			}
		}
	}
	deadline := r.meta.AttackEnd.Add(r.meta.Delivery.Grace.D())

	// Every record of a message, kept as a set and judged once all are in
	// (DESIGN.md: figures do not depend on arrival order).
	recs := map[int64][]oRec{}
	if c.Poll > 0 {
		c.pollRecords(r, recs, &f)
	} else {
		c.sinkRecords(r, recs, txSeq, nidSeq, extSeq, &f)
	}
	for seq, rs := range recs {
		c.judge(get(seq), rs, &f)
	}
	var lat, waits []time.Duration
	chLat, chWaits, chSeen := map[string][]time.Duration{}, map[string][]time.Duration{}, map[string]bool{}
	for _, m := range msgs {
		for s := range m.steps {
			f.Steps[s]++
		}
		if !m.accepted {
			if m.ended {
				f.Unconfirmed++
			}
			continue
		}
		f.Expected++
		if m.ended {
			f.Received++
			if m.end.After(deadline) {
				f.Late++
			}
		}
		if !m.ended || m.end.After(deadline) {
			f.Lost++
			waits = append(waits, deadline.Sub(m.firstSent))
			// Censored on the channel it was on at the deadline.
			ch := "none"
			if len(c.Chain) > 0 {
				ch = c.Chain[m.item].Channel
			}
			chWaits[ch] = append(chWaits[ch], deadline.Sub(m.firstSent))
			chSeen[ch] = true
		} else {
			lat = append(lat, m.end.Sub(m.firstSent))
			ch := cmp.Or(m.finalCh, "none")
			chLat[ch] = append(chLat[ch], m.end.Sub(m.firstSent))
			chSeen[ch] = true
		}
	}
	f.Accepted = f.Expected
	f.Latency = nearestRankCensored(lat, waits)
	f.ByChannel = map[string]oPct{}
	for ch := range chSeen {
		f.ByChannel[ch] = nearestRankCensored(chLat[ch], chWaits[ch])
	}
	if r.truth != nil {
		c.truthFigures(r, &f, msgs, extSeq, nidSeq, deadline)
	}
	return f
}

// tagSeq reads the sequence of a tagged externalId ml.<run>.<seq>.<nanos>.
func tagSeq(ext, run string) int64 {
	parts := strings.Split(ext, ".")
	if len(parts) != 4 || parts[0] != "ml" || parts[1] != run {
		return 0
	}
	n, _ := strconv.ParseInt(parts[2], 10, 64)
	return n
}

// oracleTransit bounds the time from the simulator's start of a callback to
// its arrival at the sink: loopback, but on two busy cores running four
// cases at once 320 ms were seen. What it must catch is an end taken from a
// record that is not ending (it arrives before the true ending callback
// starts) or a missed ending record (a later one, often seconds later).
// More than a second was seen once with the machine at load 12 (three cases of
// 47), so the bound is 3 s; the report's own truth comparison bounds each
// arrival exactly by the call's start and answer (truth.json's at and done).
const oracleTransit = 3 * time.Second

// oOutcome is one possible fate of a message's ending callbacks: whether one
// got through, the earliest start of such a call, and the earliest answer
// to one (the sink logs a call before it answers: its arrival lies between).
type oOutcome struct {
	through bool
	at      int64 // Unix nanoseconds, when through
	done    int64 // Unix nanoseconds, when through; math.MaxInt64 when no such call was answered
}

// truthFigures adds the figures from truth.json.
func (c oCase) truthFigures(r *oRaw, f *oFigures, msgs map[int64]*oMsg, extSeq, nidSeq map[string]int64, deadline time.Time) {
	t := r.truth
	f.HasTruth = true
	f.TruthMessages = int64(len(t.Messages))
	kind := rundir.KindCallback
	if c.API == rundir.APINotify {
		kind = rundir.KindWebhook
	}
	type tcb struct {
		rundir.TruthCallback
		ch string
	}
	cbs := map[string][]tcb{}
	for i, cb := range t.Callbacks {
		switch cb.Action {
		case rundir.CallbackDropped:
			f.Dropped++
		case rundir.CallbackDuplicated:
			f.Duplicated++
		case rundir.CallbackFailed:
			f.Failed++
		}
		if cb.Kind == kind {
			ch := ""
			if i < len(r.cbChannels) {
				ch = r.cbChannels[i]
			}
			cbs[cb.ID] = append(cbs[cb.ID], tcb{cb, ch})
		}
	}
	if c.Poll > 0 {
		c.pollTruth(r, f, msgs, deadline)
		return
	}
	// Calls count for the run when they started before it ended (the
	// simulator closed, or the last copy from a standalone sink), and would
	// have had the run waited to its deadline.
	end := r.meta.End
	if end.IsZero() || end.After(deadline) || r.meta.Target == "embedded" {
		end = deadline // the embedded simulator makes no call after the run closed it
	}
	cutoffs := [2]time.Time{end, deadline}
	minDelay := c.Callbacks.Delay // every call is held back this long
	if c.Callbacks.DelayShare > 0 && c.Callbacks.DelayShare < 1 {
		minDelay = 0 // only some are
	}
	// Per sequence: the true end from acceptance, and the possible fates.
	type group struct {
		accept, end time.Time
		ended       bool
		fates       [2][]oOutcome // what the run could see (calls started before its end), had it waited to the deadline
	}
	groups := map[string]*group{}
	seqOf := map[string]int64{}
	for _, tm := range t.Messages {
		key := tm.ExternalID
		if key == "" {
			key = "id:" + tm.ID
		}
		var seq int64
		if c.API == rundir.APIMessaging {
			if i := strings.LastIndexByte(tm.ExternalID, '.'); i > 0 && tm.ExternalID[:i] == r.meta.ID {
				seq, _ = strconv.ParseInt(tm.ExternalID[i+1:], 10, 64)
			}
		} else if s, ok := extSeq[tm.ExternalID]; ok {
			seq = s
		} else {
			seq = nidSeq[tm.ID]
		}
		seqOf[key] = seq
		g := groups[key]
		if g == nil {
			g = &group{accept: tm.AcceptedAt, fates: [2][]oOutcome{{{}}, {{}}}}
			groups[key] = g
		}
		if tm.AcceptedAt.Before(g.accept) {
			g.accept = tm.AcceptedAt
		}
		// Jobs: one callback per status change, by state.
		type job struct {
			at      time.Time
			ch      string
			ending  bool
			dropped bool
			copies  int
		}
		jobs := map[string][]*job{}
		for _, s := range tm.Steps {
			ends := true
			if c.API == rundir.APIMessaging {
				ends, _ = oRule(c.Chain, chainIndex(c.Chain, s.Channel), s.State)
			}
			at := tm.AcceptedAt.Add(s.Delay.D())
			if ends && (!g.ended || at.Before(g.end)) {
				g.ended, g.end = true, at
			}
			jobs[s.State] = append(jobs[s.State], &job{at: at, ch: s.Channel, ending: ends, copies: 1})
		}
		near := func(a, b time.Time) bool { d := a.Sub(b); return d < time.Microsecond && d > -time.Microsecond }
		fates := [2][]oOutcome{{{}}, {{}}}
		for state, js := range jobs {
			type rec struct {
				at      time.Time
				done    time.Time // when the answer came (zero: unknown)
				ch      string
				unsure  bool // no answer came (a timeout, a reset): the sink may have logged it
				retried bool // a retry of a call of the job (the receiver refused or timed out)
			}
			var recs []rec
			sent := 0
			accounted := 0
			for _, cb := range cbs[tm.ID] {
				if cb.State != state {
					continue
				}
				switch cb.Action {
				case rundir.CallbackDropped, rundir.CallbackDuplicated:
					for _, j := range js {
						if near(cb.At, j.at) && (cb.ch == "" || cb.ch == j.ch) {
							if cb.Action == rundir.CallbackDropped {
								j.dropped, j.copies = true, 0
								accounted++
							} else {
								j.copies = 2
								accounted--
							}
						}
					}
				case rundir.CallbackSent, rundir.CallbackRetried:
					if cb.Action == rundir.CallbackSent {
						sent++
					}
					// A call the sink answered, whatever the status, surely
					// arrived (it refuses on purpose after logging).
					recs = append(recs, rec{cb.At, cb.Done, cb.ch, cb.Status == 0, cb.Action == rundir.CallbackRetried})
				}
			}
			if r.meta.Target == "embedded" {
				// Only a status change due well before the run closed the
				// simulator must have been called back (a slow profile's
				// later ones never are).
				due := 0
				for _, j := range js {
					if j.at.Add(c.Callbacks.Delay + 200*time.Millisecond + time.Second).Before(r.meta.End) {
						due++
					}
				}
				if n := len(js) - (accounted + sent) - (len(js) - due); n > 0 {
					f.Unsent += int64(n)
				}
			}
			// Every assignment of the calls that got through to the jobs
			// they can belong to (a call starts no earlier than its status
			// change plus the configured delay; a job is called once, twice
			// when duplicated, never when dropped).
			// A call counts when it started before the cutoff (50 ms either
			// side: either way).
			for ci, cut := range cutoffs {
				outs := map[oOutcome]bool{}
				used := make([]int, len(js))
				var walk func(k int, o oOutcome)
				walk = func(k int, o oOutcome) {
					if k == len(recs) {
						outs[o] = true
						return
					}
					at, ch, unsure, retried := recs[k].at, recs[k].ch, recs[k].unsure, recs[k].retried
					done := int64(math.MaxInt64)
					if !unsure && !recs[k].done.IsZero() {
						done = recs[k].done.UnixNano()
					}
					for i, j := range js {
						if !retried && used[i] >= j.copies || retried && j.dropped || at.Before(j.at.Add(minDelay-time.Microsecond)) || ch != "" && ch != j.ch {
							continue
						}
						if !retried {
							used[i]++
						}
						visible, maybe := at.Before(cut.Add(-50*time.Millisecond)), at.Before(cut.Add(50*time.Millisecond))
						if j.ending && maybe {
							n := o
							if !n.through {
								n.through, n.at, n.done = true, at.UnixNano(), done
							} else {
								n.at, n.done = min(n.at, at.UnixNano()), min(n.done, done)
							}
							walk(k+1, n)
						}
						if !j.ending || !visible || unsure {
							walk(k+1, o)
						}
						if !retried {
							used[i]--
						}
					}
				}
				walk(0, oOutcome{})
				if len(outs) == 0 {
					if ci == 0 {
						f.notes = append(f.notes, fmt.Sprintf("truth: %s %s: no assignment of %d calls to %d status changes", tm.ID, state, len(recs), len(js)))
					}
					outs = map[oOutcome]bool{{}: true, {through: true}: true}
				}
				fates[ci] = combine(fates[ci], outs)
			}
		}
		for ci := range cutoffs {
			g.fates[ci] = combineList(g.fates[ci], fates[ci])
		}
	}
	var trueLat []time.Duration
	bySeq := map[int64]*group{}
	for key, g := range groups {
		if g.ended {
			trueLat = append(trueLat, g.end.Sub(g.accept))
		}
		if s := seqOf[key]; s > 0 {
			bySeq[s] = g
		}
	}
	f.TrueLatency = nearestRank(trueLat)
	var tfs, twaits, sameTrue, meas []time.Duration
	for seq, m := range msgs {
		if !m.accepted {
			continue
		}
		wait := deadline.Sub(m.firstSent)
		g := bySeq[seq]
		if g == nil {
			f.LostHi++
			f.LostWaitedHi++
			f.notes = append(f.notes, fmt.Sprintf("truth: accepted message %d not in truth.json", seq))
			twaits = append(twaits, wait)
			continue
		}
		waited := false // surely through had the run waited to its deadline
		for _, o := range g.fates[1] {
			waited = o.through && o.done <= deadline.UnixNano()
			if !waited {
				break
			}
		}
		if !waited {
			f.LostWaitedHi++
		}
		all, none := true, true
		var at int64 = -1
		var done int64 // the latest of the fates' earliest answers
		same := true
		for _, o := range g.fates[0] {
			if o.through {
				none = false
				done = max(done, o.done)
				if at >= 0 && at != o.at {
					same = false
				}
				at = o.at
			} else {
				all = false
			}
		}
		if none {
			f.LostLo++
		}
		// Surely arrived by the run's end only when an ending call was
		// answered by it (the sink logs a call before it answers): one
		// started before it but answered after was in transit, and the
		// sink may have logged it after (a busy machine holds a call for
		// seconds). Such a message lies between LostLo (a call started by
		// the end, 50 ms either side) and LostHi: reports' in-transit rule.
		if !all || done > cutoffs[0].UnixNano() {
			f.LostHi++
		}
		switch {
		case none:
			twaits = append(twaits, wait)
		case all && same && time.Unix(0, at).After(deadline):
			twaits = append(twaits, wait)
		case all && same:
			tfs = append(tfs, time.Unix(0, at).Sub(m.firstSent))
		default:
			f.TrueAmbiguous++
		}
		if all && same && m.ended && !m.end.After(deadline) {
			start := time.Unix(0, at)
			sameTrue = append(sameTrue, start.Sub(m.firstSent))
			meas = append(meas, m.end.Sub(m.firstSent))
			// The measured end is the arrival of an ending call: not before
			// the first one started, not after the first answer to one (the
			// sink logs a call before it answers), whatever the machine's
			// speed; when no answer is known, loopback transit is short.
			upper := start.Add(oracleTransit)
			if done != math.MaxInt64 {
				upper = time.Unix(0, done).Add(time.Millisecond)
			}
			if d := m.end.Sub(start); d < -time.Microsecond || m.end.After(upper) {
				f.Transit = append(f.Transit, fmt.Sprintf("message %d: ends %s after the simulator started its first ending callback (%s → %s)",
					seq, d, start.UTC().Format(time.RFC3339Nano), m.end.UTC().Format(time.RFC3339Nano)))
			}
		}
	}
	f.TrueFromSend = nearestRankCensored(tfs, twaits)
	f.TrueSame, f.MeasuredSame = nearestRank(sameTrue), nearestRank(meas)
}

// combine is every outcome of two independent parts: through when either
// is, at the earlier start.
func combine(a []oOutcome, b map[oOutcome]bool) []oOutcome {
	bs := make([]oOutcome, 0, len(b))
	for o := range b {
		bs = append(bs, o)
	}
	return combineList(a, bs)
}

func combineList(a, b []oOutcome) []oOutcome {
	set := map[oOutcome]bool{}
	for _, x := range a {
		for _, y := range b {
			o := x
			if y.through && (!o.through || y.at < o.at) {
				o = y
			}
			if x.through && y.through {
				o.done = min(x.done, y.done)
			}
			set[o] = true
		}
	}
	out := make([]oOutcome, 0, len(set))
	for o := range set {
		out = append(out, o)
	}
	return out
}

// oRec is one status record of a message: a callback or webhook as the sink
// logged it, or a check_status answer.
type oRec struct {
	tx, ch, state  string    // ch "" when the record names none (placed by judge)
	at, upd        time.Time // arrival (a poll's answer); the status's own time (updatedAt; at when none)
	item           int       // chain item, set by judge; -1: none
	refused, held  bool      // the sink refused the call / held its answer on purpose
	polled, notify bool
}

// sinkRecords reads the records of events.jsonl: each callback or webhook
// joined to its message by this run's and part's tag, else by the id the
// service answered (txId, notificationId) — never by the externalId alone.
func (c oCase) sinkRecords(r *oRaw, recs map[int64][]oRec, txSeq, nidSeq, extSeq map[string]int64, f *oFigures) {
	for _, e := range r.events {
		refused := e.Answered != 0 && (e.Answered < 200 || e.Answered > 299)
		rec := oRec{at: e.ReceivedAt, upd: e.ReceivedAt, refused: refused, held: e.Delayed > 0, item: -1}
		switch {
		case e.Kind == rundir.KindIncoming:
			f.Incoming++
			var p struct {
				OutgoingTxID string `json:"outgoingTxId"`
			}
			if json.Unmarshal(e.Payload, &p) == nil && p.OutgoingTxID != "" {
				if _, ok := txSeq[p.OutgoingTxID]; ok {
					f.Replies++
				}
			}
		case c.API == rundir.APIMessaging && e.Kind == rundir.KindCallback:
			var p struct {
				TxID      string         `json:"txId"`
				State     string         `json:"state"`
				Channel   string         `json:"channel"`
				UpdatedAt string         `json:"updatedAt"`
				TrackData map[string]any `json:"trackData"`
			}
			if json.Unmarshal(e.Payload, &p) != nil {
				continue
			}
			seq, ok := txSeq[p.TxID]
			if !ok && p.TrackData != nil && fmt.Sprint(p.TrackData[rundir.TrackRun]) == r.meta.ID &&
				fmt.Sprint(p.TrackData[rundir.TrackPart]) == orNil(r.meta.Part) {
				seq, _ = strconv.ParseInt(fmt.Sprint(p.TrackData[rundir.TrackSeq]), 10, 64)
			}
			if seq <= 0 {
				continue // unmatched
			}
			rec.tx, rec.ch, rec.state = p.TxID, p.Channel, p.State
			if u, err := time.Parse(time.RFC3339Nano, p.UpdatedAt); err == nil {
				rec.upd = u
			}
			recs[seq] = append(recs[seq], rec)
		case c.API == rundir.APINotify && e.Kind == rundir.KindWebhook:
			var p struct {
				NotificationID string `json:"notificationId"`
				ExternalID     string `json:"externalId"`
				Status         string `json:"status"`
			}
			if json.Unmarshal(e.Payload, &p) != nil {
				continue
			}
			seq, ok := nidSeq[p.NotificationID]
			if !ok {
				seq = tagSeq(p.ExternalID, r.meta.ID)
			}
			if seq <= 0 {
				continue
			}
			rec.state, rec.notify = p.Status, true
			recs[seq] = append(recs[seq], rec)
		}
	}
}

// orNil is s, or what fmt prints for a missing map key when s is "".
func orNil(s string) string {
	if s == "" {
		return fmt.Sprint(nil)
	}
	return s
}

// pollRecords reads the records of a poll run: every check_status answer
// (2xx with a state) is a record of its message, arriving at its answer
// (send + latency), with no time of its own. A callback or webhook the sink
// logged anyway is counted beside the polls (poll means poll).
func (c oCase) pollRecords(r *oRaw, recs map[int64][]oRec, f *oFigures) {
	// Polls read one status as often as they ask: one status change, seen
	// first at the earliest answer.
	type read struct {
		seq            int64
		tx, ch, status string
	}
	first := map[read]time.Time{}
	for _, a := range r.attempts {
		if a.Op != "check_status" || a.Seq <= 0 || a.Code < 200 || a.Code > 299 || a.State == "" {
			continue
		}
		at := a.Sent.Add(time.Duration(a.Latency * float64(time.Second)))
		k := read{a.Seq, a.TxID, a.Channel, a.State}
		if t, ok := first[k]; !ok || at.Before(t) {
			first[k] = at
		}
	}
	for k, at := range first {
		recs[k.seq] = append(recs[k.seq], oRec{tx: k.tx, ch: k.ch, state: k.status, at: at, upd: at, polled: true, item: -1})
	}
	for _, e := range r.events {
		if e.Kind == rundir.KindCallback || e.Kind == rundir.KindWebhook {
			f.BesidePolls++
		}
		if e.Kind == rundir.KindIncoming {
			f.Incoming++
		}
	}
}

// judge judges the set of records of message m: where each belongs on the
// chain, the duplicates and redeliveries, the failover steps and the end.
func (c oCase) judge(m *oMsg, rs []oRec, f *oFigures) {
	var keep []oRec
	for _, x := range rs {
		if oFinal[x.state] || x.notify { // ACCEPTED and the like are not statuses
			keep = append(keep, x)
		}
	}
	rs = keep
	for _, x := range rs {
		if x.ch == "" && !x.notify {
			f.Channelless++
		}
	}
	if c.API == rundir.APIMessaging {
		c.place(rs)
	}
	// One status — (txId, channel, state); a notification's status — is
	// judged at its first arrival; later ones are duplicates, or
	// redeliveries when the arrival before was refused or held by the sink.
	type status struct{ tx, ch, state string }
	groups := map[status][]oRec{}
	for _, x := range rs {
		k := status{x.tx, x.ch, x.state}
		groups[k] = append(groups[k], x)
	}
	top := 0
	endTx := map[string]bool{}
	ends := 0
	for k, g := range groups {
		sort.SliceStable(g, func(i, j int) bool { return g[i].at.Before(g[j].at) })
		for i, x := range g {
			if x.refused {
				f.Refused++
			}
			if i == 0 || x.polled {
				continue
			}
			switch p := g[i-1]; {
			case p.refused || p.held:
				if !x.refused {
					f.Redelivered++
				}
			default:
				f.Duplicates++
			}
		}
		first := g[0]
		ending, step := true, false
		if !first.notify {
			ending, step = oRule(c.Chain, first.item, k.state)
		}
		if first.item >= 0 {
			reach := first.item
			if step {
				reach++
			}
			top = max(top, reach)
		}
		if !ending {
			continue
		}
		ends++
		endTx[k.tx] = true
		if !m.ended || first.at.Before(m.end) {
			m.ended, m.end = true, first.at
		}
		if rank := oStateRank[k.state]; ends == 1 || rank > m.finalRank || rank == m.finalRank && first.at.Before(m.finalAt) {
			m.finalRank, m.finalCh, m.finalAt = rank, k.ch, first.at
		}
	}
	top = min(top, len(c.Chain)-1)
	m.item = top
	for k := 0; k < top; k++ {
		m.steps[c.Chain[k].Channel+">"+c.Chain[k+1].Channel] = true
	}
	if c.API == rundir.APINotify && ends > 1 || c.API == rundir.APIMessaging && len(endTx) > 1 {
		f.DupDeliveries++
	}
}

// place sets each record's chain item, and the channel of one that names
// none, by the chain and the records' own times: per txId, the message is
// on the first item, then on the one after each item a record fails over
// from (or the item of a later record with a channel). A record without a
// channel is on that item, except DELIVERED, NOT_DELIVERED and SEEN, which
// name their channel whenever it is in the record's enum: without one they
// are on the first item from there whose channel is not (vkok). At one
// instant a record with a channel comes first.
func (c oCase) place(rs []oRec) {
	sort.SliceStable(rs, func(i, j int) bool {
		x, y := rs[i], rs[j]
		if x.tx != y.tx {
			return x.tx < y.tx
		}
		if !x.upd.Equal(y.upd) {
			return x.upd.Before(y.upd)
		}
		if (x.ch == "") != (y.ch == "") {
			return x.ch != ""
		}
		return x.at.Before(y.at)
	})
	inEnum := map[string]bool{"sms": true, "viber": true, "whatsapp": true, "push": true, "tgotp": true}
	cur := 0
	type change struct {
		tx, state string
		upd       time.Time
	}
	placed := map[change]int{} // a status change without a channel → its item: a copy of it goes there too
	for i := range rs {
		x := &rs[i]
		if i == 0 || x.tx != rs[i-1].tx {
			cur = 0
		}
		k := change{x.tx, x.state, x.upd}
		if it, ok := placed[k]; ok && x.ch == "" {
			x.item, x.ch = it, c.Chain[it].Channel
			continue
		}
		switch {
		case x.ch != "":
			x.item = chainIndex(c.Chain, x.ch)
		case cur >= len(c.Chain):
			x.item = -1
		case x.state == "FAILED" || x.state == "EXPIRED":
			x.item = cur
		default:
			x.item = cur
			for j := cur; j < len(c.Chain); j++ {
				if !inEnum[c.Chain[j].Channel] {
					x.item = j
					break
				}
			}
		}
		if x.item < 0 {
			continue
		}
		if x.ch == "" {
			x.ch = c.Chain[x.item].Channel
			placed[k] = x.item
		}
		cur = max(cur, x.item)
		if _, step := oRule(c.Chain, x.item, x.state); step {
			cur = max(cur, x.item+1)
		}
	}
}

// pollTruth judges a polled run against the truth by what its polls could
// see (a status change's truth time is when check-status can first show
// it): a message's end cannot be measured before its first true ending
// status, and a poll sent after that status and answered 2xx by the deadline
// surely saw an end, so the message is not lost and ended by that answer.
func (c oCase) pollTruth(r *oRaw, f *oFigures, msgs map[int64]*oMsg, deadline time.Time) {
	f.PollTruth = []string{} // judged, even when empty
	txEnd := map[string]time.Time{}
	for _, tm := range r.truth.Messages {
		for _, s := range tm.Steps {
			ends, _ := oRule(c.Chain, chainIndex(c.Chain, s.Channel), s.State)
			at := tm.AcceptedAt.Add(s.Delay.D())
			if t, ok := txEnd[tm.ID]; ends && (!ok || at.Before(t)) {
				txEnd[tm.ID] = at
			}
		}
	}
	surely := map[string]time.Time{} // txId → the earliest answer of a poll sent after its end
	for _, a := range r.attempts {
		t, ok := txEnd[a.TxID]
		if a.Op != "check_status" || !ok || a.Code < 200 || a.Code > 299 || !a.Sent.After(t.Add(time.Millisecond)) {
			continue
		}
		ans := a.Sent.Add(time.Duration(a.Latency * float64(time.Second)))
		if s, ok := surely[a.TxID]; !ok || ans.Before(s) {
			surely[a.TxID] = ans
		}
	}
	for seq, m := range msgs {
		if !m.accepted {
			continue
		}
		var first, by time.Time
		for tx := range m.txs {
			if t, ok := txEnd[tx]; ok && (first.IsZero() || t.Before(first)) {
				first = t
			}
			if s, ok := surely[tx]; ok && (by.IsZero() || s.Before(by)) {
				by = s
			}
		}
		switch {
		case m.ended && (first.IsZero() || m.end.Before(first.Add(-time.Millisecond))):
			f.PollTruth = append(f.PollTruth, fmt.Sprintf("message %d: ends at %s by the polls, before its first true ending status (%s)", seq, m.end.UTC().Format(time.RFC3339Nano), first.UTC().Format(time.RFC3339Nano)))
		case !by.IsZero() && !by.After(deadline) && (!m.ended || m.end.After(by.Add(time.Millisecond))):
			f.PollTruth = append(f.PollTruth, fmt.Sprintf("message %d: a poll answered at %s saw its end (true at %s), measured end %v", seq, by.UTC().Format(time.RFC3339Nano), first.UTC().Format(time.RFC3339Nano), m.end))
		}
	}
}
