package sim

import (
	"encoding/binary"
	"os"
	"sync/atomic"
	"time"

	"github.com/msgload/msgload/internal/tempfile"
)

// settledStore keeps what check-status answers for a message whose final
// state is reached, for the status retention (two days by the seed), in an
// unlinked temporary file instead of memory: a soak at 1,000/s settles 3.6 M
// messages an hour, each of which must still be answered by its txId.
//
// A message's txId carries its number (txNumber): the store reads the
// message's fixed-size slot at that number, so nothing is looked up by
// string and no map entry is kept per message. The slot holds the whole id,
// so an id that names a number but is not that message's is not found. The
// trackData echoed in the record goes to a second file, the slot says where.
// Memory per settled message: none, once the writer has written it.
type settledStore struct {
	slots *os.File // slotSize bytes at slotSize·number
	data  *os.File // the trackData of every slot, one after the other

	end   int64 // data's length; the writer's alone
	next  atomic.Uint64
	queue chan settledItem // to the writer (Server.writeSettled)
	done  chan struct{}    // closed when the writer has stopped
}

// slot layout: id [16], lastAt int64, account uint16, state, channel uint8,
// code uint16, trackData length uint32 and offset int64; 48 bytes.
const (
	slotSize  = 48
	maxNumber = 1<<48 - 1 // the number takes the txId's last 6 bytes
)

// newSettledStore opens the store's two files in dir (the system's
// temporary directory, $TMPDIR, when ""), unlinked at once so that nothing is left
// behind, even by a killed process.
func newSettledStore(dir string) (*settledStore, error) {
	slots, err := tempfile.Unlinked(dir, "msgload-sim-status-*")
	if err != nil {
		return nil, err
	}
	data, err := tempfile.Unlinked(dir, "msgload-sim-trackdata-*")
	if err != nil {
		slots.Close()
		return nil, err
	}
	return &settledStore{slots: slots, data: data, queue: make(chan settledItem, 4096), done: make(chan struct{})}, nil
}

// number gives the next message number and writes it into id's last 6 bytes
// (the random version-4 bits before them stay as drawn); false when numbers
// are used up.
func (st *settledStore) number(id *[16]byte) bool {
	n := st.next.Add(1) - 1
	if n > maxNumber {
		return false
	}
	putNumber(id, n)
	return true
}

func putNumber(id *[16]byte, n uint64) {
	for i := 15; i >= 10; i-- {
		id[i] = byte(n)
		n >>= 8
	}
}

// txNumber is the message number a txId carries.
func txNumber(id [16]byte) uint64 {
	var n uint64
	for _, b := range id[10:] {
		n = n<<8 | uint64(b)
	}
	return n
}

// settledItem is a final message handed to the store, with its account's
// number (Server.acctNums).
type settledItem struct {
	m    *message
	acct uint16
}

// putBatch writes the records of items: their trackData in one write, then
// each slot; it returns the items it could not write.
func (st *settledStore) putBatch(items []settledItem) (failed []settledItem) {
	var td []byte
	for _, it := range items {
		td = append(td, it.m.trackData...)
	}
	off := st.end
	if _, err := st.data.WriteAt(td, off); err != nil {
		return items
	}
	st.end += int64(len(td))
	for _, it := range items {
		m := it.m
		var b [slotSize]byte
		copy(b[:16], m.id[:])
		binary.LittleEndian.PutUint64(b[16:], uint64(m.lastAt))
		binary.LittleEndian.PutUint16(b[24:], it.acct)
		b[26], b[27] = m.lastState, m.lastChan
		binary.LittleEndian.PutUint16(b[28:], m.lastCode)
		binary.LittleEndian.PutUint32(b[30:], uint32(len(m.trackData)))
		binary.LittleEndian.PutUint64(b[34:], uint64(off))
		off += int64(len(m.trackData))
		if _, err := st.slots.WriteAt(b[:], int64(txNumber(m.id))*slotSize); err != nil {
			failed = append(failed, it)
		}
	}
	return failed
}

