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
// A missing file reads as empty.
func ReadJSONL[T any](path string, fn func(T) error, bad func(line int, err error)) error {
	f, err := os.Open(path)
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
// attempts allocated a copy of every line and a T for each.
func DecodeJSONL[T any](r io.Reader, fn func(T) error, bad func(line int, err error)) error {
	return DecodeJSONLFunc(r, func(b []byte, v *T) error { return json.Unmarshal(b, v) }, fn, bad)
}

// DecodeJSONLFunc is DecodeJSONL with its own decoder of a line into a zeroed
// T, which must do what json.Unmarshal does (a faster one for a hot file).
func DecodeJSONLFunc[T any](r io.Reader, decode func([]byte, *T) error, fn func(T) error, bad func(line int, err error)) error {
	br := bufio.NewReaderSize(r, 1<<16)
	line := 0
	var v, zero T
	var long []byte // a line longer than br's buffer, gathered
	gathering := false
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !gathering {
				long, gathering = long[:0], true
			}
			long = append(long, b...)
			continue
		}
		if gathering {
			long = append(long, b...)
			b, gathering = long, false
		}
		if len(b) > 0 {
			line++
			b = bytes.TrimSpace(b)
			if len(b) > 0 {
				v = zero
				if derr := decode(b, &v); derr != nil {
					if bad != nil {
						bad(line, derr)
					}
				} else if ferr := fn(v); ferr != nil {
					return ferr
				}
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
