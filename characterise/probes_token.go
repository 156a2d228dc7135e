package characterise

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
)

// probeToken holds one notify token and sends with it at growing ages until
// the service refuses it (its real lifetime against the expires_in it
// announced); the refused send is retried once with a new token (refresh:
// each send may cost two, so the probe's hits are half its requests);
// and, against the embedded simulator, a client without the right to send
// sends once (401 against 403).
const probeToken = "tokens"

// tokenFile is the recording the token probe replays, in the
// characterisation's directory (no credential in it: the harness
// authenticates its clients afresh).
const tokenFile = "tokens.jsonl"

// The token probe's shares and ladder.
const (
	tokenShare    = 0.05 // of the budget, at most
	tokenFirstAge = time.Second
	tokenGrowth   = 1.5 // each age the last's times this
	tokenMaxSteps = 12
	tokenMinSteps = 2
	// the recording's names of the probe's two clients (mapped onto the
	// scenario's in order)
	heldClient, forbiddenClient = "held", "forbidden"
)

// tokenLadder is the ages the held token is sent at: tokenFirstAge growing
// by tokenGrowth up to longest (the last exactly it), as many as steps.
func tokenLadder(longest time.Duration, steps int) []time.Duration {
	var ds []time.Duration
	for d := tokenFirstAge; len(ds) < steps; d = time.Duration(float64(d) * tokenGrowth) {
		ds = append(ds, min(d, longest).Round(10*time.Millisecond))
		if d >= longest {
			break
		}
	}
	return ds
}

// tokenPlanned is the token probe as planned for the notify API: ages up
// to --max-window (the longest wait any probe makes), within its share of
// the budget and what the probes before leave; ok false when it affords
// too few ages. Each age
// may cost two sends (refused, then retried with a new token); one send at
// age 0 fetches the token, and one more from a client without the right
// (the embedded simulator's only): each of them may cost two as well.
func tokenPlanned(o Options, s *scenarios.Scenario, left int64) (Probe, bool) {
	fixed := int64(1)
	if s.Target.Embedded {
		fixed++
	}
	steps := min(int(min(float64(o.Budget)*tokenShare, float64(left)))/2-int(fixed), tokenMaxSteps)
	if s.API != rundir.APINotify || steps < tokenMinSteps {
		return Probe{}, false
	}
	pr := Probe{Name: probeToken}
	if !s.Target.Embedded {
		pr.CoolDown = o.MaxWindow // the probes before may have left the limiter refusing: a 429 tells nothing of the token
	}
	return pr.withLadder(tokenLadder(o.MaxWindow, steps), s.Target.Embedded), true
}

// withLadder is the token probe sending at the ages ds: its requests (two
// a send), time and description.
func (pr Probe) withLadder(ds []time.Duration, embedded bool) Probe {
	fixed := int64(1)
	if embedded {
		fixed++
	}
	pr.ladder, pr.Requests, pr.Takes = ds, 2*(fixed+int64(len(ds))), ds[len(ds)-1]+probeGrace
	pr.What = fmt.Sprintf("one client holds its first token (no early refresh) and sends with it at ages 0, %s; a refused send is retried once with a new token", ladderText(ds))
	if embedded {
		pr.What += "; the simulator's " + sim.NoRightClient + " client (no right to send) sends once"
	}
	return pr
}

// withToken puts the token probe tok last in the plan when it fits
// --max-time (its longest age shortened to fit, not under two ages).
func (p *Plan) withToken(tok Probe, ok, embedded bool) {
	spare := p.MaxTime - p.Takes() - probeGrace - tok.CoolDown
	if !ok || spare < tokenFirstAge*2 {
		return
	}
	if last := tok.ladder[len(tok.ladder)-1]; last > spare {
		// the ages it gives up are the isolation probe's no more: they stay unplanned
		tok = tok.withLadder(tokenLadder(spare, len(tok.ladder)), embedded)
	}
	if len(tok.ladder) < tokenMinSteps {
		return
	}
	p.Probes = append(p.Probes, tok)
}

// tokenReserve is what the probes after pr have reserved of the budget (the
// token probe's share): a probe sized from what is left leaves it.
func (st *state) tokenReserve(pr Probe) int64 {
	after, n := false, int64(0)
	for _, p := range st.plan.Probes {
		if after && p.Name == probeToken {
			n += p.Requests
		}
		after = after || p.Name == pr.Name
	}
	return n
}

// tokenScenario makes s the token probe's: the file's first client (and the
// simulator's client without the right, embedded), a replay of a recording
// of the ladder's sends written into dir.
func (st *state) tokenScenario(s *scenarios.Scenario, pr Probe, dir string) error {
	s.Creds = st.base.Creds[:1]
	if st.base.Target.Embedded {
		s.Creds = append(s.Creds[:1:1], scenarios.Cred{ID: sim.NoRightClient, Secret: "demo"}) // the simulator's built-in, public
	}
	s.Clients = scenarios.Clients{N: len(s.Creds)}
	path := filepath.Join(dir, tokenFile)
	var b bytes.Buffer
	start := time.Now().UTC()
	line := func(v any) {
		j, _ := json.Marshal(v)
		b.Write(append(j, '\n'))
	}
	line(map[string]any{"format": "msgload-recording", "version": 1, "started": start, "upstream": "characterise"})
	to := s.Message.Recipient
	if !rundir.IsMSISDN(to) {
		to = "+79990000000"
	}
	send := func(i int, client string, at time.Duration) {
		body, _ := json.Marshal(map[string]any{"recipient": map[string]string{"value": to}, "notificationText": fmt.Sprintf("token %d", i),
			"externalId": fmt.Sprintf("token-%d", i)})
		line(map[string]any{"time": start.Add(at), "offset_ns": int64(at), "method": "POST", "path": rundir.RouteNotifications, "client": client,
			"headers": map[string][]string{"Content-Type": {"application/json"}}, "body": string(body), "code": 200, "latency_s": 0})
	}
	send(0, heldClient, 0) // fetches the token held
	if len(s.Creds) > 1 {
		send(1, forbiddenClient, time.Millisecond)
	}
	for i, d := range pr.ladder {
		send(i+2, heldClient, d)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("characterise: %w", err)
	}
	s.Load = scenarios.LoadSpec{Profile: "replay", File: path, Speed: 1, ExternalIDs: "new", MaxInFlight: s.Load.MaxInFlight}
	s.MaxMessages = pr.Requests / 2 // each may be refused and retried with a new token: two sends
	return nil
}
