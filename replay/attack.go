package replay

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/msgload/msgload/attack"
	"github.com/msgload/msgload/rundir"
)

// AttackPlan adapts one API of a recording to the attack package
// (attack.Options: Pacer, Requests, Body, ClientFor, Extra), so a replay runs
// through the harness with its retries, limits, probes and metrics:
//
//	p, _ := replay.ForAttack(reqs, rundir.APINotify, clientIDs, replay.AttackRewrite{SinkURL: sink, ExternalIDs: "keep"}, speed)
//	o.Pacer, o.Requests, o.Body, o.ClientFor, o.Extra = p.Pacer, p.Requests, p.Body, p.ClientFor, p.Extra
//
// Message seq (from 1) is the seq-th recorded send of the API, in offset order.
// The API's other recorded requests (status checks, webhook registrations,
// other calls; requests of no known API go with messaging, or with notify when
// the recording has no messaging sends) are Extra: sent at their recorded
// offsets on the same clock, not as messages. Recorded token calls are never
// replayed: the attacker authenticates its clients afresh.
type AttackPlan struct {
	Pacer    *Pacer
	Requests int64
	// Sends are the recorded sends, message seq at index seq-1.
	Sends []Request
	// Extra are the other recorded requests, ready for attack.Options.Extra.
	Extra []attack.Extra
	// Skipped counts the recorded requests this plan does not replay, by reason.
	Skipped map[string]int
	// Repeats counts the recorded sends that resend an earlier send's
	// externalId (the application's retries): RepeatOf folds each into the
	// attempts of the first.
	Repeats  int
	repeatOf []int64 // seq-1 → the seq it repeats, 0 for none

	// Clients maps recorded clients onto the scenario's; ClientFor(seq) is the
	// scenario client the recording's client of message seq maps to.
	Clients *clientMap

	rewrite AttackRewrite
}

// AttackRewrite says how sends are rewritten for the attacker.
type AttackRewrite struct {
	SinkURL     string // callbacks to SinkURL/callback, webhook registrations to SinkURL/webhook ("" keeps them)
	ExternalIDs string // ExternalIDsKeep (default) or ExternalIDsNew (the tag's externalId)
}

// Reasons a recorded request is not replayed (attackPlan.Skipped, replay.json).
const (
	SkipToken  = "token endpoint (fresh tokens are used)"
	skipNoPart = "no sends of its API recorded (a replay part is an API with sends)"
)

