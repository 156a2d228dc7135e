package rundir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ReadJSONL calls fn for every line of the JSON-lines file at path, decoded into
// a fresh T. A line that does not decode is reported to bad (with its 1-based line
// number) and reading goes on: nothing collected is lost to one broken line. A
// truncated last line (a writer killed mid-write) is reported the same way.
// A missing file reads as empty; a file that is not regular (a FIFO, a
// device) is refused (ErrNotRegular).
func ReadJSONL[T any](path string, fn func(T) error, bad func(line int, err error)) error {
	f, err := OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return DecodeJSONL(f, fn, bad)
}

// DecodeJSONL is ReadJSONL over a reader. Lines are read in place (a line
// longer than the buffer is gathered in a slice kept for the next long one)
// and decoded into one value of T, zeroed before each line: reading a run's
// attempts allocated a copy of every line and a T for each. A line longer
// than MaxLineBytes is reported to bad (ErrLineTooLong) and skipped; it is
// never held whole, so a file without newlines costs MaxLineBytes at most.
func DecodeJSONL[T any](r io.Reader, fn func(T) error, bad func(line int, err error)) error {
	return DecodeJSONLFunc(r, func(b []byte, v *T) error { return json.Unmarshal(b, v) }, fn, bad)
}

// DecodeJSONLFunc is DecodeJSONL with its own decoder of a line into a zeroed
// T, which must do what json.Unmarshal does (a faster one for a hot file).
func DecodeJSONLFunc[T any](r io.Reader, decode func([]byte, *T) error, fn func(T) error, bad func(line int, err error)) error {
	var v, zero T
	return ScanLines(r, func(line int, b []byte, lerr error) error {
		if lerr != nil {
			if bad != nil {
				bad(line, lerr)
			}
			return nil
		}
		if b = bytes.TrimSpace(b); len(b) == 0 {
			return nil
		}
		v = zero
		if derr := decode(b, &v); derr != nil {
			if bad != nil {
				bad(line, derr)
			}
			return nil
		}
		return fn(v)
	})
}

// ScanLines calls fn with every line of r (its 1-based number, its bytes
// with the newline, valid until fn returns). A line longer than MaxLineBytes
// is read to its end without being kept and given to fn as a nil line with
// ErrLineTooLong; an error of fn ends the scan and is returned.
func ScanLines(r io.Reader, fn func(line int, b []byte, err error) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	line := 0
	var long []byte // a line longer than br's buffer, gathered
	gathering, tooLong := false, false
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !gathering {
				long, gathering = long[:0], true
			}
			if tooLong = tooLong || len(long)+len(b) > MaxLineBytes; tooLong {
				long = long[:0] // skipped: read on to its end, keep none of it
			} else {
				long = append(long, b...)
			}
			continue
		}
		var lerr error
		if gathering {
			long = append(long, b...)
			b, gathering = long, false
			if tooLong || len(b) > MaxLineBytes {
				b, long, tooLong, lerr = nil, nil, false, ErrLineTooLong
			}
		}
		if len(b) > 0 || lerr != nil {
			line++
			if ferr := fn(line, b, lerr); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", line+1, err)
		}
	}
}
