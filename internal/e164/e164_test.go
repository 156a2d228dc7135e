package e164

import (
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"

	"github.com/nyaruka/phonenumbers"
)

// libraryZone is what sim's recipient zone was before this package: the
// first zone phonenumbers gives a parsed number, "" when it gives none.
func libraryZone(number string) (zone, e164 string) {
	num, err := phonenumbers.Parse(number, "")
	if err != nil {
		return "", ""
	}
	e164 = phonenumbers.Format(num, phonenumbers.E164)
	zs, err := phonenumbers.GetTimezonesForNumber(num)
	if err != nil || len(zs) == 0 || zs[0] == unknownZone {
		return "", e164
	}
	return zs[0], e164
}

// pad fills prefix with random digits to n digits.
func pad(r *rand.Rand, prefix string, n int) string {
	b := []byte(prefix)
	for len(b) < n {
		b = append(b, byte('0'+r.IntN(10)))
	}
	return string(b)
}

// TestCountryCodeMatchesLibrary: for every 1- to 3-digit start, as numbers of
// 10 to 15 digits (what replay's redaction masks), the calling code is the one
// phonenumbers parses, 0 where it finds none.
func TestCountryCodeMatchesLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	found := 0
	for p := range 1000 {
		for _, width := range []int{1, 2, 3} {
			prefix := strconv.Itoa(p)
			if len(prefix) > width {
				continue
			}
			digits := pad(r, prefix, 10+r.IntN(6))
			want := 0
			if num, err := phonenumbers.Parse("+"+digits, ""); err == nil {
				want = int(num.GetCountryCode())
			}
			if got := CountryCode(digits); got != want {
				t.Errorf("CountryCode(%s) = %d, phonenumbers says %d", digits, got, want)
			}
			if want > 0 {
				found++
			}
		}
	}
	if found < 200 {
		t.Fatalf("only %d numbers had a calling code; the table did not load", found)
	}
}

// TestZoneMatchesLibrary: every prefix of the time-zone table, padded to
// numbers of several lengths, gets the zone phonenumbers gives — wherever the
// library keeps the number as written (it strips a trunk prefix written after
// the calling code; those are counted and must stay few).
func TestZoneMatchesLibrary(t *testing.T) {
	tz, err := zones.get()
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]int, 0, len(tz.first))
	for k := range tz.first {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	r := rand.New(rand.NewPCG(3, 4))
	compared, rewritten, zoned := 0, 0, 0
	for _, k := range keys {
		for _, n := range []int{11, 12, 13} {
			num := "+" + pad(r, strconv.Itoa(k), n)
			want, e164 := libraryZone(num)
			if e164 != "" && e164 != num {
				rewritten++
				continue
			}
			compared++
			if want != "" {
				zoned++
			}
			if got := Zone(num); got != want {
				t.Errorf("Zone(%s) = %q, phonenumbers says %q", num, got, want)
			}
		}
	}
	if compared < 3*len(keys)*9/10 || zoned < compared/2 {
		t.Fatalf("compared %d numbers (%d rewritten by the library), %d with a zone: too few to mean anything", compared, rewritten, zoned)
	}
	t.Logf("%d numbers compared, %d with a zone; %d rewritten by the library's parser and skipped", compared, zoned, rewritten)
}

// TestZoneRejectsWhatIsNotANumber: no zone for what is not an E.164 number, and
// the same answers before and after the tables are decoded.
func TestZoneRejectsWhatIsNotANumber(t *testing.T) {
	cases := map[string]string{
		"":                  "",
		"+":                 "",
		"79991234567":       "", // no "+"
		"+7999abc4567":      "",
		"+0123456789":       "", // no calling code starts with 0
		"+7 9":              "", // national number too short
		"+1 800 FLOWERS":    "", // letters are not read as digits
		"+44 20 7946 0000":  "Europe/London",
		"+1 (212) 555-0100": "America/New_York",
	}
	for range 2 {
		for in, want := range cases {
			if got := Zone(in); got != want {
				t.Errorf("Zone(%q) = %q, want %q", in, got, want)
			}
		}
	}
}

// TestDecodedOnFirstUse: a table is decoded by its first lookup and never again.
func TestDecodedOnFirstUse(t *testing.T) {
	l := &lazyTable{data: timezoneData}
	if n := l.decodes.Load(); n != 0 {
		t.Fatalf("decoded %d times before any lookup", n)
	}
	for range 3 {
		if _, err := l.get(); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.decodes.Load(); n != 1 {
		t.Fatalf("decoded %d times for three lookups, want 1", n)
	}
}
