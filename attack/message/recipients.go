package message

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/msgload/msgload/attack/message/msgspec"
)

// Sentinel errors of the recipients reader.
var (
	errNoRecipients = errors.New("no recipients")
	errBadCSV       = errors.New("bad recipients CSV")
)

// Limits of a recipients CSV file.
const (
	maxRecipients      = 10_000_000
	maxRecipientLength = 200 // recipient.value, messaging seed
)

// readRecipientsCSV reads phone numbers from CSV. With column set, the first row
// is a header and the numbers are in that column; without, the numbers are in the
// first column and a first row whose first cell holds no digit is taken as a
// header. Empty lines are skipped; every number is trimmed, must be at most 200
// characters and hold at least one digit.
func readRecipientsCSV(r io.Reader, column string) ([]string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	col := 0
	var out []string
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errBadCSV, err)
		}
		if line == 1 {
			if column != "" {
				col = -1
				for i, h := range rec {
					if strings.TrimSpace(h) == column {
						col = i
						break
					}
				}
				if col < 0 {
					return nil, fmt.Errorf("%w: no column %q in the header %q", errBadCSV, column, strings.Join(rec, ","))
				}
				continue
			}
			if len(rec) > 0 && !strings.ContainsAny(rec[0], "0123456789") {
				continue // a header
			}
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if col >= len(rec) {
			return nil, fmt.Errorf("%w: line %d has no column %d", errBadCSV, line, col+1)
		}
		v := strings.TrimSpace(rec[col])
		if v == "" || len(v) > maxRecipientLength || !strings.ContainsAny(v, "0123456789") {
			return nil, fmt.Errorf("%w: line %d: %q is not a phone number (1 to %d characters with digits)", errBadCSV, line, v, maxRecipientLength)
		}
		if len(out) >= maxRecipients {
			return nil, fmt.Errorf("%w: more than %d recipients", errBadCSV, maxRecipients)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errNoRecipients
	}
	return out, nil
}

// recipients picks the recipient of a message.
type recipients struct {
	rng    msgspec.NumberRange
	list   []string
	random bool
}

// appendRecipient appends the recipient of message seq; h is a per-message
// random value used when the order is random.
func (rc *recipients) appendRecipient(dst []byte, seq int64, h uint64) []byte {
	i := uint64(seq)
	if rc.random {
		i = h
	}
	if rc.list != nil {
		return append(dst, rc.list[i%uint64(len(rc.list))]...)
	}
	return rc.rng.AppendNumber(dst, i)
}
