package sim

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/msgload/msgload/rundir"
)

// dedupKey is a messaging send's account and trackData: a send repeating
// both is a duplicate when messaging.dedup is set.
type dedupKey struct{ login, track string }

// maxDedup bounds the sends remembered for messaging.dedup.
const maxDedup = 1 << 20

// acceptOnce accepts req as a new message, or, with messaging.dedup, finds
// the earlier message whose trackData it repeats (dup: its id; m nil). The
// lookup and the acceptance are one step, so that copies sent at once make
// one message.
func (s *Server) acceptOnce(acc *account, req *SendRequest) (m *message, dup *[16]byte) {
	track := string(req.TrackData)
	if s.cfg.Messaging.Dedup == "" || track == "" || track == "null" {
		return s.accept(acc, req), nil
	}
	k := dedupKey{acc.Login, track}
	s.dupMu.Lock()
	defer s.dupMu.Unlock()
	if id, ok := s.dups[k]; ok {
		return nil, &id
	}
	m = s.accept(acc, req)
	if s.dups == nil {
		s.dups = map[dedupKey][16]byte{}
	}
	if len(s.dups) < maxDedup {
		s.dups[k] = m.id
	}
	return m, nil
}

// answerDuplicate answers a duplicate send as messaging.dedup says: the
// first's txId (accepted, nothing sent again), or 409 with the seed's
// "sending a duplicate message is forbidden" and no txId.
func (s *Server) answerDuplicate(w http.ResponseWriter, obs *observed, req *SendRequest, first [16]byte) {
	if s.cfg.Messaging.Dedup == DedupFirst {
		obs.code = http.StatusOK
		writeJSON(w, obs.code, sendResponse{TxID: uuid.UUID(first).String(), UpdatedAt: utc(time.Now()), State: rundir.StateAccepted,
			TrackData: req.TrackData, Error: &codeMessage{Code: 0, Message: "accepted"}})
		return
	}
	obs.code = http.StatusConflict
	writeJSON(w, obs.code, sendResponse{UpdatedAt: utc(time.Now()), State: rundir.StateFailed, TrackData: req.TrackData,
		Error: &codeMessage{Code: 409, Message: deliveryText(409)}})
}
