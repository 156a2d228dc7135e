package message

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/msgload/msgload/attack/message/msgspec"
	"github.com/msgload/msgload/internal/jsonesc"
	"github.com/msgload/msgload/rundir"
)

// errUnknownAPI means the API is neither messaging nor notify.
var errUnknownAPI = errors.New("unknown API")

// maxClientRequestID is the longest clientRequestId the messaging API takes.
const maxClientRequestID = 100

// Info describes one body, for the attempt log and the metrics.
type Info struct {
	Recipient  string
	Channels   []string // messaging: the scenario's channels in order (shared: do not modify)
	TextBytes  int      // bytes of the (first) text, before JSON escaping
	ExternalID string   // notify: the externalId sent ("" when none)
}

// Generator builds request bodies. It is immutable after New and safe for
// concurrent use; each Body call allocates its own result.
type Generator struct {
	notify    bool
	seed      uint64
	rc        recipients
	text      *msgspec.Template
	textBytes int
	textParts int
	fill      string
	noExtID   bool
	extID     *msgspec.Template // notify: a template of the user's own ids; nil = the tag

	// messaging
	items      []item
	channels   []string
	links      []string // the chain as rundir.Chain.Strings encodes it
	chain      string
	tail       []byte // urlOptions, schedule, callback: static top-level fields, each with a leading comma
	trackExtra []byte // extra trackData entries, each followed by a comma
	crid       *msgspec.Template

	sizeHint atomic.Int64
	scratch  sync.Pool
}

// item is one messaging scenario item, pre-encoded around its variable parts.
type item struct {
	head []byte            // {"channel":…,"recipient":{"type":"MSISDN","value":"
	mid  []byte            // "},"sender":…,"text":"
	text *msgspec.Template // nil: the message's text
	rest []byte            // ",…static fields…}
}

// New builds a generator for api ("messaging" or "notify") from a message spec
// as scenarios.Load returns it (defaults applied). A CSV recipients path is read
// as given: pass a scenario's Scenario.ResolvedMessage.
func New(api string, spec msgspec.Message, seed int64) (*Generator, error) {
	g := &Generator{seed: uint64(seed), textBytes: spec.TextBytes, textParts: spec.TextParts, fill: spec.Fill, noExtID: spec.ExternalID == "none"}
	switch api {
	case rundir.APINotify:
		g.notify = true
	case rundir.APIMessaging:
	default:
		return nil, fmt.Errorf("%w %q: want messaging or notify", errUnknownAPI, api)
	}
	if g.fill == "" {
		g.fill = msgspec.DefaultFill
	}
	if err := g.setRecipients(spec); err != nil {
		return nil, err
	}
	text := spec.Text
	if text == "" {
		text = msgspec.DefaultText
	}
	var err error
	if g.text, err = msgspec.ParseTemplate(text); err != nil {
		return nil, fmt.Errorf("message text: %w", err)
	}
	if g.notify && spec.ExternalID != "" && spec.ExternalID != "tagged" && spec.ExternalID != "none" {
		if g.extID, err = msgspec.ParseTemplate(spec.ExternalID); err != nil {
			return nil, fmt.Errorf("externalId: %w", err)
		}
	}
	if !g.notify {
		if err := g.setMessaging(spec); err != nil {
			return nil, err
		}
	}
	g.scratch.New = func() any { b := make([]byte, 0, 512); return &b }
	return g, nil
}

func (g *Generator) setRecipients(spec msgspec.Message) error {
	r := spec.Recipients
	switch {
	case r == nil:
		pat := spec.Recipient
		if pat == "" {
			pat = msgspec.DefaultRecipient
		}
		rng, err := msgspec.ParseRecipient(pat)
		if err != nil {
			return fmt.Errorf("message recipient: %w", err)
		}
		g.rc.rng = rng
	case r.CSV != "":
		f, err := os.Open(r.CSV)
		if err != nil {
			return fmt.Errorf("open recipients: %w", err)
		}
		defer f.Close()
		list, err := readRecipientsCSV(f, r.Column)
		if err != nil {
			return fmt.Errorf("read recipients %s: %w", r.CSV, err)
		}
		g.rc.list = list
	default:
		rng, err := msgspec.ParseNumberRange(r.From, r.To)
		if err != nil {
			return fmt.Errorf("message recipients: %w", err)
		}
		g.rc.rng = rng
	}
	g.rc.random = r != nil && r.Order == "random"
	return nil
}

func jsonField(dst []byte, name string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", name, err)
	}
	dst = append(dst, ',')
	dst = jsonesc.Append(dst, name)
	dst = append(dst, ':')
	return append(dst, b...), nil
}

