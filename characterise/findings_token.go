package characterise

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
)

// The token rules (the notification API's OAuth2 client credentials). Only
// lifetimes, codes and shapes are kept: never a token.
const (
	RuleTokenExpiresIn   = "tokens.expires_in" // seconds the token answer announced, or absent
	RuleTokenLifetime    = "tokens.lifetime"   // seconds a token was really accepted: an interval
	RuleTokenAsAnnounced = "tokens.lifetime_as_announced"
	RuleTokenRefresh     = "tokens.refresh"          // yes: after a token was refused, a new one was issued and accepted
	RuleTokenExpired     = "tokens.expired_answer"   // the answer to an expired token: code, WWW-Authenticate, body shape
	RuleTokenForbidden   = "tokens.forbidden_answer" // the answer to valid credentials without the right to send
	tokenShorter         = "shorter"                 // the token was refused before the expires_in it announced
	tokenLonger          = "longer"                  // accepted past it
	tokenAbsent          = "absent"                  // no expires_in announced
	tokenSlack           = 1.0                       // seconds: a JWT's exp is whole seconds, rounded up
)

// tokenRules are the rules of this file, in their findings' order.
var tokenRules = []string{RuleTokenExpiresIn, RuleTokenLifetime, RuleTokenAsAnnounced, RuleTokenRefresh, RuleTokenExpired, RuleTokenForbidden}

// tokenFindings: the token probe's run read — the tokens the held client
// was issued (op token attempts, in time order) and the sends each was used
// for (the last token issued before the send left).
func (st *state) tokenFindings() []reports.Finding {
	pd := st.data[probeToken]
	switch {
	case st.plan.tokenWhy != "":
		return allCannot(tokenRules, probeToken, st.plan.tokenWhy)
	case pd == nil || pd.sum == nil:
		return allCannot(tokenRules, probeToken, "the token probe did not run or wrote no report")
	case pd.verdict == reports.VerdictError:
		return allCannot(tokenRules, probeToken, distrusted)
	}
	var all []rundir.Attempt
	err := pd.eachAttempt(func(a rundir.Attempt) error {
		if !strings.HasPrefix(a.Error, "not sent:") {
			all = append(all, a)
		}
		return nil
	})
	if err != nil {
		return allCannot(tokenRules, probeToken, "its attempts could not be read: "+err.Error())
	}
	slices.SortStableFunc(all, func(x, y rundir.Attempt) int { return x.Sent.Compare(y.Sent) })
	held := st.base.Creds[0].ID
	h := heldTokens(all, held)
	fs := []reports.Finding{h.expiresIn(), h.lifetime(st.ran[probeToken].ladder)}
	fs = append(fs, h.asAnnounced(fs[0], fs[1]), h.refresh(), answerFinding(RuleTokenExpired, h.refused, "no send with the held token was refused 401"))
	if !st.base.Target.Embedded {
		return append(fs, cannot(RuleTokenForbidden, probeToken, "against a real target characterise has no credentials without the right to send (against the embedded simulator its "+sim.NoRightClient+" client sends)"))
	}
	var forb []rundir.Attempt
	for _, a := range all {
		if a.Op == "send" && a.Client == sim.NoRightClient && a.Code > 0 {
			forb = append(forb, a)
		}
	}
	return append(fs, answerFinding(RuleTokenForbidden, forb, "the client without the right to send got no answer"))
}

// tokenUse is a send and the token it carried (the one issued last before it).
type tokenUse struct {
	send, token rundir.Attempt
	n           int // which token of the client, from 1
}

