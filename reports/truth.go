package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"github.com/msgload/msgload/rundir"
)

// truth compares the measured figures with truth.json, when the run has one.
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
		MeasuredLatency: a.s.Delivery.Latency, MeasuredLost: a.s.Delivery.Lost, Windows: []TruthWindow{}}
	h := newHist()
	// A message is expected lost when none of its terminal callbacks got through.
	// Terminal: for messaging, a ranked state on the last channel the message
	// reached (NOT_DELIVERED on viber before sms is a step, not an end); for
	// notifications, the final status.
	type fate struct{ terminal, through bool }
	fates := map[string]*fate{}
	terminal := map[string][]string{}
	for _, m := range t.Messages {
		r.Messages++
		if m.Sends > 1 {
			r.DuplicateSends++
		}
		last := ""
		if n := len(m.Steps); n > 0 {
			last = m.Steps[n-1].Channel
		}
		var states []string
		first := -1.0
		for _, s := range m.Steps {
			term := s.State == m.Final
			if m.API == rundir.APIMessaging || stateRank[s.State] > 0 {
				term = stateRank[s.State] > 0 && s.Channel == last
			}
			if term {
				states = append(states, s.State)
				if first < 0 {
					first = s.Delay.D().Seconds()
				}
			}
		}
		if len(states) == 0 && m.Final != "" {
			states = []string{m.Final}
		}
		terminal[m.ID] = states
		if first >= 0 {
			h.observe(first)
		}
	}
	for _, c := range t.Callbacks {
		switch c.Action {
		case rundir.CallbackDropped:
			r.CallbacksDropped++
		case rundir.CallbackFailed:
			r.CallbacksFailed++
		case rundir.CallbackDuplicated:
			r.CallbacksDup++
		}
		if c.Kind == rundir.KindIncoming {
			continue
		}
		states, ok := terminal[c.ID]
		if !ok || (c.State != "" && indexOf(states, c.State) < 0) {
			continue
		}
		f := fates[c.ID]
		if f == nil {
			f = &fate{}
			fates[c.ID] = f
		}
		f.terminal = true
		if c.Action == rundir.CallbackSent || c.Action == rundir.CallbackDuplicated || (c.Action == rundir.CallbackRetried && c.Status >= 200 && c.Status < 300) {
			f.through = true
		}
	}
	for id := range terminal {
		if f := fates[id]; f == nil || !f.through {
			r.ExpectedLost++
		}
	}
	r.TrueLatency = h.percentiles()
	// Limiter windows, true and as the attacker saw them.
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
	a.s.Truth = r
	return nil
}