func (g *Generator) setMessaging(spec msgspec.Message) error {
	items := spec.Scenario
	if len(items) == 0 {
		items = []msgspec.Item{{Channel: rundir.ChannelSMS, Sender: msgspec.DefaultSender}}
	}
	for i, it := range items {
		var x item
		x.head = append(x.head, `{"channel":`...)
		x.head = jsonesc.Append(x.head, it.Channel)
		x.head = append(x.head, `,"recipient":{"type":"MSISDN","value":"`...)
		x.mid = append(x.mid, `"},"sender":`...)
		x.mid = jsonesc.Append(x.mid, it.Sender)
		x.mid = append(x.mid, `,"text":"`...)
		if it.Text != "" {
			t, err := msgspec.ParseTemplate(it.Text)
			if err != nil {
				return fmt.Errorf("scenario[%d] text: %w", i, err)
			}
			x.text = t
		}
		x.rest = append(x.rest, '"')
		var err error
		if it.Failover != nil {
			if x.rest, err = jsonField(x.rest, "failover", it.Failover); err != nil {
				return err
			}
		}
		if len(it.Attachments) > 0 {
			if x.rest, err = jsonField(x.rest, "attachments", it.Attachments); err != nil {
				return err
			}
		}
		if len(it.Buttons) > 0 {
			if x.rest, err = jsonField(x.rest, "buttons", it.Buttons); err != nil {
				return err
			}
		}
		if it.MobilePushAction != "" {
			x.rest = append(x.rest, `,"mobilePushAction":`...)
			x.rest = jsonesc.Append(x.rest, it.MobilePushAction)
		}
		if it.MobilePushTitle != "" {
			x.rest = append(x.rest, `,"mobilePushTitle":`...)
			x.rest = jsonesc.Append(x.rest, it.MobilePushTitle)
		}
		x.rest = append(x.rest, '}')
		g.items = append(g.items, x)
		g.channels = append(g.channels, it.Channel)
		l := rundir.Link{Channel: it.Channel}
		if it.Failover != nil {
			l.Until = cmp.Or(it.Failover.ConditionStatus, rundir.StateDelivered)
		}
		g.links = append(g.links, l.String())
	}
	g.chain = strings.Join(g.links, ",")
	var err error
	if spec.Callback != "" {
		g.tail = append(g.tail, `,"callback":`...)
		g.tail = jsonesc.Append(g.tail, spec.Callback)
	}
	if spec.URLOptions != nil {
		if g.tail, err = jsonField(g.tail, "urlOptions", spec.URLOptions); err != nil {
			return err
		}
	}
	if spec.Schedule != nil {
		if g.tail, err = jsonField(g.tail, "schedule", spec.Schedule); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(spec.TrackData))
	for k := range spec.TrackData {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		g.trackExtra = jsonesc.Append(g.trackExtra, k)
		g.trackExtra = append(g.trackExtra, ':')
		g.trackExtra = jsonesc.Append(g.trackExtra, spec.TrackData[k])
		g.trackExtra = append(g.trackExtra, ',')
	}
	if spec.ClientRequestID != "" {
		if g.crid, err = msgspec.ParseTemplate(spec.ClientRequestID); err != nil {
			return fmt.Errorf("clientRequestId: %w", err)
		}
	}
	return nil
}

// Channels returns the messaging channels in order (nil for notify).
func (g *Generator) Channels() []string { return g.channels }

// Chain returns the messaging scenario as the end-of-message rule needs it,
// encoded as rundir.Chain.Strings does (nil for notify).
func (g *Generator) Chain() []string { return g.links }

// renderText appends the sized text of template t.
func (g *Generator) renderText(dst []byte, t *msgspec.Template, v *vars, r *rand.PCG) []byte {
	start := len(dst)
	dst = render(dst, t, v, r)
	switch {
	case g.textBytes > 0:
		dst = sizeBytes(dst, start, g.textBytes, g.fill)
	case g.textParts > 0:
		dst = sizeParts(dst, start, g.textParts, g.fill)
	}
	return dst
}

