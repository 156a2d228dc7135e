package message

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/msgload/msgload/attack/message/msgspec"
)

// vars are the values a template can print.
type vars struct {
	seq       int64
	client    string
	recipient []byte
	run       string
}

// render appends the template to dst.
func render(dst []byte, t *msgspec.Template, v *vars, r *rand.PCG) []byte {
	for _, s := range t.Segments() {
		switch s.Kind {
		case msgspec.SegLit:
			dst = append(dst, s.Lit...)
		case msgspec.SegSeq:
			dst = strconv.AppendInt(dst, v.seq, 10)
		case msgspec.SegClient:
			dst = append(dst, v.client...)
		case msgspec.SegRecipient:
			dst = append(dst, v.recipient...)
		case msgspec.SegRun:
			dst = append(dst, v.run...)
		case msgspec.SegWords:
			dst = appendWords(dst, msgspec.Words, s.N, r)
		case msgspec.SegCyrillic:
			dst = appendWords(dst, msgspec.CyrillicWords, s.N, r)
		case msgspec.SegEmoji:
			for range s.N {
				dst = append(dst, msgspec.Emojis[r.Uint64()%uint64(len(msgspec.Emojis))]...)
			}
		case msgspec.SegDigits:
			for range s.N {
				dst = append(dst, byte('0'+r.Uint64()%10))
			}
		}
	}
	return dst
}

func appendWords(dst []byte, words []string, n int, r *rand.PCG) []byte {
	for i := range n {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, words[r.Uint64()%uint64(len(words))]...)
	}
	return dst
}

// fillUnit is the character a fill pads with, by fill name.
func fillUnit(fill string) string {
	switch fill {
	case "cyrillic":
		return "ж"
	case "emoji":
		return "😀"
	}
	return "x"
}

// fill blocks: 64 fill characters, appended at once when padding far.
var (
	blockASCII    = strings.Repeat("x", 64)
	blockCyrillic = strings.Repeat("ж", 64)
	blockEmoji    = strings.Repeat("😀", 64)
)

func fillBlock(fill string) string {
	switch fill {
	case "cyrillic":
		return blockCyrillic
	case "emoji":
		return blockEmoji
	}
	return blockASCII
}

// sizeBytes pads text (appended at dst[start:]) with fill up to n bytes, or cuts
// it at a rune boundary; what padding cannot fill with whole fill characters is
// filled with ASCII '.' so the size is exact.
func sizeBytes(dst []byte, start, n int, fill string) []byte {
	text := dst[start:]
	if len(text) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		dst = dst[:start+cut]
	}
	u := fillUnit(fill)
	block := fillBlock(fill)
	for len(dst)-start+len(block) <= n {
		dst = append(dst, block...)
	}
	for len(dst)-start+len(u) <= n {
		dst = append(dst, u...)
	}
	for len(dst)-start < n {
		dst = append(dst, '.')
	}
	return dst
}

// ucs2Units counts UTF-16 code units (what SMS UCS-2 parts count) and whether
// the text fits the GSM 7-bit alphabet (approximated as ASCII).
func ucs2Units(b []byte) (units int, ascii bool) {
	ascii = true
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r >= utf8.RuneSelf {
			ascii = false
		}
		if r > 0xFFFF {
			units += 2
		} else {
			units++
		}
	}
	return units, ascii
}

// partChars is the number of characters n SMS parts carry: 160 (GSM) or 70
// (UCS-2) for one part, 153 or 67 per part when concatenated.
func partChars(n int, gsm bool) int {
	switch {
	case n <= 0:
		return 0
	case gsm && n == 1:
		return 160
	case gsm:
		return 153 * n
	case n == 1:
		return 70
	default:
		return 67 * n
	}
}

// sizeParts pads the text at dst[start:] with fill so it fills n SMS parts
// exactly (in characters of its encoding), or cuts it to that size.
func sizeParts(dst []byte, start, n int, fill string) []byte {
	u := fillUnit(fill)
	_, ascii := ucs2Units(dst[start:])
	gsm := ascii && fill == "ascii"
	want := partChars(n, gsm)
	units, _ := ucs2Units(dst[start:])
	// cut whole runes until it fits
	for units > want {
		_, size := utf8.DecodeLastRune(dst[start:])
		r, _ := utf8.DecodeLastRune(dst[start:])
		dst = dst[:len(dst)-size]
		if r > 0xFFFF {
			units -= 2
		} else {
			units--
		}
	}
	uUnits := 1
	if fill == "emoji" {
		uUnits = 2
	}
	block := fillBlock(fill)
	for units+64*uUnits <= want {
		dst = append(dst, block...)
		units += 64 * uUnits
	}
	for units+uUnits <= want {
		dst = append(dst, u...)
		units += uUnits
	}
	for units < want {
		dst = append(dst, '.')
		units++
	}
	return dst
}
