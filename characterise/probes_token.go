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

// seedLimit is the notification seed's documented rate limit (100 requests
// a minute per integration): the burst the isolation probe is kept room for
// before the token probe takes its requests (isolationNeed).
const seedLimit = 100

// isolationNeed is what the isolation probe sends past a burst of b: each
// of its two clients b and a tenth more (at least 5); sized uses it when it
// runs, from the burst found.
func isolationNeed(b int64) int64 {
	return 2 * (b + max(5, b/10))
}

// tokenPlanned is the token probe as planned for the notify API: ages up
// to --max-window (the longest wait any probe makes), as many as its share
// of the budget affords; ok false when it affords too few. Each age may
// cost two sends (refused, then retried with a new token); one send at age
// 0 fetches the token, and one more from a client without the right (the
// embedded simulator's only): each of them may cost two as well.
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

// withLadder is the token probe sending at the ages ds: its requests (two
// a send: each may be refused and retried with a new token), its time and
// description.
func (pr Probe) withLadder(ds []time.Duration, embedded bool) Probe {
	pr.ladder, pr.Takes = ds, ds[len(ds)-1]+probeGrace
	pr.Requests = 2 * (tokenFixed(embedded) + int64(len(ds)))
	pr.What = fmt.Sprintf("one client holds its first token (no early refresh) and sends with it at ages 0, %s; a refused send is retried once with a new token", ladderText(ds))
	if embedded {
		pr.What += "; the simulator's " + sim.NoRightClient + " client (no right to send) sends once"
	}
	return pr
}

// tokenRequests is what the token probe takes of what the budget left
// before the isolation probe's share (0 when it is not planned: tokenWhy
// says why). Its requests are firm, planned here, never what the run
// happens to leave: with two clients or more it takes them only when the
// isolation probe keeps room for two clients past the seed's limit.
func (p *Plan) tokenRequests(s *scenarios.Scenario, left int64) int64 {
	tok, ok := tokenPlanned(p.Options, s)
	switch {
	case s.API != rundir.APINotify:
		return 0
	case !ok:
		p.tokenWhy = fmt.Sprintf("not planned: --budget %d affords it fewer than %d ages (%g of the budget, two requests a send)", p.Budget, tokenMinSteps, tokenShare)
		return 0
	}
	keep := int64(0)
	if len(s.Creds) >= 2 {
		keep = isolationNeed(seedLimit)
	}
	if left-keep < tok.Requests {
		p.tokenWhy = fmt.Sprintf("does not fit: needs %d requests, %d left of --budget %d", tok.Requests, max(left-keep, 0), p.Budget)
		if keep > 0 {
			p.tokenWhy += fmt.Sprintf(" once the isolation probe keeps %d (two clients past the seed's %d a minute)", keep, seedLimit)
		}
		p.tokenWhy += " (raise --budget)"
		return 0
	}
	return tok.Requests
}

// withToken puts the token probe, of at most n requests, last in the plan
// when it fits --max-time (its longest age shortened to fit, not under two
// ages), else says why not; what it does not take goes back to the
// isolation probe.
func (p *Plan) withToken(s *scenarios.Scenario, n int64) {
	if n <= 0 {
		return
	}
	tok, _ := tokenPlanned(p.Options, s)
	spare := p.MaxTime - p.Takes() - probeGrace - tok.CoolDown
	if spare >= tokenFirstAge*2 && tok.ladder[len(tok.ladder)-1] > spare {
		tok = tok.withLadder(tokenLadder(spare, len(tok.ladder)), s.Target.Embedded)
	}
	if spare < tokenFirstAge*2 || len(tok.ladder) < tokenMinSteps {
		need := tok.CoolDown + tokenFirstAge*2 + probeGrace
		p.tokenWhy = fmt.Sprintf("does not fit: needs %s, the plan leaves %s of --max-time %s (raise --max-time)", need.Round(time.Second), max(p.MaxTime-p.Takes(), 0).Round(time.Second), p.MaxTime)
		p.giveToIsolation(n)
		return
	}
	p.giveToIsolation(n - tok.Requests)
	p.Probes = append(p.Probes, tok)
}

// sizeToken is the token probe on what the budget has left: its ladder cut
// to what that affords (nothing under two ages). The plan reserved its
// requests, so it is cut only when a probe before sent more than planned.
func (st *state) sizeToken(pr Probe, left int64) Probe {
	fixed := tokenFixed(st.base.Target.Embedded)
	n := min(int64(len(pr.ladder)), max(left, 0)/2-fixed)
	if n < tokenMinSteps {
		pr.Requests = 0
		return pr
	}
	return pr.withLadder(pr.ladder[:n], st.base.Target.Embedded)
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
