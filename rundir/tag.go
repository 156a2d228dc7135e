package rundir

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Tag is the correlation the attacker carries through the service in fields the
// service echoes, so the sink can measure delivery latency on its own:
//
//   - messaging: keys in trackData: TrackRun, TrackPart (a run with parts),
//     TrackSeq, TrackSent (the first attempt's send time, Unix nanoseconds as a
//     decimal string) and TrackChain (the scenario's channels in order,
//     comma-separated, so the sink can tell a failover step from the end of
//     the cascade);
//   - notify: the externalId itself, "ml.<run>.<seq>.<unix nanoseconds>", or
//     "ml.<run>.<part>.<seq>.<unix nanoseconds>" in a run with parts.
//
// The same tag is sent on every retry and probe of a message, so the time is always
// the first attempt's. Run, part and sequence name the message: the parts of one
// run number their messages from 1 each, so a part never counts another part's
// events. A tag without a part (a run without parts, or msgload before parts were
// tagged) is the run's only part.
type Tag struct {
	Run   string
	Part  string // the part of a run with parts ("" for a run without): 1 to 64 of [A-Za-z0-9_-]
	Seq   int64
	First time.Time
	Chain []string // messaging only: the channels of the scenario, in order
}

// Owns reports whether the tag names a message of the given run and part
// (Meta.ID and Meta.Part).
func (t Tag) Owns(run, part string) bool { return t.Run == run && t.Part == part }

// trackData keys used for messaging correlation.
const (
	TrackRun   = "msgload_run"
	TrackPart  = "msgload_part"
	TrackSeq   = "msgload_seq"
	TrackSent  = "msgload_sent"
	TrackChain = "msgload_chain"
)

// errNoTag means the field carries no msgload tag: the event is unmatched.
var errNoTag = errors.New("no msgload tag")

const externalPrefix = "ml."

// ExternalID encodes t as a notification externalId.
func (t Tag) ExternalID() string {
	run := t.Run
	if t.Part != "" {
		run += "." + t.Part
	}
	return externalPrefix + run + "." + strconv.FormatInt(t.Seq, 10) + "." + strconv.FormatInt(t.First.UnixNano(), 10)
}

// TrackData returns the trackData entries for t.
func (t Tag) TrackData() map[string]string {
	m := map[string]string{
		TrackRun:  t.Run,
		TrackSeq:  strconv.FormatInt(t.Seq, 10),
		TrackSent: strconv.FormatInt(t.First.UnixNano(), 10),
	}
	if t.Part != "" {
		m[TrackPart] = t.Part
	}
	if len(t.Chain) > 0 {
		m[TrackChain] = strings.Join(t.Chain, ",")
	}
	return m
}

// ValidRunID reports whether id can be carried in a tag: 1 to 64 of [A-Za-z0-9_-].
func ValidRunID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// ParseExternalID decodes a tag from a notification externalId.
func ParseExternalID(s string) (Tag, error) {
	rest, ok := strings.CutPrefix(s, externalPrefix)
	if !ok {
		return Tag{}, errNoTag
	}
	parts := strings.Split(rest, ".")
	switch len(parts) {
	case 3:
		return parseTag(parts[0], "", parts[1], parts[2])
	case 4:
		return parseTag(parts[0], parts[1], parts[2], parts[3])
	}
	return Tag{}, fmt.Errorf("externalId %q: want ml.<run>[.<part>].<seq>.<nanos>", s)
}

// ParseTrackData decodes a tag from a messaging trackData object as decoded by
// encoding/json (values may be strings or numbers).
func ParseTrackData(td map[string]any) (Tag, error) {
	if td == nil {
		return Tag{}, errNoTag
	}
	run, ok := td[TrackRun]
	if !ok {
		return Tag{}, errNoTag
	}
	str := func(v any) string {
		switch x := v.(type) {
		case string:
			return x
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		default:
			return fmt.Sprint(x)
		}
	}
	part := ""
	if p, ok := td[TrackPart]; ok {
		if part = str(p); part == "" {
			return Tag{}, fmt.Errorf("tag: empty part")
		}
	}
	t, err := parseTag(str(run), part, str(td[TrackSeq]), str(td[TrackSent]))
	if err != nil {
		return t, err
	}
	if c, ok := td[TrackChain].(string); ok && c != "" {
		t.Chain = strings.Split(c, ",")
	}
	return t, nil
}

func parseTag(run, part, seq, nanos string) (Tag, error) {
	if !ValidRunID(run) {
		return Tag{}, fmt.Errorf("tag: bad run id %q", run)
	}
	if part != "" && !ValidRunID(part) {
		return Tag{}, fmt.Errorf("tag: bad part %q", part)
	}
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil || n < 0 {
		return Tag{}, fmt.Errorf("tag: bad sequence %q", seq)
	}
	ns, err := strconv.ParseInt(nanos, 10, 64)
	if err != nil || ns <= 0 {
		return Tag{}, fmt.Errorf("tag: bad send time %q", nanos)
	}
	return Tag{Run: run, Part: part, Seq: n, First: time.Unix(0, ns).UTC()}, nil
}
