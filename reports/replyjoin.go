package reports

import (
	"cmp"
	"iter"
)

// A run with incoming replies analysed in passes (stream.go) joins each
// reply to its message by the id the service answered (the reply's
// outgoing_tx_id) without a map of the ids (needKeys, one entry a replied
// message): every id answered (its hash, the order of the attempt that
// carried it, its message) is spilled as the attempts are read, every reply
// (the hash of the id it quotes, its arrival) as the events are; both are
// sorted by hash and merge-joined at the end (resolveReplies), each reply
// taking the message of the last attempt answered with its id, as one pass
// does. The replies joined go to the spill by sequence that joinReplies
// merges with the messages as they landed.

// idRec is an id the service answered (by hash) with a number: the order of
// the attempt that carried it and its sequence, or a reply's arrival.
type idRec struct {
	h    uint64
	x, y int64
}

// newIDSpill spills idRecs by hash, then x.
func newIDSpill() *sortedSpill[idRec] {
	return &sortedSpill[idRec]{chunk: max(spillChunk/4, 1), size: 24,
		cmp: func(p, q idRec) int { return cmp.Or(cmp.Compare(p.h, q.h), cmp.Compare(p.x, q.x)) },
		put: func(b []byte, v idRec) { putInts(b, int64(v.h), v.x, v.y) },
		get: func(b []byte) idRec { x := getInts(b, 3); return idRec{h: uint64(x[0]), x: x[1], y: x[2]} }}
}

// answeredID remembers that the service answered message seq with id k, for
// the events that name their message by it: spilled in a run with replies
// analysed in passes, else kept where one was asked for (scanEventKeys).
func (a *analyzer) answeredID(k string, seq int64) {
	if st := a.st; st != nil {
		if st.census == nil || !st.census.replies {
			return
		}
		if st.answered == nil {
			st.answered = newIDSpill()
		}
		st.order++
		st.spill(st.answered, idRec{h: hashID(k), x: st.order, y: seq})
		return
	}
	if _, ok := a.needKeys[k]; ok {
		a.needKeys[k] = seq
	}
}

// spillReply keeps a reply quoting id k, arrived at at (unix ns), for
// resolveReplies.
func (st *streamRun) spillReply(k string, at int64) {
	if st.quoted == nil {
		st.quoted = newIDSpill()
	}
	st.spill(st.quoted, idRec{h: hashID(k), x: at})
}

// spill adds v to s, its first error kept in st.err.
func (st *streamRun) spill(s *sortedSpill[idRec], v idRec) {
	if err := s.add(v); err != nil && st.err == nil {
		st.err = err
	}
}

// resolveReplies merge-joins the replies to the ids answered: a reply whose
// id the last attempt answered with it carried a sequence (> 0) goes to the
// replies by sequence (reply); any other is no reply of the run's.
func (a *analyzer) resolveReplies() {
	st := a.st
	if st.quoted == nil || st.answered == nil {
		return
	}
	ids, stop := iter.Pull(st.answered.sorted())
	defer stop()
	id, ok := ids()
	var last idRec // the last attempt answered with the id at hand
	for r := range st.quoted.sorted() {
		for ok && id.h <= r.h {
			last = id
			id, ok = ids()
		}
		if last.h == r.h && last.y > 0 {
			a.reply(last.y, r.x)
		}
	}
	for _, err := range []error{st.quoted.err, st.answered.err} {
		if err != nil && st.err == nil {
			st.err = err
		}
	}
}
