package replay

import (
	"fmt"
	"slices"
	"time"

	"github.com/msgload/msgload/rundir"
)

// AttackPlan adapts the sends of one API of a recording to the attack package
// (attack.Options: Pacer, Requests, Body), so a replay can run through the
// harness with its retries, limits, probes and metrics:
//
//	p, _ := replay.ForAttack(reqs, rundir.APINotify, clientIDs, replay.AttackRewrite{SinkURL: sink, ExternalIDs: "keep"}, speed)
//	o.Pacer, o.Requests, o.Body = p.Pacer, p.Requests, p.Body
//
// Message seq (from 1) is the seq-th recorded send of the API, in offset order.
// Other recorded requests (token calls, webhook registrations, status polls) are
// left to the attacker, which authenticates, registers the sink and polls itself.
type AttackPlan struct {
	Pacer    *Pacer
	Requests int64
	// Sends are the recorded sends, message seq at index seq-1.
	Sends []Request
	// Clients maps recorded clients onto the scenario's; ClientFor(seq) is the
	// scenario client the recording's client of message seq maps to. The attacker
	// currently picks clients round robin by seq; it should ask ClientFor.
	Clients *ClientMap

	rewrite AttackRewrite
}

// AttackRewrite says how sends are rewritten for the attacker.
type AttackRewrite struct {
	SinkURL     string // callbacks to SinkURL/callback ("" keeps them)
	ExternalIDs string // ExternalIDsKeep (default) or ExternalIDsNew (the tag's externalId)
}

// ForAttack returns the plan for the sends of api (rundir.APIMessaging or
// rundir.APINotify) in reqs at speed, with clients the scenario's client ids.
func ForAttack(reqs []Request, api string, clients []string, rw AttackRewrite, speed float64) (*AttackPlan, error) {
	var sends []Request
	for _, r := range reqs {
		if r.API == api && r.Op == OpSend {
			sends = append(sends, r)
		}
	}
	if len(sends) == 0 {
		return nil, fmt.Errorf("%s sends: %w", api, ErrNoRequests)
	}
	if rw.ExternalIDs == "" {
		rw.ExternalIDs = ExternalIDsKeep
	}
	if rw.ExternalIDs != ExternalIDsKeep && rw.ExternalIDs != ExternalIDsNew {
		return nil, fmt.Errorf("external ids %q: want keep or new", rw.ExternalIDs)
	}
	p, err := NewPacer(sends, speed)
	if err != nil {
		return nil, err
	}
	return &AttackPlan{Pacer: p, Requests: int64(len(sends)), Sends: sends,
		Clients: NewClientMap(sends, map[string][]string{api: clients}), rewrite: rw}, nil
}

// ClientFor is the scenario client for message seq.
func (p *AttackPlan) ClientFor(seq int64) string {
	i := int(seq - 1)
	if i < 0 || i >= len(p.Sends) {
		return ""
	}
	return p.Clients.Client(i, &p.Sends[i])
}

// Body is attack.Options.Body: the recorded body of message seq, rewritten —
// callback to the sink, the tag in trackData (with the message's own channel
// chain), externalId kept or replaced by the tag's.
func (p *AttackPlan) Body(seq int64, _ string, tag rundir.Tag) ([]byte, error) {
	i := int(seq - 1)
	if i < 0 || i >= len(p.Sends) {
		return nil, fmt.Errorf("message %d: %w", seq, ErrNoRequests)
	}
	r := &p.Sends[i]
	o := BodyRewrite{SinkURL: p.rewrite.SinkURL}
	switch r.API {
	case APIMessaging:
		tag.Chain = channelsOf(r.Body)
		o.TrackData = tag.TrackData()
	case APINotify:
		if p.rewrite.ExternalIDs == ExternalIDsNew || r.ExternalID == "" {
			o.ExternalID = tag.ExternalID()
		}
	}
	return RewriteBody(r, o)
}

// Report builds the replay report (replay.json) of a replay run through the
// attack package, from the attempts it recorded in attemptsPath: the first
// attempt of message seq is compared with recorded send seq. Lateness is taken
// from the attempts (sent − intended of first attempts).
func (p *AttackPlan) Report(runID string, speed float64, attemptsPath string) (*Report, error) {
	rep := &Report{RunID: runID, Speed: speed, ExternalIDs: p.rewrite.ExternalIDs, Planned: len(p.Sends),
		Clients: p.Clients.Pairs()}
	codes := map[CodeRow]int{}
	var late []time.Duration
	first := true
	err := rundir.ReadJSONL(attemptsPath, func(a rundir.Attempt) error {
		if a.Op != OpSend || a.Attempt > 1 || a.Probe != "" || a.Seq < 1 || a.Seq > int64(len(p.Sends)) {
			return nil
		}
		r := &p.Sends[a.Seq-1]
		rep.Sent++
		codes[CodeRow{API: r.API, Recorded: r.RecordedCode, Replayed: a.Code}]++
		if a.Code == r.RecordedCode {
			rep.Matching++
		}
		late = append(late, max(a.Late(), 0))
		if first || a.Sent.Before(rep.Start) {
			rep.Start = a.Sent
		}
		if end := a.Sent.Add(time.Duration(a.Latency * float64(time.Second))); end.After(rep.End) {
			rep.End = end
		}
		first = false
		return nil
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("read attempts: %w", err)
	}
	rep.Codes = sortedRows(codes)
	rep.Lateness = latenessOf(late)
	return rep, nil
}

// latenessOf summarises how late sends left.
func latenessOf(xs []time.Duration) Lateness {
	var l Lateness
	l.Hits = len(xs)
	for i, d := range xs {
		if d > LateThreshold {
			l.Late++
		}
		if d > l.Max {
			l.Max, l.MaxHit = d, i
		}
	}
	if len(xs) > 0 {
		s := slices.Clone(xs)
		slices.Sort(s)
		l.P50, l.P99 = quantile(s, 0.5), quantile(s, 0.99)
	}
	return l
}
