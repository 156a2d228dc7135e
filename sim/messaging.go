package sim

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/msgload/msgload/rundir"
)

func chanIndex(ch string) int {
	for i, c := range allChannels {
		if c == ch {
			return i
		}
	}
	return 0
}

// message is one accepted messaging send in the delivery engine. It is kept
// small: a million of them must fit in well under 500 MB.
type message struct {
	id        [16]byte
	acct      *account
	items     []item
	callback  string
	trackData string // echoed unchanged (raw JSON)
	msisdn    uint64 // recipient's E.164 digits (validated: at most 15)
	sender    string
	accepted  int64
	outAt     int64     // when the drawn outcome of the current item is due
	deadline  int64     // failover deadline of the current item, 0 when none
	seenAt    int64     // when SEEN is due, 0 when not drawn
	truth     *truthMsg // nil when the truth is full
	idx       uint8     // current item
	numbered  bool      // id carries a number of s.settled (txNumber)
	phase     uint8
	outState  uint8
	outCode   uint16
	// latest status, for check-status
	lastState uint8
	lastChan  uint8
	lastCode  uint16
	lastAt    int64
}

type item struct {
	ttl     uint32 // seconds; 0 with cond==0 means no failover
	channel uint8
	cond    uint8 // 0 none, stDelivered or stSeen
	hasFO   bool
}

// Compact state codes.
const (
	stNone uint8 = iota
	stAccepted
	stDelivered
	stNotDelivered
	stSeen
	stExpired
	stFailed
)

var stateNames = [...]string{"", rundir.StateAccepted, rundir.StateDelivered, rundir.StateNotDelivered, rundir.StateSeen, rundir.StateExpired, rundir.StateFailed}

func stateCode(s string) uint8 {
	for i, n := range stateNames {
		if n == s && i > 0 {
			return uint8(i)
		}
	}
	return stFailed
}

// Phases of a message in the engine.
const (
	phStart uint8 = iota
	phOutcome
	phSeen
	phExpire
	phForget // retention over: check-status forgets it
)

// errorBody is the seed's 401/403 body (also used for injected 500/503).
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	ID      string   `json:"id"`
	Status  int      `json:"status"`
	Message string   `json:"message"`
	Code    string   `json:"code"`
	Errors  []string `json:"errors"`
}

func msgError(status int, code, text string) errorBody {
	return errorBody{Error: errorDetail{ID: uuid.NewString(), Status: status, Message: text, Code: code, Errors: []string{}}}
}

func msgFaultBody(status int) any {
	if status == http.StatusServiceUnavailable {
		return msgError(status, "service_unavailable", "service temporarily unavailable (injected fault)")
	}
	return msgError(status, "internal_error", "internal error (injected fault)")
}

// sendResponse is the seed's send response.
type sendResponse struct {
	TxID      string          `json:"txId"`
	UpdatedAt string          `json:"updatedAt"`
	State     string          `json:"state"`
	TrackData json.RawMessage `json:"trackData,omitempty"`
	Error     *codeMessage    `json:"error,omitempty"`
}

type codeMessage struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// statusRecord is the seed's status record (callback body and poll answer).
type statusRecord struct {
	TxID      string          `json:"txId"`
	UpdatedAt string          `json:"updatedAt"`
	State     string          `json:"state"`
	Channel   string          `json:"channel,omitempty"`
	TrackData json.RawMessage `json:"trackData,omitempty"`
	Error     *codeMessage    `json:"error,omitempty"`
}

// incomingMessage is the seed's incoming message.
type incomingMessage struct {
	TxID         string    `json:"txId"`
	Channel      string    `json:"channel"`
	Recipient    recipient `json:"recipient"`
	Sender       string    `json:"sender"`
	Text         string    `json:"text,omitempty"`
	AcceptedAt   string    `json:"acceptedAt,omitempty"`
	OutgoingTxID string    `json:"outgoingTxId,omitempty"`
	ReplyOn      *replyOn  `json:"replyOn,omitempty"`
}