// get reads the slot of id back into a message holding what record needs;
// nil when id is not a settled message of this store or account acct, or
// its retention ended before now.
func (st *settledStore) get(id [16]byte, acct uint16, retention time.Duration, now time.Time) *message {
	n := txNumber(id)
	if n >= st.next.Load() {
		return nil
	}
	var b [slotSize]byte
	if _, err := st.slots.ReadAt(b[:], int64(n)*slotSize); err != nil || [16]byte(b[:16]) != id {
		return nil // not written (a hole reads as zeros) or another id
	}
	m := &message{id: id, lastAt: int64(binary.LittleEndian.Uint64(b[16:]))}
	if binary.LittleEndian.Uint16(b[24:]) != acct || now.UnixNano() >= m.lastAt+int64(retention) {
		return nil
	}
	m.lastState, m.lastChan = b[26], b[27]
	m.lastCode = binary.LittleEndian.Uint16(b[28:])
	if l := binary.LittleEndian.Uint32(b[30:]); l > 0 {
		td := make([]byte, l)
		if _, err := st.data.ReadAt(td, int64(binary.LittleEndian.Uint64(b[34:]))); err != nil {
			return nil
		}
		m.trackData = string(td)
	}
	return m
}

// close stops the writer once it has written what is queued (call after the
// scheduler has stopped: it is the only sender) and closes the files.
func (st *settledStore) close() {
	close(st.queue)
	<-st.done
	st.slots.Close()
	st.data.Close()
}

// storeSettled hands a final message to the store's writer, which forgets
// it in memory once its slot is written; false when there is no store or the
// message's account has no number (then it stays in memory until its
// retention ends, as without a store). It runs on the scheduler goroutine, so
// the writes are not made here: a system call there holds up every message.
func (s *Server) storeSettled(m *message) bool {
	if s.settled == nil {
		return false
	}
	num, ok := s.acctNums[m.acct]
	if !ok {
		return false
	}
	s.settled.queue <- settledItem{m, num}
	return true
}

// writeSettled is the store's writer: it writes the queued messages' slots
// in batches and then takes them out of the map — after the slot is
// written, so a check-status that misses a message in the map finds it in
// the store. A message whose slot could not be written stays in memory until
// its retention ends.
func (s *Server) writeSettled(st *settledStore) {
	defer close(st.done)
	batch := make([]settledItem, 0, 256)
	for it := range st.queue {
		batch = append(batch[:0], it)
	fill:
		for len(batch) < cap(batch) {
			select {
			case it, ok := <-st.queue:
				if !ok {
					break fill
				}
				batch = append(batch, it)
			default:
				break fill
			}
		}
		failed := st.putBatch(batch)
		s.msgMu.Lock()
		for _, it := range batch {
			delete(s.msgs, it.m.id)
		}
		for _, it := range failed {
			s.msgs[it.m.id] = it.m
		}
		s.msgMu.Unlock()
		for _, it := range failed {
			it.m.phase = phForget
			s.eng.at(time.Unix(0, it.m.lastAt).Add(s.cfg.Messaging.StatusRetention), it.m)
		}
	}
}

// statusOf is the check-status record of id for account acc, nil when there
// is none: a message in flight (or kept in memory) from the map, a settled
// one from the store.
func (s *Server) statusOf(id [16]byte, acc *account) any {
	s.msgMu.RLock()
	m := s.msgs[id]
	var rec any
	if m != nil && m.acct == acc {
		rec = s.record(m)
	}
	s.msgMu.RUnlock()
	if m != nil || s.settled == nil {
		return rec
	}
	num, ok := s.acctNums[acc]
	if !ok {
		return nil
	}
	if m = s.settled.get(id, num, s.cfg.Messaging.StatusRetention, time.Now()); m == nil {
		return nil
	}
	return s.record(m)
}