// ageBounds is the token's age when the service decided the send: at
// least the send's leaving less the token answer's end, at most the send's
// answer less the token request's start.
func (u tokenUse) ageBounds() (lo, hi float64) {
	issuedLo, issuedHi := u.token.Sent, u.token.Sent.Add(secs(u.token.Latency))
	return u.send.Sent.Sub(issuedHi).Seconds(), u.send.Sent.Add(secs(u.send.Latency)).Sub(issuedLo).Seconds()
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// heldRun is the held client's tokens and sends.
type heldRun struct {
	tokens  []rundir.Attempt // answered 200, in time order
	uses    []tokenUse
	refused []rundir.Attempt // sends refused 401
}

func heldTokens(all []rundir.Attempt, client string) heldRun {
	var h heldRun
	for _, a := range all {
		switch {
		case a.Client != client:
		case a.Op == "token" && is2xx(a.Code):
			h.tokens = append(h.tokens, a)
		case a.Op == "send" && a.Code > 0 && len(h.tokens) > 0:
			h.uses = append(h.uses, tokenUse{send: a, token: h.tokens[len(h.tokens)-1], n: len(h.tokens)})
			if a.Code == 401 {
				h.refused = append(h.refused, a)
			}
		}
	}
	return h
}

// expiresIn is what the first token answer announced.
func (h heldRun) expiresIn() reports.Finding {
	if len(h.tokens) == 0 {
		return cannot(RuleTokenExpiresIn, probeToken, "no token was issued to the held client")
	}
	e := h.tokens[0].ExpiresIn
	ev := fmt.Sprintf("%d tokens issued to the held client; the first announced expires_in %g", len(h.tokens), e)
	if e <= 0 {
		return found(RuleTokenExpiresIn, probeToken, tokenAbsent, ev)
	}
	return interval(RuleTokenExpiresIn, probeToken, e, e, ev)
}

// lifetime is the interval the tokens' real lifetime is in: above every
// age a token was accepted at, at or under every age one was refused at.
func (h heldRun) lifetime(ladder []time.Duration) reports.Finding {
	lo, hi := 0.0, math.Inf(1)
	var ev []string
	for _, u := range h.uses {
		alo, ahi := u.ageBounds()
		switch {
		case is2xx(u.send.Code):
			lo = max(lo, alo)
			ev = append(ev, fmt.Sprintf("token %d accepted at an age of %.2f–%.2fs", u.n, alo, ahi))
		case u.send.Code == 401:
			hi = min(hi, ahi)
			ev = append(ev, fmt.Sprintf("token %d refused 401 at an age of %.2f–%.2fs", u.n, alo, ahi))
		default:
			ev = append(ev, fmt.Sprintf("token %d: a send answered %d at %.2f–%.2fs (tells nothing of the token)", u.n, u.send.Code, alo, ahi))
		}
	}
	longest := "none"
	if len(ladder) > 0 {
		longest = shortDur(ladder[len(ladder)-1])
	}
	switch {
	case len(ev) == 0:
		return cannot(RuleTokenLifetime, probeToken, "no send with the held token was answered")
	case math.IsInf(hi, 1):
		f := cannot(RuleTokenLifetime, probeToken, "accepted at every age tried, up to "+longest+" (--max-window and --max-time bound the ages)", ev...)
		f.Low = &lo
		return f
	case lo > hi:
		return cannot(RuleTokenLifetime, probeToken, "accepted at an age older than one it was refused at (revoked, or the service's clocks disagree)", ev...)
	}
	f := interval(RuleTokenLifetime, probeToken, lo, hi, ev...)
	f.Value = fmt.Sprintf("%.1fs..%.1fs", lo, hi)
	res := tokenSlack // exp is whole seconds: two runs' tokens live apart by up to one, and compare names no drift within it
	f.Resolution = &res
	return f
}

// asAnnounced compares the lifetime found with the expires_in announced,
// within a second (a JWT's exp is whole seconds).
func (h heldRun) asAnnounced(exp, life reports.Finding) reports.Finding {
	if exp.Value == reports.CannotTell || exp.Value == tokenAbsent {
		return cannot(RuleTokenAsAnnounced, probeToken, "no expires_in was announced to compare with")
	}
	e := *exp.Low
	ev := fmt.Sprintf("expires_in %g; lifetime %s", e, life.Value)
	switch {
	case life.Low != nil && *life.Low > e+tokenSlack:
		return found(RuleTokenAsAnnounced, probeToken, tokenLonger, ev)
	case life.Value == reports.CannotTell:
		return cannot(RuleTokenAsAnnounced, probeToken, "the lifetime cannot be told: "+life.Because, ev)
	case *life.High < e:
		return found(RuleTokenAsAnnounced, probeToken, tokenShorter, ev)
	}
	return found(RuleTokenAsAnnounced, probeToken, yes, ev+fmt.Sprintf(" (within %gs: exp is whole seconds)", tokenSlack))
}

// refresh: each refused send was retried at once with a new token — was
// the new one issued and accepted? Whether a token still valid is revoked
// when another is issued is not probed: msgload holds one token a client.
func (h heldRun) refresh() reports.Finding {
	var ok, bad int
	for _, r := range h.refused {
		for _, u := range h.uses {
			if u.send.Seq == r.Seq && u.send.Attempt == r.Attempt+1 && u.token.Sent.After(r.Sent) {
				if is2xx(u.send.Code) {
					ok++
				} else {
					bad++
				}
			}
		}
	}
	ev := fmt.Sprintf("%d sends refused 401, %d tokens issued in all; the retries with a new token: %d accepted, %d refused (whether a token still valid is revoked when a new one is issued is not probed: msgload holds one token a client)",
		len(h.refused), len(h.tokens), ok, bad)
	switch {
	case bad > 0:
		return found(RuleTokenRefresh, probeToken, no, ev)
	case ok > 0:
		return found(RuleTokenRefresh, probeToken, yes, ev)
	}
	return cannot(RuleTokenRefresh, probeToken, "no token was refused, so none was replaced (or its retry got no answer)", ev)
}

// answerFinding is the answer the first of as got: its code, the
// WWW-Authenticate's scheme and error, and the body's shape.
func answerFinding(rule string, as []rundir.Attempt, none string) reports.Finding {
	if len(as) == 0 {
		return cannot(rule, probeToken, none)
	}
	seen := map[string]int{}
	for _, a := range as {
		seen[answerOf(a)]++
	}
	var ev []string
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		ev = append(ev, fmt.Sprintf("%d answered %s", seen[k], k))
	}
	return found(rule, probeToken, answerOf(as[0]), ev...)
}

