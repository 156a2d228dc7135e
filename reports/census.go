package reports

import "slices"

// seqCensus counts the records of each sequence up to more, in bits bits a
// sequence: 2 (none, one, two, three or more) in a run with delivery none,
// 4 (up to 15) in a run with callbacks, where a message has a record for
// each, 1 for the carried analysis's messages settled; in pages of
// censusPage sequences made as sequences land in them.
//
// Nearly every sequence of a page ends with the same count (one send; a
// send and its callback; settled), so a page the reading has left behind
// is kept sparse: that count, and the offsets of the few sequences whose
// count is another, by count. A dense page of 4 bits is 8 KB, 72 KB a
// minute at 5,000/s, 2.25 MB a run-hour of the carried analysis's bit and
// 4.5 MB an hour of the delivery-none census (issue 23: what is remembered
// for the whole run kept compactly); sparse, a page is two bytes an odd
// sequence. A page is made sparse when a later page becomes dense (the
// reading moved on: censusBehind pages back) and at the end of a reading
// (compact), when its odd sequences take at most half its dense bytes
// (worth); a page that gets more odd sequences than that is dense again.
// The counts are the same either way (TestCensusSparseIsDense).
type seqCensus struct {
	pages map[int64]*censusSheet
	bits  uint
	// dense are the pages dense now, in the order they became so.
	dense []int64
	// replies: events.jsonl has incoming replies to this run's messages,
	// joined to them by sequence at the end (joinReplies).
	replies bool
}

const censusPage = 1 << 14

// censusBehind is how many pages behind the newest dense one a dense page
// is made sparse: the reading of a file in time order still adds to the
// page before (a retry, a callback seconds after its send).
const censusBehind = 2

// censusSheet is a page of a census: dense (b) or sparse (fill, odd).
type censusSheet struct {
	b    []byte     // dense: bits bits a sequence; nil when sparse
	fill uint8      // sparse: the count of every sequence not in odd
	odd  [][]uint16 // sparse: by count, the sorted offsets of the sequences with that count
	n    int        // sparse: the offsets in odd
}

// newCensus is a census of bits bits a sequence.
func newCensus(bits uint) *seqCensus {
	return &seqCensus{pages: map[int64]*censusSheet{}, bits: bits}
}

// more is the count that means this many records or more: the message is
// settled once every record is read.
func (c *seqCensus) more() int { return 1<<c.bits - 1 }

// denseBytes is a dense page's size.
func (c *seqCensus) denseBytes() int { return censusPage * int(c.bits) / 8 }

// worth says whether a page of odd sequences of another count than most is
// kept sparse: in at most half its dense bytes.
func (c *seqCensus) worth(odd int) bool { return 2*odd <= c.denseBytes()/2 }

func (c *seqCensus) add(seq int64) {
	k, i := seq/censusPage, int(seq%censusPage)
	p := c.pages[k]
	if p == nil {
		p = &censusSheet{b: make([]byte, c.denseBytes())}
		c.pages[k] = p
		c.becameDense(k)
	}
	if p.b == nil {
		n := p.get(i)
		if n == c.more() {
			return
		}
		p.set(i, n, n+1)
		if !c.worth(p.n) {
			c.densify(p)
			c.becameDense(k)
		}
		return
	}
	per := 8 / int(c.bits)
	b, sh := &p.b[i/per], c.bits*uint(i%per)
	if n := int(*b >> sh & byte(c.more())); n < c.more() {
		*b += 1 << sh
	}
}

// get is how many records seq has, more() for that many or more.
func (c *seqCensus) get(seq int64) int {
	p := c.pages[seq/censusPage]
	if p == nil {
		return 0
	}
	i := int(seq % censusPage)
	if p.b == nil {
		return p.get(i)
	}
	per := 8 / int(c.bits)
	return int(p.b[i/per] >> (c.bits * uint(i%per)) & byte(c.more()))
}

// becameDense notes that page k is dense now, and makes those that became
// dense before it, censusBehind pages and more behind it, sparse when they
// are worth it; each is looked at once (a page that is not worth it stays
// dense until compact, or until it is made dense again).
func (c *seqCensus) becameDense(k int64) {
	c.dense = slices.DeleteFunc(c.dense, func(j int64) bool {
		if j > k-censusBehind {
			return false
		}
		c.sparsen(c.pages[j])
		return true
	})
	c.dense = append(c.dense, k)
}

// compact makes every dense page sparse that is worth it: at the end of a
// reading, before the passes that only get.
func (c *seqCensus) compact() {
	for _, p := range c.pages {
		if p.b != nil {
			c.sparsen(p)
		}
	}
	c.dense = c.dense[:0]
}

// sparsen makes dense page p sparse when it is worth it, and says whether
// it did.
func (c *seqCensus) sparsen(p *censusSheet) bool {
	var hist [16]int
	per, mask := 8/int(c.bits), byte(c.more())
	for i := range censusPage {
		hist[int(p.b[i/per]>>(c.bits*uint(i%per))&mask)]++
	}
	fill := 0
	for n, h := range hist[:c.more()+1] {
		if h > hist[fill] {
			fill = n
		}
	}
	odd := censusPage - hist[fill]
	if !c.worth(odd) {
		return false
	}
	sp := censusSheet{fill: uint8(fill), n: odd}
	if odd > 0 {
		sp.odd = make([][]uint16, c.more()+1)
		for n, h := range hist[:c.more()+1] {
			if n != fill && h > 0 {
				sp.odd[n] = make([]uint16, 0, h)
			}
		}
		for i := range censusPage {
			if n := int(p.b[i/per] >> (c.bits * uint(i%per)) & mask); n != fill {
				sp.odd[n] = append(sp.odd[n], uint16(i))
			}
		}
	}
	*p = sp
	return true
}

// densify makes sparse page p dense.
func (c *seqCensus) densify(p *censusSheet) {
	b := make([]byte, c.denseBytes())
	per := 8 / int(c.bits)
	if p.fill != 0 {
		var pat byte
		for s := range per {
			pat |= p.fill << (c.bits * uint(s))
		}
		for i := range b {
			b[i] = pat
		}
	}
	for n, offs := range p.odd {
		for _, i := range offs {
			sh := c.bits * uint(int(i)%per)
			b[int(i)/per] = b[int(i)/per]&^(byte(c.more())<<sh) | byte(n)<<sh
		}
	}
	*p = censusSheet{b: b}
}

// get is the count of offset i of a sparse page.
func (p *censusSheet) get(i int) int {
	for n, offs := range p.odd {
		if _, ok := slices.BinarySearch(offs, uint16(i)); ok {
			return n
		}
	}
	return int(p.fill)
}

// set moves offset i of a sparse page from count from to count to.
func (p *censusSheet) set(i, from, to int) {
	if from != int(p.fill) {
		j, _ := slices.BinarySearch(p.odd[from], uint16(i))
		p.odd[from] = slices.Delete(p.odd[from], j, j+1)
		p.n--
	}
	if to != int(p.fill) {
		if len(p.odd) <= to {
			p.odd = append(p.odd, make([][]uint16, to+1-len(p.odd))...)
		}
		j, _ := slices.BinarySearch(p.odd[to], uint16(i))
		p.odd[to] = slices.Insert(p.odd[to], j, uint16(i))
		p.n++
	}
}
