// Package e164 answers the two questions msgload asks of a phone number — its
// country calling code, and the time zone its prefix is in — from the
// numbering-plan tables of github.com/nyaruka/phonenumbers (libphonenumber's
// data), embedded here and decoded on first use.
//
// The library itself decodes all of its metadata in its package init, in
// every process that links it (2.4 MB of heap and ~50 ms of CPU before main),
// a delivery-none load run included. Only the tables needed are kept here
// (8 KB compressed), and nothing is decoded until a lookup asks: a run whose
// scenario has no recipient-local schedule and no redaction never pays. The
// library stays the oracle of this package's tests.
package e164

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// countryCodeData maps each country calling code to its regions, and
// timezoneData each number prefix to its time zones; both are
// github.com/nyaruka/phonenumbers v1.6.3's files, copied unchanged (data/LICENSE).
var (
	//go:embed data/countrycode_to_region.xml.gz
	countryCodeData []byte
	//go:embed data/prefix_to_timezone.xml.gz
	timezoneData []byte
)

// The lengths libphonenumber allows: a calling code has 1 to 3 digits, the
// national significant number after it 2 to 17.
const (
	maxCallingCodeLen = 3
	minNationalLen    = 2
	maxNationalLen    = 17
	unknownZone       = "Etc/Unknown" // the tables' "no zone known"
)

// table is one decoded prefix table: each key's first value, and the longest key's digit count.
type table struct {
	first  map[int]string
	maxLen int
}

// lazyTable decodes its data once, on the first lookup.
type lazyTable struct {
	data    []byte
	once    sync.Once
	t       table
	err     error
	decodes atomic.Int32 // how many times the data was decoded (tests: 0 until asked, then 1)
}

func (l *lazyTable) get() (table, error) {
	l.once.Do(func() {
		l.decodes.Add(1)
		l.t, l.err = decodeTable(l.data)
	})
	return l.t, l.err
}

var (
	callingCodes = &lazyTable{data: countryCodeData}
	zones        = &lazyTable{data: timezoneData}
)

// ZonesDecoded tells whether this process has decoded the time-zone table:
// false until a Zone lookup asks (a run without a recipient-local schedule
// never does; its test holds the simulator to that).
func ZonesDecoded() bool { return zones.decodes.Load() > 0 }

// CountryCode is the country calling code that digits (a number in
// international form without its "+") starts with, or 0 when no assigned code
// does. Calling codes are prefix-free, so at most one matches.
func CountryCode(digits string) int {
	t, err := callingCodes.get()
	if err != nil {
		return 0
	}
	if digits == "" || digits[0] == '0' {
		return 0 // no calling code starts with 0 (and 0 would read as nothing)
	}
	code := 0
	for i := 0; i < len(digits) && i < maxCallingCodeLen; i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0
		}
		code = code*10 + int(c-'0')
		if _, ok := t.first[code]; ok {
			return code
		}
	}
	return 0
}

// Zone is the IANA name of the first time zone of an E.164 number ("+"
// followed by digits; spaces, dots, dashes, slashes and parentheses between
// them are ignored), or "" when the number is not one or its prefix has no
// known zone. The digits are looked up as written: a national trunk prefix
// written after the country code ("+44 0 20…") is not removed, as
// libphonenumber's parser would, and letters (vanity numbers) are not read as
// digits: no zone, where the parser would convert them.
func Zone(number string) string {
	digits, ok := e164Digits(number)
	if !ok {
		return ""
	}
	cc := CountryCode(digits)
	if cc == 0 {
		return ""
	}
	if n := len(digits) - len(strconv.Itoa(cc)); n < minNationalLen || n > maxNationalLen {
		return ""
	}
	t, err := zones.get()
	if err != nil {
		return ""
	}
	for i := min(len(digits), t.maxLen); i > 0; i-- {
		if z, ok := t.first[atoi(digits[:i])]; ok {
			if z == unknownZone {
				return ""
			}
			return z // "" for a prefix listed without zones
		}
	}
	return ""
}

// e164Digits is number's digits when it is "+" and digits with the usual
// separators, false otherwise.
func e164Digits(number string) (string, bool) {
	s := strings.TrimSpace(number)
	if !strings.HasPrefix(s, "+") {
		return "", false
	}
	var b strings.Builder
	for _, r := range s[1:] {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case strings.ContainsRune(" .-/()", r):
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

// atoi is the value of a short string of ASCII digits (at most 18 of them, as the tables' keys).
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// decodeTable reads phonenumbers' prefix-table encoding: gzip of a
// little-endian uint32 length and that many bytes of newline-separated values,
// a uint32 count, then per key a uvarint delta from the previous key, a byte
// count of values and that many uint16 indexes into the values.
func decodeTable(data []byte) (table, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return table{}, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return table{}, err
	}
	r := bytes.NewReader(raw)
	var size uint32
	if err := binary.Read(r, binary.LittleEndian, &size); err != nil {
		return table{}, err
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return table{}, err
	}
	return decodeMappings(r, strings.Split(string(buf), "\n"))
}

// decodeMappings reads decodeTable's keys and their value indexes, keeping each key's first value.
func decodeMappings(r *bytes.Reader, values []string) (table, error) {
	var count uint32
	if err := binary.Read(r, binary.LittleEndian, &count); err != nil {
		return table{}, err
	}
	t := table{first: make(map[int]string, count)}
	key := 0
	for range count {
		diff, err := binary.ReadUvarint(r)
		if err != nil {
			return table{}, err
		}
		key += int(diff)
		n, err := r.ReadByte()
		if err != nil {
			return table{}, err
		}
		idx := make([]uint16, n)
		if err := binary.Read(r, binary.LittleEndian, idx); err != nil {
			return table{}, err
		}
		for _, i := range idx {
			if int(i) >= len(values) {
				return table{}, errors.New("e164: bad value index in table")
			}
		}
		t.first[key] = "" // a key with no values is known, with nothing to say
		if n > 0 {
			t.first[key] = values[idx[0]]
		}
		t.maxLen = max(t.maxLen, len(strconv.Itoa(key)))
	}
	return t, nil
}
