package characterise

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/msgload/msgload/replay"
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
// to --max-window (the longest wait any probe makes), as many as its share
// of the budget affords; ok false when it affords too few. Each age may
// cost two sends (refused, then retried with a new token); one send at age
// 0 fetches the token, and one more from a client without the right (the
// embedded simulator's only): each of them may cost two as well. It runs
// last, on what the probes before leave of the budget (sized then: the
// rate-limit probes keep their shares), so its requests are not planned.
func tokenPlanned(o Options, s *scenarios.Scenario) (Probe, bool) {
	steps := min(int(float64(o.Budget)*tokenShare)/2-int(tokenFixed(s.Target.Embedded)), tokenMaxSteps)
	if s.API != rundir.APINotify || steps < tokenMinSteps {
		return Probe{}, false
	}
	pr := Probe{Name: probeToken}
	if !s.Target.Embedded {
		pr.CoolDown = o.MaxWindow // the probes before may have left the limiter refusing: a 429 tells nothing of the token
	}
	return pr.withLadder(tokenLadder(o.MaxWindow, steps), s.Target.Embedded), true
}

// tokenFixed is the token probe's sends besides its ladder: the first, and
// the client's without the right (embedded).
func tokenFixed(embedded bool) int64 {
	if embedded {
		return 2
	}
	return 1
}

// withLadder is the token probe sending at the ages ds: its time and
// description (its requests, two a send, are sized when it runs).
func (pr Probe) withLadder(ds []time.Duration, embedded bool) Probe {
	pr.ladder, pr.Takes = ds, ds[len(ds)-1]+probeGrace
	pr.What = fmt.Sprintf("one client holds its first token (no early refresh) and sends with it at ages 0, %s; a refused send is retried once with a new token", ladderText(ds))
	if embedded {
		pr.What += "; the simulator's " + sim.NoRightClient + " client (no right to send) sends once"
	}
	pr.What += fmt.Sprintf(" (what the probes before leave of the budget, at most %d)", 2*(tokenFixed(embedded)+int64(len(ds))))
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
		tok = tok.withLadder(tokenLadder(spare, len(tok.ladder)), embedded)
	}
	if len(tok.ladder) < tokenMinSteps {
		return
	}
	p.Probes = append(p.Probes, tok)
}

// sizeToken is the token probe on what the budget has left: two requests a
// send, its ladder cut to what they afford (nothing under two ages).
func (st *state) sizeToken(pr Probe, left int64) Probe {
	fixed := tokenFixed(st.base.Target.Embedded)
	n := min(int64(len(pr.ladder)), max(left, 0)/2-fixed)
	if n < tokenMinSteps {
		pr.Requests = 0
		return pr
	}
	pr = pr.withLadder(pr.ladder[:n], st.base.Target.Embedded)
	pr.Requests = 2 * (fixed + n)
	return pr
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
	to := s.Message.Recipient
	if !rundir.IsMSISDN(to) {
		to = "+79990000000"
	}
	var reqs []replay.Synthetic
	send := func(i int, client string, at time.Duration) {
		body, _ := json.Marshal(map[string]any{"recipient": map[string]string{"value": to}, "notificationText": fmt.Sprintf("token %d", i),
			"externalId": fmt.Sprintf("token-%d", i)})
		reqs = append(reqs, replay.Synthetic{At: at, Method: http.MethodPost, Path: rundir.RouteNotifications, Client: client, Body: body})
	}
	send(0, heldClient, 0) // fetches the token held
	if len(s.Creds) > 1 {
		send(1, forbiddenClient, time.Millisecond)
	}
	for i, d := range pr.ladder {
		send(i+2, heldClient, d)
	}
	if err := replay.WriteSynthetic(path, time.Now().UTC(), "characterise", reqs); err != nil {
		return fmt.Errorf("characterise: %w", err)
	}
	s.Load = scenarios.LoadSpec{Profile: "replay", File: path, Speed: 1, ExternalIDs: "new", MaxInFlight: s.Load.MaxInFlight}
	s.MaxMessages = pr.Requests / 2 // each may be refused and retried with a new token: two sends
	return nil
}