// Body builds the request body of message seq for client, carrying tag:
//
//   - notify: {"recipient":{"value":…},"notificationText":…,"externalId":tag.ExternalID()};
//   - messaging: the send request with every configured field, and trackData =
//     the scenario's extra keys + tag.TrackData() (the chain is the scenario's).
//
// The same seq, client and tag give the same bytes: retries and probes resend
// exactly what the first attempt sent.
func (g *Generator) Body(seq int64, client string, tag rundir.Tag) ([]byte, Info, error) {
	var r rand.PCG
	r.Seed(g.seed, uint64(seq))
	sp := g.scratch.Get().(*[]byte)
	scratch := (*sp)[:0]
	defer func() { *sp = scratch[:0]; g.scratch.Put(sp) }()

	// recipient first: the text may print it
	scratch = g.rc.appendRecipient(scratch, seq, r.Uint64())
	recipLen := len(scratch)
	v := vars{seq: seq, client: client, run: tag.Run}
	v.recipient = scratch[:recipLen]

	out := make([]byte, 0, g.sizeHint.Load()+64)
	bi := Info{Recipient: string(scratch[:recipLen]), Channels: g.channels}
	if g.notify {
		scratch = g.renderText(scratch, g.text, &v, &r)
		text := scratch[recipLen:]
		bi.TextBytes = len(text)
		out = append(out, `{"recipient":{"value":"`...)
		out = jsonesc.AppendInner(out, bi.Recipient)
		out = append(out, `"},"notificationText":"`...)
		out = jsonesc.AppendInner(out, text)
		switch {
		case g.noExtID:
			out = append(out, `"}`...)
		case g.extID != nil:
			start := len(scratch)
			scratch = render(scratch, g.extID, &v, &r)
			bi.ExternalID = string(scratch[start:])
			out = append(out, `","externalId":"`...)
			out = jsonesc.AppendInner(out, bi.ExternalID)
			out = append(out, `"}`...)
		default:
			bi.ExternalID = tag.ExternalID()
			out = append(out, `","externalId":"`...)
			out = jsonesc.AppendInner(out, bi.ExternalID)
			out = append(out, `"}`...)
		}
	} else {
		out = g.messagingBody(out, &scratch, recipLen, &v, &r, tag, &bi)
	}
	g.sizeHint.Store(int64(len(out)))
	return out, bi, nil
}

func (g *Generator) messagingBody(out []byte, scratch *[]byte, recipLen int, v *vars, r *rand.PCG, tag rundir.Tag, bi *Info) []byte {
	recip := bi.Recipient
	// the message's text, rendered once and shared by the items without their own
	*scratch = g.renderText(*scratch, g.text, v, r)
	mainText := (*scratch)[recipLen:]
	bi.TextBytes = len(mainText)
	out = append(out, `{"scenario":[`...)
	for i := range g.items {
		it := &g.items[i]
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it.head...)
		out = jsonesc.AppendInner(out, recip)
		out = append(out, it.mid...)
		if it.text == nil {
			out = jsonesc.AppendInner(out, mainText)
		} else {
			start := len(*scratch)
			*scratch = g.renderText(*scratch, it.text, v, r)
			mainText = (*scratch)[recipLen : recipLen+bi.TextBytes] // the buffer may have moved
			if i == 0 {
				bi.TextBytes = len(*scratch) - start
			}
			out = jsonesc.AppendInner(out, (*scratch)[start:])
			*scratch = (*scratch)[:start]
		}
		out = append(out, it.rest...)
	}
	out = append(out, ']')
	out = append(out, g.tail...)
	if g.crid != nil {
		start := len(*scratch)
		*scratch = render(*scratch, g.crid, v, r)
		id := (*scratch)[start:]
		if len(id) > maxClientRequestID {
			id = id[:maxClientRequestID]
			for len(id) > 0 && id[len(id)-1]&0xC0 == 0x80 {
				id = id[:len(id)-1]
			}
			if len(id) > 0 && id[len(id)-1] >= 0xC0 {
				id = id[:len(id)-1]
			}
		}
		out = append(out, `,"clientRequestId":"`...)
		out = jsonesc.AppendInner(out, id)
		out = append(out, '"')
	}
	out = append(out, `,"trackData":{`...)
	out = append(out, g.trackExtra...)
	out = append(out, `"`+rundir.TrackRun+`":`...)
	out = jsonesc.Append(out, tag.Run)
	if tag.Part != "" {
		out = append(out, `,"`+rundir.TrackPart+`":`...)
		out = jsonesc.Append(out, tag.Part)
	}
	out = append(out, `,"`+rundir.TrackSeq+`":"`...)
	out = strconv.AppendInt(out, tag.Seq, 10)
	out = append(out, `","`+rundir.TrackSent+`":"`...)
	out = strconv.AppendInt(out, tag.First.UnixNano(), 10)
	out = append(out, '"')
	if g.chain != "" {
		out = append(out, `,"`+rundir.TrackChain+`":`...)
		out = jsonesc.Append(out, g.chain)
	}
	out = append(out, `}}`...)
	return out
}