type recipient struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

type replyOn struct {
	TxID string `json:"txId"`
	Type string `json:"type"`
}

// authenticate checks Basic credentials from the header or the query
// parameter; it answers 401/403 itself and returns nil then.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*account, int) {
	login, pass, ok := r.BasicAuth()
	if !ok {
		if q := r.URL.Query().Get(s.cfg.Messaging.AuthQueryParam); q != "" {
			login, pass, ok = parseBasic(q)
		}
	}
	acc := s.accounts[login]
	if !ok || acc == nil || subtle.ConstantTimeCompare([]byte(pass), []byte(acc.Password)) != 1 {
		writeJSON(w, http.StatusUnauthorized, msgError(http.StatusUnauthorized, "unauthorized", "credentials rejected"))
		return nil, http.StatusUnauthorized
	}
	if acc.NoAPIRight {
		writeJSON(w, http.StatusForbidden, msgError(http.StatusForbidden, "forbidden", "no right to use the HTTP API"))
		return nil, http.StatusForbidden
	}
	if len(acc.allow) > 0 {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		ip := net.ParseIP(host)
		allowed := false
		for _, n := range acc.allow {
			allowed = allowed || (ip != nil && n.Contains(ip))
		}
		if !allowed {
			writeJSON(w, http.StatusForbidden, msgError(http.StatusForbidden, "forbidden", "source address forbidden"))
			return nil, http.StatusForbidden
		}
	}
	return acc, 0
}

// parseBasic reads "Basic <base64>" or the bare base64 value.
func parseBasic(v string) (login, pass string, ok bool) {
	v = strings.TrimSpace(v)
	if len(v) > 6 && strings.EqualFold(v[:6], "basic ") {
		v = strings.TrimSpace(v[6:])
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return "", "", false
	}
	login, pass, ok = strings.Cut(string(b), ":")
	if !ok {
		return "", "", false
	}
	return login, pass, true
}

// admitMessaging starts a messaging call: the fault it draws, Basic auth, and
// the rate limit. A call they refuse has been answered (obs.code says how) and
// ok is false.
func (s *Server) admitMessaging(w http.ResponseWriter, r *http.Request, obs *observed) (acc *account, f preFault, ok bool) {
	f = s.drawFault()
	acc, code := s.authenticate(w, r)
	if acc == nil {
		obs.code = code
		return nil, f, false
	}
	obs.client = acc.Login
	if s.cfg.RateLimit.Messaging && !s.rateLimit(w, obs.client, false, f) {
		obs.code = http.StatusTooManyRequests
		return nil, f, false
	}
	return acc, f, true
}

