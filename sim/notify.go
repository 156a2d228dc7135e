package sim

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/msgload/msgload/rundir"
)

// Limits the notification seed leaves open ("not shown"): the simulator's choices.
const (
	maxNotificationText = 4096
	maxExternalID       = 256
	maxWebhookURL       = 2048
)

func strconvItoa(n int64) string { return strconv.FormatInt(n, 10) }

type idemKey struct {
	client, externalID string
}

type idemEntry struct {
	id      [16]byte
	hash    [32]byte
	created time.Time
	ready   time.Time // the first request's answer (created + IdempotencyProcessing)
}

// notification is one accepted notification in the engine.
type notification struct {
	id         [16]byte
	client     string
	externalID string
	accepted   int64
	truth      *truthMsg // nil when the truth is full
}

// notificationRequest is the body of POST /api/v1/notifications.
type notificationRequest struct {
	Recipient *struct {
		Value *string `json:"value"`
	} `json:"recipient"`
	NotificationText *string `json:"notificationText"`
	ExternalID       *string `json:"externalId"`
}

// notificationResponse is the simulator's answer to a send (fields beyond
// notificationId are its own choice).
type notificationResponse struct {
	NotificationID string `json:"notificationId"`
	ExternalID     string `json:"externalId,omitempty"`
	Status         string `json:"status"`
	CreatedAt      string `json:"createdAt"`
}

// notificationCallbackEvent is the webhook body posted at a terminal status.
type notificationCallbackEvent struct {
	EventID        string `json:"eventId"`
	NotificationID string `json:"notificationId"`
	ExternalID     string `json:"externalId,omitempty"`
	Status         string `json:"status"`
	ErrorCode      int    `json:"errorCode"`
	UpdatedAt      string `json:"updatedAt"`
}

