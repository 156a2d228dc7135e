package rundir

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestTagRoundTrip(t *testing.T) {
	tag := Tag{Run: "20261123T020000Z-smoke-1a2b", Seq: 42, First: time.Unix(0, 1763863200123456789).UTC(), Chain: []string{"viber", "sms"}}

	got, err := ParseExternalID(tag.ExternalID())
	if err != nil {
		t.Fatal(err)
	}
	want := tag
	want.Chain = nil // externalId carries no chain
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("externalId round trip: got %+v, want %+v", got, want)
	}

	// trackData goes through JSON as the service echoes it.
	b, _ := json.Marshal(tag.TrackData())
	var td map[string]any
	if err := json.Unmarshal(b, &td); err != nil {
		t.Fatal(err)
	}
	got, err = ParseTrackData(td)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, tag) {
		t.Fatalf("trackData round trip: got %+v, want %+v", got, tag)
	}
}

func TestParseTagRejects(t *testing.T) {
	for _, tc := range []struct {
		in    string
		noTag bool // errNoTag: not ours, so unmatched rather than malformed
	}{
		{"order-123", true},       // a client's own id
		{"ml.run.1", false},       // too few parts
		{"ml.run.x.1", false},     // sequence not a number
		{"ml.run.1.-5", false},    // time not positive
		{"ml.ru n.1.5", false},    // run id with a space
		{"ml..1.5", false},        // empty run id
		{"ml.run.p.1.5.6", false}, // too many parts
		{"ml.run.p q.1.5", false}, // part with a space
	} {
		_, err := ParseExternalID(tc.in)
		if err == nil {
			t.Errorf("%q: want an error", tc.in)
			continue
		}
		if errors.Is(err, errNoTag) != tc.noTag {
			t.Errorf("%q: ErrNoTag = %v, want %v (err %v)", tc.in, errors.Is(err, errNoTag), tc.noTag, err)
		}
	}
	if _, err := ParseTrackData(map[string]any{"order": "1"}); !errors.Is(err, errNoTag) {
		t.Errorf("trackData without our keys: got %v, want ErrNoTag", err)
	}
	if _, err := ParseTrackData(map[string]any{TrackRun: "r", TrackSeq: 1.0, TrackSent: "abc"}); err == nil || errors.Is(err, errNoTag) {
		t.Errorf("trackData with a bad time: got %v, want a parse error", err)
	}
}

// FuzzParseExternalID: an externalId comes from the service; parsing never panics,
// and whatever parses encodes back to the same string.
func FuzzParseExternalID(f *testing.F) {
	f.Add("ml.run-1.1.1763863200123456789")
	f.Add("order-7")
	f.Add("ml...")
	f.Fuzz(func(t *testing.T, s string) {
		tag, err := ParseExternalID(s)
		if err != nil {
			return
		}
		if back := tag.ExternalID(); back != s {
			// Leading zeros or a '+' in numbers parse but do not round-trip; both
			// still name the same tag.
			again, err := ParseExternalID(back)
			if err != nil || !reflect.DeepEqual(again, tag) {
				t.Fatalf("%q -> %+v -> %q does not round-trip", s, tag, back)
			}
		}
	})
}

func TestReadJSONLKeepsGoingPastBadLines(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/a.jsonl"
	writeFile(t, p, "{\"seq\":1}\nnot json\n\n{\"seq\":3}\n{\"seq\":4}\n{\"seq\":5")
	var seqs []int64
	var bad []int
	err := ReadJSONL(p, func(a Attempt) error { seqs = append(seqs, a.Seq); return nil }, func(line int, _ error) { bad = append(bad, line) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seqs, []int64{1, 3, 4}) || !reflect.DeepEqual(bad, []int{2, 6}) {
		t.Fatalf("seqs %v bad %v", seqs, bad)
	}
	if err := ReadJSONL(dir+"/missing.jsonl", func(Attempt) error { return nil }, nil); err != nil {
		t.Fatalf("missing file: %v", err)
	}
}

// TestTagPartRoundTrip: a run with parts names the part in both encodings,
// and a tag without a part (a run without parts, or an older msgload) reads
// as before; Owns tells the parts of one run apart.
func TestTagPartRoundTrip(t *testing.T) {
	tag := Tag{Run: "r1", Part: "notify-part", Seq: 7, First: time.Unix(0, 1763863200123456789).UTC()}
	ext := tag.ExternalID()
	if ext != "ml.r1.notify-part.7.1763863200123456789" {
		t.Fatalf("externalId %q", ext)
	}
	got, err := ParseExternalID(ext)
	if err != nil || !reflect.DeepEqual(got, tag) {
		t.Fatalf("externalId round trip: got %+v, %v", got, err)
	}
	b, _ := json.Marshal(tag.TrackData())
	var td map[string]any
	if err := json.Unmarshal(b, &td); err != nil {
		t.Fatal(err)
	}
	if got, err = ParseTrackData(td); err != nil || !reflect.DeepEqual(got, tag) {
		t.Fatalf("trackData round trip: got %+v, %v", got, err)
	}
	old, err := ParseExternalID("ml.r1.7.1763863200123456789")
	if err != nil || old.Part != "" || old.Seq != 7 {
		t.Fatalf("a tag without a part: %+v, %v", old, err)
	}
	if !got.Owns("r1", "notify-part") || got.Owns("r1", "messaging-part") || got.Owns("r1", "") || old.Owns("r1", "notify-part") || !old.Owns("r1", "") {
		t.Error("Owns does not tell the parts of one run apart")
	}
}
