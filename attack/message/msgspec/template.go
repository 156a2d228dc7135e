package msgspec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// errBadTemplate is wrapped by every template parse error.
var errBadTemplate = errors.New("bad template")

// Template is a compiled text template: literal text with actions in {{ }}.
// Actions: {{.Seq}} (message sequence), {{.Client}} (client id), {{.Recipient}},
// {{.Run}} (run id), {{words N}} (N random English words), {{cyrillic N}} (N random
// Russian words, 2 bytes a letter), {{emoji N}} (N random emoji, 4 bytes each),
// {{digits N}} (N random digits). It is a deliberately small language: rendering
// appends to a buffer without reflection, so it costs almost nothing per request.
type Template struct {
	segs []Segment
}

// segKind says what a template segment renders.
type segKind uint8

// Segment kinds.
const (
	SegLit segKind = iota
	SegSeq
	SegClient
	SegRecipient
	SegRun
	SegWords
	SegCyrillic
	SegEmoji
	SegDigits
)

// Segment is one piece of a template.
type Segment struct {
	Kind segKind
	Lit  string // SegLit
	N    int    // counted actions
}

// maxTemplateCount bounds N in counted actions so a template cannot ask for gigabytes.
const maxTemplateCount = 10000

// ParseTemplate compiles s.
func ParseTemplate(s string) (*Template, error) {
	t := &Template{}
	rest := s
	for rest != "" {
		i := strings.Index(rest, "{{")
		if i < 0 {
			t.segs = append(t.segs, Segment{Kind: SegLit, Lit: rest})
			break
		}
		if i > 0 {
			t.segs = append(t.segs, Segment{Kind: SegLit, Lit: rest[:i]})
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return nil, fmt.Errorf("%w: %q has {{ without }}", errBadTemplate, s)
		}
		action := strings.TrimSpace(rest[i+2 : i+j])
		seg, err := parseAction(action)
		if err != nil {
			return nil, err
		}
		t.segs = append(t.segs, seg)
		rest = rest[i+j+2:]
	}
	return t, nil
}

func parseAction(a string) (Segment, error) {
	switch a {
	case ".Seq":
		return Segment{Kind: SegSeq}, nil
	case ".Client":
		return Segment{Kind: SegClient}, nil
	case ".Recipient":
		return Segment{Kind: SegRecipient}, nil
	case ".Run":
		return Segment{Kind: SegRun}, nil
	}
	f := strings.Fields(a)
	kinds := map[string]segKind{"words": SegWords, "cyrillic": SegCyrillic, "emoji": SegEmoji, "digits": SegDigits}
	if len(f) == 2 {
		if k, ok := kinds[f[0]]; ok {
			n, err := strconv.Atoi(f[1])
			if err != nil || n < 1 || n > maxTemplateCount {
				return Segment{}, fmt.Errorf("%w: {{%s}}: count must be a whole number from 1 to %d", errBadTemplate, a, maxTemplateCount)
			}
			return Segment{Kind: k, N: n}, nil
		}
	}
	return Segment{}, fmt.Errorf("%w: unknown action {{%s}}: want .Seq, .Client, .Recipient, .Run, words N, cyrillic N, emoji N or digits N", errBadTemplate, a)
}

// Segments returns the compiled pieces (read only).
func (t *Template) Segments() []Segment { return t.segs }

// Static reports whether the template renders the same text every time.
func (t *Template) Static() bool {
	for _, s := range t.segs {
		if s.Kind != SegLit {
			return false
		}
	}
	return true
}