func (s *Server) handleSend(w http.ResponseWriter, r *http.Request) {
	obs := s.begin(apiMessaging, opSend)
	defer obs.done()
	acc, f, ok := s.admitMessaging(w, r, obs)
	if !ok {
		return
	}
	switch f {
	case fault500, fault503:
		obs.code = http.StatusInternalServerError
		if f == fault503 {
			obs.code = http.StatusServiceUnavailable
		}
		writeJSON(w, obs.code, msgFaultBody(obs.code))
		return
	}
	req, err := DecodeSend(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err == nil {
		s.shortenLinks(req)
		err = ValidateSend(req, func(ch string) bool { return acc.channels&(1<<chanIndex(ch)) != 0 })
	}
	if err != nil {
		obs.code = http.StatusBadRequest
		var fe *fieldError
		msg := err.Error()
		if !errors.As(err, &fe) {
			msg = "body: " + msg
		}
		var td json.RawMessage
		if req != nil {
			td = req.TrackData
		}
		writeJSON(w, obs.code, sendResponse{
			TxID: uuid.NewString(), UpdatedAt: utc(time.Now()), State: rundir.StateFailed, TrackData: td,
			Error: &codeMessage{Code: 400, Message: msg},
		})
		return
	}
	m, dup := s.acceptOnce(acc, req)
	if dup != nil {
		s.answerDuplicate(w, obs, req, *dup)
		return
	}
	if f == faultAfter500 || f == faultAfterReset {
		obs.code = http.StatusInternalServerError
		if f == faultAfterReset {
			obs.code = 0
		}
		s.afterFault(w, f, msgFaultBody)
		return
	}
	writeJSON(w, http.StatusOK, sendResponse{
		TxID: uuid.UUID(m.id).String(), UpdatedAt: utc(time.Unix(0, m.accepted)), State: rundir.StateAccepted,
		TrackData: req.TrackData, Error: &codeMessage{Code: 0, Message: "accepted"},
	})
}

// tagKey is "<run>.<seq>" of the msgload tag in trackData ("<run>.<part>.<seq>"
// for a part of a run with parts: the parts of a run number their messages
// from 1 each), "" when none.
func tagKey(td json.RawMessage) string {
	if len(td) == 0 {
		return ""
	}
	var t struct {
		Run  any `json:"msgload_run"`
		Part any `json:"msgload_part"`
		Seq  any `json:"msgload_seq"`
		Sent any `json:"msgload_sent"`
	}
	if json.Unmarshal(td, &t) != nil || t.Run == nil {
		return ""
	}
	m := map[string]any{rundir.TrackRun: t.Run, rundir.TrackSeq: t.Seq, rundir.TrackSent: t.Sent}
	if t.Part != nil {
		m[rundir.TrackPart] = t.Part
	}
	tag, err := rundir.ParseTrackData(m)
	if err != nil {
		return ""
	}
	if tag.Part != "" {
		return tag.Run + "." + tag.Part + "." + itoa(tag.Seq)
	}
	return tag.Run + "." + itoa(tag.Seq)
}

// msisdnDigits packs a validated E.164 number into an integer.
func msisdnDigits(v string) uint64 {
	n, _ := strconv.ParseUint(strings.TrimPrefix(v, "+"), 10, 64)
	return n
}

// raw is s as JSON, nil when empty.
func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// intern shares the storage of callback URLs: most sends name the same few.
func (s *Server) intern(u string) string {
	s.internMu.Lock()
	defer s.internMu.Unlock()
	if v, ok := s.interned[u]; ok {
		return v
	}
	if len(s.interned) < 1024 {
		s.interned[u] = u
	}
	return u
}

var linkRE = regexp.MustCompile(`https?://[^\s]+`)

// shorten replaces links longer than the threshold by short links.
func (s *Server) shorten(text string) string {
	return linkRE.ReplaceAllStringFunc(text, func(link string) string {
		if len(link) <= rundir.ShortenThreshold {
			return link
		}
		return s.cfg.Messaging.ShortLinkDomain + "/" + uuid.NewString()[:8]
	})
}

// shortenLinks applies urlOptions.shortenUrl: the texts' long links are
// replaced before the text size is checked, since shortening "shortens the
// message" (the seed), so a text over the limit only by its links is taken.
func (s *Server) shortenLinks(req *SendRequest) {
	if req.URLOptions == nil || req.URLOptions.ShortenURL == nil || !*req.URLOptions.ShortenURL {
		return
	}
	for i := range req.Scenario {
		if t := req.Scenario[i].Text; t != nil {
			short := s.shorten(*t)
			req.Scenario[i].Text = &short
		}
	}
}

// accept registers a valid send with the engine.
func (s *Server) accept(acc *account, req *SendRequest) *message {
	now := time.Now()
	m := &message{
		id:        uuid.New(),
		acct:      acc,
		accepted:  now.UnixNano(),
		msisdn:    msisdnDigits(*req.Scenario[0].Recipient.Value),
		sender:    s.intern(*req.Scenario[0].Sender),
		lastState: stAccepted,
		lastAt:    now.UnixNano(),
	}
	if s.settled != nil {
		m.numbered = s.settled.number(&m.id)
	}
	if td := req.TrackData; len(td) > 0 && string(td) != "null" {
		m.trackData = string(td)
	}
	if req.Callback != nil && *req.Callback != "" {
		m.callback = s.intern(*req.Callback)
	} else {
		m.callback = acc.CallbackURL
	}
	m.items = make([]item, len(req.Scenario))
	for i, it := range req.Scenario {
		m.items[i].channel = uint8(chanIndex(*it.Channel))
		if fo := it.Failover; fo != nil {
			m.items[i].hasFO = true
			if fo.TTL != nil {
				m.items[i].ttl = uint32(*fo.TTL)
			}
			m.items[i].cond = stDelivered
			if fo.ConditionStatus != nil {
				m.items[i].cond = stateCode(*fo.ConditionStatus)
			}
		}
	}
	start := now
	if req.Schedule != nil {
		sc, _ := parseSchedule(req.Schedule)
		start = sc.sendTime(now, *req.Scenario[0].Recipient.Value)
	}
	if !s.truth.full() {
		m.truth = s.truth.message(rundir.TruthMessage{
			API: apiMessaging, ID: uuid.UUID(m.id).String(), ExternalID: tagKey(req.TrackData), Client: acc.Login,
			AcceptedAt: now.UTC(), Sends: 1, Steps: []rundir.TruthStep{},
		})
	} else {
		s.truth.message(rundir.TruthMessage{}) // marks the truth truncated
	}
	s.met.accepted.WithLabelValues(apiMessaging, *req.Scenario[0].Channel).Inc()
	s.met.pending.WithLabelValues(apiMessaging).Inc()
	s.pendingMsg.Add(1)
	s.owed.Add(1)
	s.msgMu.Lock()
	s.msgs[m.id] = m
	s.msgMu.Unlock()
	m.phase = phStart
	s.eng.at(start, m)
	return m
}

func itoa(n int64) string { return strconvItoa(n) }

// runMessage advances m by one due event. It runs on the scheduler goroutine,
// the only writer of a message after acceptance (check-status reads under msgMu).
func (s *Server) runMessage(m *message, now time.Time) {
	// The lag of this step against the drawn delays: its event's, on top of
	// the earlier steps' it was scheduled from. A step run at once from this
	// one (nextItem) is no later than it.
	base := m.truth.lagBase()
	s.lag = base + s.late
	s.late = 0
	m.truth.setLagBase(s.lag)
	it := m.items[m.idx]
	ns := now.UnixNano()
	prof := &s.profiles[it.channel]
	switch m.phase {
	case phStart:
		out := s.pick(prof.Outcomes)
		m.outState, m.outCode = stateCode(out.State), uint16(out.Code)
		m.outAt = ns + int64(s.draw(prof.Delay))
		m.seenAt = 0
		m.deadline = 0
		due := m.outAt
		if it.hasFO {
			m.deadline = ns + int64(it.ttl)*int64(time.Second)
			if m.deadline < due {
				due = m.deadline
			}
		}
		m.phase = phOutcome
		s.eng.at(time.Unix(0, due), m)
	case phOutcome:
		if it.hasFO && m.outAt > m.deadline {
			s.expire(m, now)
			return
		}
		st := m.outState
		last := int(m.idx) == len(m.items)-1
		if st != stDelivered {
			// A definite failure ends the wait: go on with the next item at once.
			if it.hasFO && !last {
				s.status(m, now, st, it.channel, m.outCode, false)
				s.nextItem(m, now)
				return
			}
			s.status(m, now, st, it.channel, m.outCode, true)
			return
		}
		if prof.SeenShare > 0 && s.chance(prof.SeenShare) {
			m.seenAt = ns + int64(s.draw(prof.SeenDelay))
		}
		s.maybeIncoming(m, now, it.channel)
		switch {
		case it.hasFO && it.cond == stSeen && (m.seenAt == 0 || m.seenAt > m.deadline):
			s.status(m, now, stDelivered, it.channel, 0, false)
			m.phase = phExpire
			m.truth.setLagBase(base) // the deadline was set from the item's start, not from this step
			s.eng.at(time.Unix(0, m.deadline), m)
		case m.seenAt != 0:
			s.status(m, now, stDelivered, it.channel, 0, false)
			m.phase = phSeen
			s.eng.at(time.Unix(0, m.seenAt), m)
		default:
			s.status(m, now, stDelivered, it.channel, 0, true)
		}
	case phSeen:
		s.status(m, now, stSeen, it.channel, 0, true)
	case phExpire:
		s.expire(m, now)
	case phForget:
		s.msgMu.Lock()
		delete(s.msgs, m.id)
		s.msgMu.Unlock()
	}
}

// expire reports EXPIRED for the current item and goes on with the next one.
func (s *Server) expire(m *message, now time.Time) {
	last := int(m.idx) == len(m.items)-1
	s.status(m, now, stExpired, m.items[m.idx].channel, uint16(s.cfg.Messaging.ExpiredCode), last)
	if !last {
		s.nextItem(m, now)
	}
}

func (s *Server) nextItem(m *message, now time.Time) {
	m.idx++
	m.phase = phStart
	s.runMessage(m, now)
}

// status records a status change of m, posts its callback, and ends m when final.
func (s *Server) status(m *message, now time.Time, st, ch uint8, code uint16, final bool) {
	due := now.Add(-s.lag).UnixNano() // by the delays drawn: the machine's lag taken out
	s.msgMu.Lock()
	// The change is visible to check-status from here on: the truth's time of
	// it is now, not when its event fell due (the scheduler may have been
	// held up between), so that a poll sent after it surely sees it.
	if t := time.Now(); t.After(now) {
		now = t
	}
	m.lastState, m.lastChan, m.lastCode, m.lastAt = st, ch, code, now.UnixNano()
	s.msgMu.Unlock()
	chName := allChannels[ch]
	s.met.statusChanges.WithLabelValues(apiMessaging, chName, stateNames[st]).Inc()
	s.truth.hold(m.truth) // the record waits for this status's callback
	defer s.truth.release(m.truth)
	s.truth.step(m.truth, rundir.TruthStep{
		Channel: chName, State: stateNames[st], Code: int(code),
		Delay: rundir.Duration(now.Sub(time.Unix(0, m.accepted))),
	}, final)
	if m.callback != "" {
		body, _ := json.Marshal(s.record(m))
		j := &callbackJob{kind: kindCallback, url: m.callback, body: body, id: uuid.UUID(m.id).String(), state: stateNames[st], channel: chName, due: due}
		j.holdTruth(s, m.truth)
		if final {
			j.oweFinal() // the message's unit of owed passes to its final callback
		}
		s.callback(j, now)
	} else if final {
		s.owed.Add(-1) // no callback address: nothing more is owed
	}
	if final {
		s.pendingMsg.Add(-1)
		s.met.pending.WithLabelValues(apiMessaging).Dec()
		if !m.numbered || !s.storeSettled(m) {
			m.phase = phForget
			s.eng.at(now.Add(s.cfg.Messaging.StatusRetention), m)
		}
	}
}

// record is the latest status record of m; call with msgMu held or on the
// scheduler goroutine.
func (s *Server) record(m *message) any {
	id := uuid.UUID(m.id).String()
	at := utc(time.Unix(0, m.lastAt))
	if m.lastState == stAccepted {
		return sendResponse{TxID: id, UpdatedAt: at, State: rundir.StateAccepted, TrackData: raw(m.trackData), Error: &codeMessage{Code: 0, Message: "accepted"}}
	}
	r := statusRecord{TxID: id, UpdatedAt: at, State: stateNames[m.lastState], TrackData: raw(m.trackData),
		Error: &codeMessage{Code: int(m.lastCode), Message: deliveryText(int(m.lastCode))}}
	// A channel not in the status record's channel enum (vkok) is left out.
	if ch := allChannels[m.lastChan]; rundir.IsStatusChannel(ch) {
		r.Channel = ch
	}
	return r
}

// maybeIncoming draws a subscriber reply to a delivered message.
func (s *Server) maybeIncoming(m *message, now time.Time, ch uint8) {
	chName := allChannels[ch]
	if m.acct.PartnerURL == "" || !rundir.IsIncomingChannel(chName) {
		return
	}
	if !s.chance(s.cfg.Messaging.IncomingShare) {
		return
	}
	sender := m.sender
	if len(sender) > rundir.MaxIncomingSender {
		sender = sender[:rundir.MaxIncomingSender]
	}
	out := uuid.UUID(m.id).String()
	in := incomingMessage{
		TxID: uuid.NewString(), Channel: chName, Recipient: recipient{Type: rundir.RecipientMSISDN, Value: "+" + strconv.FormatUint(m.msisdn, 10)},
		Sender: sender, Text: "reply to " + out, OutgoingTxID: out,
	}
	if s.chance(s.cfg.Messaging.ReplyOnShare) {
		in.ReplyOn = &replyOn{TxID: out, Type: "OUTGOING"}
	}
	at := now.Add(s.draw(s.cfg.Messaging.IncomingDelay))
	in.AcceptedAt = utc(at)
	body, _ := json.Marshal(in)
	url := strings.TrimRight(m.acct.PartnerURL, "/") + rundir.SinkIncoming
	job := &callbackJob{kind: kindIncoming, url: url, body: body, id: out}
	job.holdTruth(s, m.truth)
	s.eng.at(at, job)
}

func (s *Server) handleCheckStatus(w http.ResponseWriter, r *http.Request) {
	obs := s.begin(apiMessaging, opCheckStatus)
	defer obs.done()
	acc, f, ok := s.admitMessaging(w, r, obs)
	if !ok {
		return
	}
	if f == fault500 || f == fault503 || f == faultAfter500 {
		obs.code = http.StatusInternalServerError
		if f == fault503 {
			obs.code = http.StatusServiceUnavailable
		}
		writeJSON(w, obs.code, msgFaultBody(obs.code))
		return
	}
	id, err := uuid.Parse(r.PathValue("txId"))
	var rec any
	if err == nil {
		rec = s.statusOf(id, acc)
	}
	if rec == nil {
		obs.code = http.StatusNotFound
		writeJSON(w, obs.code, msgError(obs.code, "not_found", "unknown or expired txId"))
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

var deliveryTexts = map[int]string{
	0: "Successful delivery", 1: "Unknown reason for non-delivery", 4: "Subscriber number does not exist",
	6: "Subscriber unreachable", 8: "Number not served by the operator", 11: "SMS service not provided",
	12: "Error in the subscriber's device", 13: "Subscriber forbids receiving messages",
	245: "Delivery status wait time expired", 252: "Blocked by the spam filter: recipient",
	253: "Blocked by the spam filter: text", 254: "Blocked by the spam filter: sender name",
	255: "Internal operator error", 300: "Delivery status wait time expired",
	400: "Error in the send request's parameters", 401: "Error in access credentials", 402: "Message limit exceeded",
	403: "HTTP API access forbidden", 406: "Invalid recipient address format", 408: "Maximum sending speed exceeded",
	409: "Duplicate message forbidden", 414: "Maximum text length exceeded", 423: "Sending forbidden because of fraud",
	500: "Subscriber blocked the sender name", 501: "Subscriber has no application for the message",
}

func deliveryText(code int) string {
	if t, ok := deliveryTexts[code]; ok {
		return t
	}
	return "Unknown reason for non-delivery"
}
