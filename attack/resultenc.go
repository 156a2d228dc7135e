package attack

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// resultEncoder writes vegeta results to one gob stream, byte for byte what
// vegeta.NewEncoder writes, without its reflection: encoding/gob cost about
// 3 µs a result, once per request of the run. The first result goes through
// gob (the stream's type definitions come with it); its value message is
// then encoded again by hand and compared with gob's, and only when the two
// agree are the results after it encoded by hand (appendResult), else the
// whole stream stays with gob. A result the hand encoder does not know
// (headers, a time MarshalBinary refuses) goes through gob as well, which
// keeps the stream's state.
type resultEncoder struct {
	w      io.Writer
	gob    vegeta.Encoder // writes into gobBuf, copied to w
	gobBuf bytes.Buffer
	typeID []byte // the stream's type id of Result (gob's int), once the hand encoder agreed
	tried  bool   // the first result was compared
	buf    []byte // the message being encoded by hand
}

func newResultEncoder(w io.Writer) *resultEncoder {
	e := &resultEncoder{w: w}
	e.gob = vegeta.NewEncoder(&e.gobBuf)
	return e
}

// encode writes r with Seq seq (r itself is not changed).
func (e *resultEncoder) encode(r *vegeta.Result, seq uint64) error {
	if e.typeID != nil && len(r.Headers) == 0 {
		b, start, ok := e.message(e.buf[:0], r, seq)
		if ok {
			e.buf = b
			_, err := e.w.Write(b[start:])
			return err
		}
	}
	return e.viaGob(r, seq)
}

// viaGob writes r through encoding/gob; the first time, it learns whether
// the hand encoder writes what gob does.
func (e *resultEncoder) viaGob(r *vegeta.Result, seq uint64) error {
	out := *r
	out.Seq = seq
	e.gobBuf.Reset()
	if err := e.gob.Encode(&out); err != nil {
		return err
	}
	if !e.tried {
		e.tried = true
		e.learn(e.gobBuf.Bytes(), &out)
	}
	_, err := e.w.Write(e.gobBuf.Bytes())
	return err
}

// learn takes the type id from the last message of stream (gob's encoding
// of r, after its type definitions) and keeps it if the hand encoder gives
// that message exactly.
func (e *resultEncoder) learn(stream []byte, r *vegeta.Result) {
	var last []byte
	for len(stream) > 0 {
		n, k, ok := gobUint(stream)
		if !ok || n > uint64(len(stream)-k) {
			return
		}
		last, stream = stream[:k+int(n)], stream[k+int(n):]
	}
	_, k, ok := gobUint(last) // the message's length
	if !ok {
		return
	}
	_, t, ok := gobUint(last[k:]) // the type id, an int: its bytes as they are
	if !ok {
		return
	}
	e.typeID = bytes.Clone(last[k : k+t]) // last is in gobBuf, which the next result through gob overwrites
	if b, start, ok := e.message(nil, r, r.Seq); !ok || !bytes.Equal(b[start:], last) {
		e.typeID = nil
	}
}

// gobUint reads gob's unsigned integer at the start of b: its value and how
// many bytes it took.
func gobUint(b []byte) (x uint64, n int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	if b[0] <= 0x7f {
		return uint64(b[0]), 1, true
	}
	n = -int(int8(b[0]))
	if n > 8 || len(b) < 1+n {
		return 0, 0, false
	}
	for _, c := range b[1 : 1+n] {
		x = x<<8 | uint64(c)
	}
	return x, 1 + n, true
}

// message appends to b gob's message of r with Seq seq, which begins at
// b[start:]: its length, the type id, the fields that are not zero (each
// after the difference of its field number from the last one's), and the
// struct's end. false when r has what it does not encode (headers; a time
// MarshalBinary refuses).
func (e *resultEncoder) message(b []byte, r *vegeta.Result, seq uint64) (_ []byte, start int, ok bool) {
	if len(r.Headers) > 0 {
		return nil, 0, false
	}
	const room = 9 // the longest length gob writes before a message
	base := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	b = append(b, e.typeID...)
	f := field{b: b, last: -1}
	f.str(0, r.Attack)
	f.uint(1, seq)
	f.uint(2, uint64(r.Code))
	if r.Timestamp != (time.Time{}) {
		f.next(3)
		at := len(f.b)
		f.b = append(f.b, 0) // the length of a time's encoding fits one byte (15 or 16)
		var err error
		if f.b, err = r.Timestamp.AppendBinary(f.b); err != nil || len(f.b)-at-1 > 0x7f {
			return nil, 0, false
		}
		f.b[at] = byte(len(f.b) - at - 1)
	}
	f.int(4, int64(r.Latency))
	f.uint(5, r.BytesOut)
	f.uint(6, r.BytesIn)
	f.str(7, r.Error)
	if len(r.Body) > 0 {
		f.next(8)
		f.b = appendGobUint(f.b, uint64(len(r.Body)))
		f.b = append(f.b, r.Body...)
	}
	f.str(9, r.Method)
	f.str(10, r.URL)
	f.b = append(f.b, 0) // the struct's end
	b = f.b
	var lb [room]byte
	l := appendGobUint(lb[:0], uint64(len(b)-base-room))
	start = base + room - len(l)
	copy(b[start:], l)
	return b, start, true
}

// field appends the fields of one struct in gob's encoding.
type field struct {
	b    []byte
	last int // the field number written last
}

func (f *field) next(n int) {
	f.b = appendGobUint(f.b, uint64(n-f.last))
	f.last = n
}

func (f *field) str(n int, s string) {
	if s != "" {
		f.next(n)
		f.b = appendGobUint(f.b, uint64(len(s)))
		f.b = append(f.b, s...)
	}
}

func (f *field) uint(n int, x uint64) {
	if x != 0 {
		f.next(n)
		f.b = appendGobUint(f.b, x)
	}
}

func (f *field) int(n int, i int64) {
	if i != 0 {
		f.next(n)
		x := uint64(i) << 1
		if i < 0 {
			x = uint64(^i)<<1 | 1
		}
		f.b = appendGobUint(f.b, x)
	}
}

// appendGobUint is gob's unsigned integer: one byte up to 0x7f, else the
// negated count of big-endian bytes that follow.
func appendGobUint(b []byte, x uint64) []byte {
	if x <= 0x7f {
		return append(b, byte(x))
	}
	var be [8]byte
	binary.BigEndian.PutUint64(be[:], x)
	skip := bits.LeadingZeros64(x) >> 3
	b = append(b, byte(-(8 - skip)))
	return append(b, be[skip:]...)
}