// answerOf is "401 Bearer error=\"invalid_token\" {error,message,status}":
// the code, then for a 401 or 403 the challenge and the body's shape.
func answerOf(a rundir.Attempt) string {
	s := strconv.Itoa(a.Code)
	if a.Challenge != "" {
		s += " " + a.Challenge
	}
	if a.Shape != "" {
		s += " " + a.Shape
	}
	return s
}

// checkTokenExpected says what is wrong with an expected value of a token
// rule (ok false: not a token rule).
func checkTokenExpected(rule, v string) (msg string, ok bool) {
	switch rule {
	case RuleTokenExpiresIn:
		if n, err := strconv.ParseFloat(v, 64); v != tokenAbsent && (err != nil || n < 0) {
			return "want seconds or " + tokenAbsent, true
		}
	case RuleTokenLifetime:
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			return "want a duration, e.g. 1h or 90s", true
		}
	case RuleTokenAsAnnounced:
		if v != yes && v != tokenShorter && v != tokenLonger {
			return "want yes, " + tokenShorter + " or " + tokenLonger, true
		}
	case RuleTokenExpired, RuleTokenForbidden:
		code, _, _ := strings.Cut(v, " ")
		if n, err := strconv.Atoi(code); err != nil || n < 100 || n > 599 {
			return `want an HTTP code, alone or with its challenge and shape: 401 or 401 Bearer error="invalid_token" {error,message,status}`, true
		}
	case RuleTokenRefresh:
		return checkExpected("", v), true
	default:
		return "", false
	}
	return "", true
}

// matchesToken is matches for the token rules (handled false: not one): a
// lifetime within the interval, an answer by its code alone when only the
// code is expected.
func matchesToken(f *reports.Finding, e string) (ok, handled bool) {
	switch f.Rule {
	case RuleTokenLifetime:
		d, _ := time.ParseDuration(e)
		return f.Low != nil && f.High != nil && d.Seconds() >= *f.Low && d.Seconds() <= *f.High, true
	case RuleTokenExpiresIn:
		if n, err := strconv.ParseFloat(e, 64); err == nil {
			return within(f, n), true
		}
		return f.Value == e, true
	case RuleTokenExpired, RuleTokenForbidden:
		if !strings.Contains(e, " ") {
			code, _, _ := strings.Cut(f.Value, " ")
			return code == e, true
		}
		return f.Value == e, true
	}
	return false, false
}
