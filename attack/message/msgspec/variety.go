package msgspec

import "math"

// The vocabularies of the template's random actions ({{words N}},
// {{cyrillic N}}, {{emoji N}}): the generator draws from them, and Variety
// counts them.
var (
	Words = []string{"alpha", "bravo", "delta", "order", "ready", "code", "parcel", "status",
		"delivery", "today", "payment", "account", "confirm", "your", "the", "is", "at", "from",
		"tomorrow", "window", "courier", "track", "update", "receipt", "balance", "card", "shop", "call",
		"thanks", "reply", "stop", "help"}
	CyrillicWords = []string{"заказ", "доставка", "код", "статус", "сегодня", "оплата", "счёт",
		"подтвердите", "ваш", "курьер", "посылка", "спасибо", "баланс", "карта", "магазин", "ответ"}
	Emojis = []string{"😀", "🚚", "📦", "✅", "🔔", "💳", "🎉", "👍"}
)

// Variety is how many different texts a template renders for one client
// (.Client and .Run are the same for all its messages).
type Variety struct {
	// Cycle is the number of messages after which the parts that follow the
	// sequence repeat: +Inf with {{.Seq}}, the recipients' count with
	// {{.Recipient}} in sequential order, 1 when nothing follows it.
	Cycle float64
	// Random is the number of equally likely values of the random parts
	// ({{digits N}}: 10^N; a recipient in random order: their count).
	Random float64
}

// Variety counts the texts t renders. recipients is the number of
// recipients (0: not known, as for a CSV file not read yet: the recipient is
// then taken to never repeat) and randomOrder whether they are drawn at random.
func (t *Template) Variety(recipients uint64, randomOrder bool) Variety {
	v := Variety{Cycle: 1, Random: 1}
	recipient := false
	for _, s := range t.segs {
		switch s.Kind {
		case SegSeq:
			v.Cycle = math.Inf(1)
		case SegRecipient:
			recipient = true
		case SegDigits:
			v.Random *= math.Pow(10, float64(s.N))
		case SegWords:
			v.Random *= math.Pow(float64(len(Words)), float64(s.N))
		case SegCyrillic:
			v.Random *= math.Pow(float64(len(CyrillicWords)), float64(s.N))
		case SegEmoji:
			v.Random *= math.Pow(float64(len(Emojis)), float64(s.N))
		}
	}
	switch {
	case !recipient:
	case recipients == 0:
		v.Cycle = math.Inf(1)
	case randomOrder:
		v.Random *= float64(recipients)
	default:
		v.Cycle = max(v.Cycle, float64(recipients))
	}
	return v
}

// Distinct is the number of different texts: Cycle × Random.
func (v Variety) Distinct() float64 { return v.Cycle * v.Random }

// CollisionChance is the chance that two of n messages of one client render
// the same text: messages a multiple of Cycle apart share the sequence part,
// and then collide when their random parts are drawn the same.
func (v Variety) CollisionChance(n int64) float64 {
	if n < 2 || math.IsInf(v.Cycle, 1) {
		return 0
	}
	// pairs of messages in the same class of the cycle
	q, r := math.Floor(float64(n)/v.Cycle), math.Mod(float64(n), v.Cycle)
	pairs := r*(q+1)*q/2 + (v.Cycle-r)*q*(q-1)/2
	switch {
	case pairs == 0:
		return 0
	case v.Random <= 1 || v.Distinct() < float64(n):
		return 1 // nothing random to tell them apart, or more messages than texts
	}
	// the birthday bound: each pair alike with chance 1/Random
	return -math.Expm1(-pairs / v.Random)
}