// notifyError is the error body of the notification API (the seed does not
// show one): {"status": 401, "error": "invalid_token", "message": "…"}.
type notifyError struct {
	Status  int    `json:"status"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

func notifyFaultBody(status int) any {
	if status == http.StatusServiceUnavailable {
		return notifyError{Status: status, Error: "service_unavailable", Message: "service temporarily unavailable (injected fault)"}
	}
	return notifyError{Status: status, Error: "internal_error", Message: "internal error (injected fault)"}
}

// tokenClaims are the JWT claims the simulator issues.
type tokenClaims struct {
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
	jwt.RegisteredClaims
}

func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	code := http.StatusOK
	client := ""
	defer func() { s.observe(apiNotify, opToken, code, client, began) }()
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		code = http.StatusBadRequest
		writeJSON(w, code, map[string]string{"error": "invalid_request", "error_description": "form body could not be read"})
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "client_credentials" {
		code = http.StatusBadRequest
		writeJSON(w, code, map[string]string{"error": "unsupported_grant_type", "error_description": "only client_credentials"})
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c := s.clients[id]
	if c == nil || subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) != 1 {
		code = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", `Basic realm="sim"`)
		writeJSON(w, code, map[string]string{"error": "invalid_client", "error_description": "unknown client or bad secret"})
		return
	}
	client = id
	now := time.Now()
	// exp is whole seconds (RFC 7519 NumericDate, as the jwt library writes
	// it): rounded up, so that the token lives at least the expires_in the
	// answer promises, never a fraction of a second less.
	exp := now.Add(s.cfg.Notify.TokenLifetime)
	if t := exp.Truncate(time.Second); !t.Equal(exp) {
		exp = t.Add(time.Second)
	}
	claims := tokenClaims{
		ClientID: id,
		Scope:    strings.Join(c.Scopes, " "),
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: "msgload-sim", Subject: id, IssuedAt: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp), ID: uuid.NewString(),
		},
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(s.jwtKey)
	if err != nil {
		code = http.StatusInternalServerError
		writeJSON(w, code, map[string]string{"error": "server_error"})
		return
	}
	s.issued(id, claims.ID)
	s.met.tokens.WithLabelValues(s.met.client(id)).Inc()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok, "token_type": "Bearer",
		"expires_in": int64(cmp.Or(s.cfg.Notify.TokenExpiresIn, s.cfg.Notify.TokenLifetime) / time.Second), "scope": claims.Scope,
	})
}

// issued records id's newest token (tokenRevokeOnIssue revokes the others).
func (s *Server) issued(id, jti string) {
	s.tokMu.Lock()
	if s.latestTok == nil {
		s.latestTok = map[string]string{}
	}
	s.latestTok[id] = jti
	s.tokMu.Unlock()
}

// revoked reports whether a token is no longer its client's newest while
// notify.tokenRevokeOnIssue is on.
func (s *Server) revoked(c tokenClaims) bool {
	if !s.cfg.Notify.TokenRevokeOnIssue {
		return false
	}
	s.tokMu.Lock()
	defer s.tokMu.Unlock()
	return s.latestTok[c.ClientID] != c.ID
}

// bearer checks the token and scope; it answers 401/403 itself.
func (s *Server) bearer(w http.ResponseWriter, r *http.Request, scope string, f preFault) (client string, code int) {
	h := r.Header.Get("Authorization")
	raw, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || raw == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sim"`)
		writeJSON(w, http.StatusUnauthorized, notifyError{Status: 401, Error: "unauthorized", Message: "missing bearer token"})
		return "", http.StatusUnauthorized
	}
	var claims tokenClaims
	_, err := jwt.ParseWithClaims(raw, &claims, func(*jwt.Token) (any, error) { return s.jwtKey, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired(), jwt.WithTimeFunc(time.Now))
	if err != nil || s.clients[claims.ClientID] == nil || s.revoked(claims) {
		msg := "invalid token"
		switch {
		case errors.Is(err, jwt.ErrTokenExpired):
			msg = "token expired"
		case err == nil && s.clients[claims.ClientID] != nil:
			msg = "token revoked"
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="sim", error="invalid_token"`)
		writeJSON(w, http.StatusUnauthorized, notifyError{Status: 401, Error: "invalid_token", Message: msg})
		return "", http.StatusUnauthorized
	}
	// The limit counts every authenticated request of the client, scope failures included.
	if !s.rateLimit(w, claims.ClientID, true, f) {
		return claims.ClientID, http.StatusTooManyRequests
	}
	for _, sc := range strings.Fields(claims.Scope) {
		if sc == scope {
			return claims.ClientID, 0
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="sim", error="insufficient_scope", scope="`+scope+`"`)
	writeJSON(w, http.StatusForbidden, notifyError{Status: 403, Error: "insufficient_scope", Message: "token lacks " + scope})
	return claims.ClientID, http.StatusForbidden
}

// rateLimit applies the limiter to client; on refusal it answers 429. A
// request drawn to fail (f) uses quota only with rateLimit.countFailures.
func (s *Server) rateLimit(w http.ResponseWriter, client string, notify bool, f preFault) bool {
	now := time.Now()
	v := s.limiter.allow(client, now, f == noFault || s.cfg.RateLimit.CountFailures)
	s.truth.decision(client, now, v.ok)
	rl := s.cfg.RateLimit
	if rl.Headers && rl.Requests > 0 {
		w.Header().Set("RateLimit-Policy", fmt.Sprintf(`"default";q=%d;w=%d`, rl.Requests, ceilSeconds(rl.Window)))
		w.Header().Set("RateLimit", fmt.Sprintf(`"default";r=%d;t=%d`, max(v.remaining, 0), ceilSeconds(v.reset)))
	}
	if v.ok {
		return true
	}
	s.met.rateLimited.WithLabelValues(s.met.client(client)).Inc()
	if rl.RetryAfter {
		w.Header().Set("Retry-After", strconv.FormatInt(max(ceilSeconds(v.retryAfter), 1), 10))
	}
	msg := fmt.Sprintf("more than %d requests per %s", rl.Requests, rl.Window)
	if notify {
		writeJSON(w, http.StatusTooManyRequests, notifyError{Status: 429, Error: "too_many_requests", Message: msg})
	} else {
		writeJSON(w, http.StatusTooManyRequests, msgError(http.StatusTooManyRequests, "too_many_requests", msg))
	}
	return false
}

// admitNotify starts a notify call: the fault it draws, the bearer token and
// its scope, and a drawn 500 or 503, answered at once. A call refused has been
// answered (obs.code says how) and ok is false.
func (s *Server) admitNotify(w http.ResponseWriter, r *http.Request, obs *observed, scope string) (f preFault, ok bool) {
	f = s.drawFault()
	client, code := s.bearer(w, r, scope, f)
	obs.client = client
	if code != 0 {
		obs.code = code
		return f, false
	}
	if f == fault500 || f == fault503 {
		obs.code = http.StatusInternalServerError
		if f == fault503 {
			obs.code = http.StatusServiceUnavailable
		}
		writeJSON(w, obs.code, notifyFaultBody(obs.code))
		return f, false
	}
	return f, true
}

func (s *Server) handleNotification(w http.ResponseWriter, r *http.Request) {
	obs := s.begin(apiNotify, opNotifications)
	defer obs.done()
	f, ok := s.admitNotify(w, r, obs, ScopeNotification)
	if !ok {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	var req *notificationRequest
	if err != nil {
		err = &fieldError{Path: "body", Msg: "too large or unreadable"}
	} else {
		req, err = decodeNotification(body)
	}
	if err != nil {
		obs.code = http.StatusBadRequest
		writeJSON(w, obs.code, notifyError{Status: 400, Error: "bad_request", Message: err.Error()})
		return
	}
	resp, replay, status := s.createNotification(obs.client, req, body)
	if status != http.StatusOK {
		obs.code = status
		e := notifyError{Status: status, Error: "idempotency_key_reused", Message: "externalId was used with a different body"}
		if replay {
			e.Error, e.Message = "idempotency_key_in_use", "a request with this externalId is still being processed"
		}
		writeJSON(w, obs.code, e)
		return
	}
	if replay {
		s.met.replays.WithLabelValues(s.met.client(obs.client)).Inc()
	}
	if s.afterFault(w, f, notifyFaultBody) {
		obs.code = http.StatusInternalServerError
		if f == faultAfterReset {
			obs.code = 0
		}
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// decodeNotification reads and validates a notification request.
func decodeNotification(body []byte) (*notificationRequest, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var req notificationRequest
	if err := dec.Decode(&req); err != nil {
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &fieldError{Msg: "body: trailing data after the JSON object"}
	}
	// the decoded strings had invalid UTF-8 replaced (two externalIds
	// differing only there would share a notificationId): check the raw body
	if err := checkUTF8(body); err != nil {
		return nil, err
	}
	if req.Recipient == nil {
		return nil, &fieldError{"recipient", "required"}
	}
	if req.Recipient.Value == nil || *req.Recipient.Value == "" {
		return nil, &fieldError{"recipient.value", "required"}
	}
	if !rundir.IsMSISDN(*req.Recipient.Value) {
		return nil, &fieldError{"recipient.value", "not an E.164 number (+ and 7 to 15 digits)"}
	}
	if req.NotificationText == nil || *req.NotificationText == "" {
		return nil, &fieldError{"notificationText", "required"}
	}
	if n := utf8.RuneCountInString(*req.NotificationText); n > maxNotificationText {
		return nil, &fieldError{"notificationText", fmt.Sprintf("at most %d characters", maxNotificationText)}
	}
	if req.ExternalID != nil && (*req.ExternalID == "" || utf8.RuneCountInString(*req.ExternalID) > maxExternalID) {
		return nil, &fieldError{"externalId", fmt.Sprintf("1 to %d characters when present", maxExternalID)}
	}
	return &req, nil
}

// createNotification is idempotent on (client, externalId): the first request
// creates, later ones return the same notificationId and send nothing — or,
// as configured, 422/409 for another body and 409 while the first is in
// flight (it holds the key IdempotencyProcessing before its answer).
func (s *Server) createNotification(client string, req *notificationRequest, body []byte) (notificationResponse, bool, int) {
	now := time.Now()
	ext := ""
	if req.ExternalID != nil {
		ext = *req.ExternalID
	}
	// Hash the meaning, not the bytes: recipient and text.
	h := sha256.Sum256([]byte(*req.Recipient.Value + "\x00" + *req.NotificationText))
	s.ntMu.Lock()
	if ext != "" {
		key := idemKey{client, ext}
		if e := s.idem[key]; e != nil && now.Sub(e.created) < s.cfg.Notify.IdempotencyRetention {
			s.ntMu.Unlock()
			return s.replay(e, ext, h, now)
		}
	}
	n := &notification{id: uuid.New(), client: client, externalID: ext, accepted: now.UnixNano()}
	if ext != "" {
		key := idemKey{client, ext}
		s.idem[key] = &idemEntry{id: n.id, hash: h, created: now, ready: now.Add(s.cfg.Notify.IdempotencyProcessing)}
		s.eng.at(now.Add(s.cfg.Notify.IdempotencyRetention), &forget{key: key})
	}
	s.ntMu.Unlock()
	n.truth = s.truth.message(rundir.TruthMessage{
		API: apiNotify, ID: uuid.UUID(n.id).String(), ExternalID: ext, Client: client,
		AcceptedAt: now.UTC(), Sends: 1, Steps: []rundir.TruthStep{},
	})
	s.met.accepted.WithLabelValues(apiNotify, "none").Inc()
	s.met.pending.WithLabelValues(apiNotify).Inc()
	s.pendingNt.Add(1)
	s.owed.Add(1)
	s.eng.at(now.Add(s.draw(s.cfg.Notify.Delay)), n)
	if ext != "" {
		time.Sleep(s.cfg.Notify.IdempotencyProcessing) // the key is in flight meanwhile
	}
	return notificationResponse{NotificationID: uuid.UUID(n.id).String(), ExternalID: ext, Status: rundir.NotifyAccepted, CreatedAt: utc(now)}, false, http.StatusOK
}

// replay answers a request whose externalId is known (e): another body gets
// IdempotencyMismatch's answer; while the first is in flight a duplicate gets
// 409, or waits for it (IdempotencyInFlight); else the first result.
func (s *Server) replay(e *idemEntry, ext string, h [32]byte, now time.Time) (notificationResponse, bool, int) {
	n := s.cfg.Notify
	if e.hash != h {
		switch n.IdempotencyMismatch {
		case "422":
			return notificationResponse{}, false, http.StatusUnprocessableEntity
		case "409":
			return notificationResponse{}, false, http.StatusConflict
		}
	}
	if now.Before(e.ready) {
		if n.IdempotencyInFlight == "409" {
			return notificationResponse{}, true, http.StatusConflict // true: a duplicate, not another body
		}
		time.Sleep(e.ready.Sub(now))
	}
	return notificationResponse{NotificationID: uuid.UUID(e.id).String(), ExternalID: ext, Status: rundir.NotifyAccepted, CreatedAt: utc(e.created)}, true, http.StatusOK
}

// runNotification draws the terminal status of n and posts the webhook.
func (s *Server) runNotification(n *notification, now time.Time) {
	out := s.pick(s.cfg.Notify.Outcomes)
	s.met.statusChanges.WithLabelValues(apiNotify, "none", out.State).Inc()
	s.truth.hold(n.truth) // the record waits for the webhook
	defer s.truth.release(n.truth)
	s.truth.step(n.truth, rundir.TruthStep{State: out.State, Code: out.Code, Delay: rundir.Duration(now.Sub(time.Unix(0, n.accepted)))}, true)
	s.pendingNt.Add(-1)
	s.met.pending.WithLabelValues(apiNotify).Dec()
	s.ntMu.Lock()
	url := s.webhooks[n.client]
	s.ntMu.Unlock()
	if url == "" {
		s.owed.Add(-1) // no webhook: nothing more is owed
		return
	}
	id := uuid.UUID(n.id).String()
	body, _ := json.Marshal(notificationCallbackEvent{
		EventID: uuid.NewString(), NotificationID: id, ExternalID: n.externalID,
		Status: out.State, ErrorCode: out.Code, UpdatedAt: utc(now),
	})
	j := &callbackJob{kind: kindWebhook, url: url, body: body, id: id, state: out.State, due: now.Add(-s.late).UnixNano()}
	j.holdTruth(s, n.truth)
	j.oweFinal() // the notification's unit of owed passes to its webhook
	s.callback(j, now)
}

// webhookRequest is the body of POST /api/v1/webhooks (the seed does not show one).
type webhookRequest struct {
	URL *string `json:"url"`
}

type webhookResponse struct {
	URL       string `json:"url"`
	UpdatedAt string `json:"updatedAt,omitempty"`
}

func (s *Server) handleWebhook(w http.ResponseWriter, r *http.Request) {
	obs := s.begin(apiNotify, opWebhooks)
	defer obs.done()
	f, ok := s.admitNotify(w, r, obs, ScopeWebhook)
	if !ok {
		return
	}
	if r.Method == http.MethodGet {
		s.ntMu.Lock()
		url := s.webhooks[obs.client]
		s.ntMu.Unlock()
		if url == "" {
			obs.code = http.StatusNotFound
			writeJSON(w, obs.code, notifyError{Status: 404, Error: "not_found", Message: "no webhook registered"})
			return
		}
		writeJSON(w, obs.code, webhookResponse{URL: url})
		return
	}
	var req webhookRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
	if err == nil {
		err = json.NewDecoder(bytes.NewReader(body)).Decode(&req)
	}
	if err != nil {
		err = jsonError(err)
	} else if uerr := checkUTF8(body); uerr != nil {
		err = uerr
	} else if req.URL == nil || *req.URL == "" {
		err = &fieldError{"url", "required"}
	} else if !validURL(*req.URL) || len(*req.URL) > maxWebhookURL {
		err = &fieldError{"url", fmt.Sprintf("an absolute http or https URL of at most %d characters", maxWebhookURL)}
	}
	if err != nil {
		obs.code = http.StatusBadRequest
		writeJSON(w, obs.code, notifyError{Status: 400, Error: "bad_request", Message: err.Error()})
		return
	}
	s.ntMu.Lock()
	s.webhooks[obs.client] = *req.URL
	s.ntMu.Unlock()
	if s.afterFault(w, f, notifyFaultBody) {
		obs.code = http.StatusInternalServerError
		if f == faultAfterReset {
			obs.code = 0
		}
		return
	}
	writeJSON(w, http.StatusOK, webhookResponse{URL: *req.URL, UpdatedAt: utc(time.Now())})
}