// ForAttack returns the plan for the requests of api (rundir.APIMessaging or
// rundir.APINotify) in reqs at speed, with clients the scenario's client ids.
func ForAttack(reqs []Request, api string, clients []string, rw AttackRewrite, speed float64) (*AttackPlan, error) {
	hasSends := map[string]bool{}
	for _, r := range reqs {
		if r.Op == OpSend {
			hasSends[r.API] = true
		}
	}
	other := api == apiMessaging || !hasSends[apiMessaging] // who replays requests of no known API
	var sends, extras, mine []Request
	skipped := map[string]int{}
	for _, r := range reqs {
		switch {
		case r.API == api && r.Op == OpSend:
			sends = append(sends, r)
		case r.API == apiToken:
			if api == apiNotify {
				skipped[SkipToken]++
			}
			continue
		case r.API == api, r.API == apiOther && other:
			extras = append(extras, r)
		case r.API != api && r.API != apiOther && !hasSends[r.API] && api == firstPart(hasSends):
			skipped[skipNoPart]++
			continue
		default:
			continue
		}
		mine = append(mine, r)
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
	p, err := newPacer(sends, speed)
	if err != nil {
		return nil, err
	}
	cm := newClientMap(mine, map[string][]string{api: clients, apiOther: clients})
	plan := &AttackPlan{Pacer: p, Requests: int64(len(sends)), Sends: sends, Skipped: skipped, Clients: cm, rewrite: rw}
	first := map[[2]string]int64{} // recorded client and externalId → the seq that sent it first
	plan.repeatOf = make([]int64, len(sends))
	for i, r := range sends {
		if r.ExternalID == "" {
			continue
		}
		k := [2]string{r.ClientID, r.ExternalID}
		if s, ok := first[k]; ok {
			plan.repeatOf[i] = s
			plan.Repeats++
		} else {
			first[k] = int64(i + 1)
		}
	}
	for i := range extras {
		r := &extras[i]
		x := attack.Extra{At: time.Duration(float64(r.Offset) / speed), Op: r.Op, Client: cm.Client(i, r),
			Method: r.Method, Path: r.Path, Header: r.Header.Clone()}
		if r.Op == opOther {
			x.Op = attack.OpOther
		}
		if r.Query != "" {
			x.Path += "?" + r.Query
		}
		if !slices.Contains(clients, x.Client) {
			x.Client = "" // the attacker's first client
		}
		if x.Body, err = rewriteBody(r, bodyRewrite{SinkURL: rw.SinkURL}); err != nil {
			x.Body = r.Body
		}
		plan.Extra = append(plan.Extra, x)
	}
	return plan, nil
}

// firstPart is the API whose plan counts the requests no part replays: the
// first API with sends.
func firstPart(hasSends map[string]bool) string {
	if hasSends[apiMessaging] {
		return apiMessaging
	}
	return apiNotify
}

// ClientFor is the scenario client for message seq.
func (p *AttackPlan) ClientFor(seq int64) string {
	i := int(seq - 1)
	if i < 0 || i >= len(p.Sends) {
		return ""
	}
	return p.Clients.Client(i, &p.Sends[i])
}

// RepeatOf is attack.Options.RepeatOf: a recorded send that repeats an
// earlier send's externalId (for the same recorded client) is that message's
// next attempt, so a replay with new externalIds sends the repeat with the
// same fresh id and the report counts one message, as the service does.
func (p *AttackPlan) RepeatOf(seq int64) int64 {
	if seq < 1 || seq > int64(len(p.repeatOf)) {
		return 0
	}
	return p.repeatOf[seq-1]
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
	o := bodyRewrite{SinkURL: p.rewrite.SinkURL}
	switch r.API {
	case apiMessaging:
		tag.Chain = channelsOf(r.Body)
		o.TrackData = tag.TrackData()
	case apiNotify:
		if p.rewrite.ExternalIDs == ExternalIDsNew || r.ExternalID == "" {
			o.ExternalID = tag.ExternalID()
		}
	}
	return rewriteBody(r, o)
}

// Report builds the replay report (replay.json) of a replay run through the
// attack package, from the attempts it recorded in attemptsPath: the first
// attempt of message seq is compared with recorded send seq. Lateness is taken
// from the attempts (sent − intended of first attempts).
func (p *AttackPlan) Report(runID string, speed float64, attemptsPath string) (*Report, error) {
	rep := &Report{RunID: runID, Speed: speed, ExternalIDs: p.rewrite.ExternalIDs, Planned: len(p.Sends),
		Other: len(p.Extra), Repeats: p.Repeats, Clients: p.Clients.Pairs()}
	if len(p.Skipped) > 0 {
		rep.Skipped = maps.Clone(p.Skipped)
	}
	hooked := map[string]bool{}
	codes := map[codeRow]int{}
	var late []time.Duration
	first := true
	err := rundir.ReadJSONL(attemptsPath, func(a rundir.Attempt) error {
		switch {
		case a.Op == opToken && a.Outcome != rundir.OutcomeOK:
			rep.TokenErrors++
		case a.Op == opWebhook && a.Outcome == rundir.OutcomeOK && !hooked[a.Client]:
			hooked[a.Client] = true
			rep.Webhooks++
		}
		if a.Op != OpSend || a.Attempt > 1 || a.Probe != "" || a.Seq < 1 || a.Seq > int64(len(p.Sends)) {
			return nil
		}
		r := &p.Sends[a.Seq-1]
		rep.Sent++
		codes[codeRow{API: r.API, Recorded: r.RecordedCode, Replayed: a.Code}]++
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
		if d > lateThreshold {
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
