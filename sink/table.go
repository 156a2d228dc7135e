package sink

import "slices"

// The correlation table's older messages (issue 23: a run of a million
// messages with callbacks held ~70 MB of map). Most messages end in one of
// few states (DELIVERED on sms, terminal, no fault), so a generation keeps
// each message as its key hash and the index of its state in the table's
// dictionary of distinct states: 9 bytes a message. A later arrival of a
// frozen message (a duplicate, a reply) finds it by binary search and
// changes its state in place; nothing is approximated — the same 64-bit
// hashes, the same states as the map held.

// genSize is how many new messages make a generation: the map stays about
// this size, and a freeze sorts this many hashes. Go's map holds ~80 bytes a
// message at most (its groups are split at 7/8 full, so they are half empty
// after a split): 1.3 MB at 16,384 messages. At 65,536 (before) the map held
// 5.2 MB, and it got there only after ~57 s of a 1,000/s run with callbacks,
// when its groups split: the run's live heap went 6 → 9 MB and its RSS about
// twice that, so a 10-minute run looked 19 bytes a message bigger than a
// 1-minute one (issue 23). More generations cost a first arrival one more
// filter word each (BenchmarkMemory at the 1,048,576 cap, 64 generations
// instead of 16: 5 % more time a callback, peak live heap 6.5 → 2.9 MiB).
const genSize = 1 << 14

// genLen is the generation size for a table of max messages: small enough
// that forgetting the oldest generation keeps most of a small table.
func genLen(limit int) int {
	return min(genSize, max(limit/4, 1))
}

// generation is a frozen part of the table: its hashes sorted, each with the
// index of its state in the table's stateDict, or stateOver when the
// dictionary was full (the state is then in over). Once spilled (spill.go)
// keys and state are nil and disk says where they are.
type generation struct {
	keys  []uint64
	state []uint8
	over  map[uint64]msgState
	n     int      // its messages
	disk  *spilled // nil while in memory
	// tagged is how many of its messages came with a tag, and sent when
	// their tags say they were first sent (a spilled generation is looked
	// up for a tagged message by the millisecond it was sent, for an
	// untagged one by its filter of the untagged keys).
	tagged int
	sent   sentRanges
}

// stateOver marks a generation's message whose state is in its over map.
const stateOver = 255

// stateDict numbers the distinct states of frozen messages, up to stateOver.
type stateDict struct {
	states []msgState
	idx    map[msgState]uint8
}

// id is st's number, false when the dictionary is full and st not in it.
func (d *stateDict) id(st msgState) (uint8, bool) {
	if i, ok := d.idx[st]; ok {
		return i, true
	}
	if len(d.states) >= stateOver {
		return 0, false
	}
	if d.idx == nil {
		d.idx = map[msgState]uint8{}
	}
	i := uint8(len(d.states))
	d.states = append(d.states, st)
	d.idx[st] = i
	return i, true
}

// slot is where a message's state is: in the map (g nil) or at i of g.
type slot struct {
	g *generation
	i int
}

// find returns the state of hash h and where it is; call with mu held. sent
// is the millisecond the call's tag says the message was first sent (0:
// untagged), which picks the spilled generations it may be in.
func (t *table) find(h uint64, sent int64) (msgState, slot, bool) {
	if e, ok := t.m[h]; ok {
		return e.st, slot{}, true
	}
	for j := len(t.gens) - 1; j >= 0; j-- {
		g := t.gens[j]
		if i, id, ok := t.findIn(j, h, sent); ok {
			if id == stateOver {
				return g.over[h], slot{g, i}, true
			}
			return t.dict.states[id], slot{g, i}, true
		}
	}
	return msgState{}, slot{}, false
}

// findIn looks hash h up in generation j: its index there and state number.
// A spilled generation is read only when h may be there (spill.go: the
// millisecond a tagged message was sent is in its tagged messages' ranges, or the
// filter of its untagged keys lets h through, or the call is untagged and it
// has tagged messages). One that cannot be read is forgotten (counted as
// evicted: a later event of its messages is a first arrival, as past the cap).
func (t *table) findIn(j int, h uint64, sent int64) (int, uint8, bool) {
	g := t.gens[j]
	if g.disk == nil {
		i, ok := slices.BinarySearch(g.keys, h)
		if !ok {
			return 0, 0, false
		}
		return i, g.state[i], true
	}
	if t.spill == nil {
		return 0, 0, false // closed
	}
	tagged := g.tagged > 0 && (sent == 0 || g.sent.has(sent))
	if !tagged && !g.disk.filter.has(h) {
		return 0, 0, false
	}
	i, id, ok, err := t.spill.find(g.disk, g.n, h)
	if err != nil {
		t.forget(j)
		return 0, 0, false
	}
	return i, id, ok
}

// store puts st back where find found hash h; call with mu held.
func (t *table) store(h uint64, at slot, st msgState) {
	if at.g == nil {
		e := t.m[h]
		e.st = st
		t.m[h] = e
		return
	}
	id := at.g.set(h, st, &t.dict)
	if at.g.disk == nil {
		at.g.state[at.i] = id
		return
	}
	if t.spill == nil {
		return // closed
	}
	if err := t.spill.setState(at.g.disk, at.i, id); err != nil {
		t.forget(slices.Index(t.gens, at.g))
	}
}

// set keeps st, the new state of hash h, in over when the dictionary is full,
// and returns its state number.
func (g *generation) set(h uint64, st msgState, d *stateDict) uint8 {
	if id, ok := d.id(st); ok {
		delete(g.over, h)
		return id
	}
	if g.over == nil {
		g.over = map[uint64]msgState{}
	}
	g.over[h] = st
	return stateOver
}

// admit freezes the map once it holds a generation, and forgets the oldest
// generations past max messages; it returns how many it forgot. Call with
// mu held.
func (t *table) admit() int {
	if len(t.m) >= t.gen {
		t.freeze()
	}
	forgot := 0
	for t.n > t.max && len(t.gens) > 0 {
		forgot += t.forget(0)
	}
	return forgot
}

// forget drops generation j (its region of the spill file is reused) and
// returns how many messages went with it.
func (t *table) forget(j int) int {
	if j < 0 {
		return 0
	}
	g := t.gens[j]
	if g.disk != nil && t.spill != nil {
		t.spill.give(g.disk.off, regionSize(g.n))
	}
	t.gens = slices.Delete(t.gens, j, j+1)
	t.n -= g.n
	t.evicted += uint64(g.n)
	return g.n
}

// freeze makes the map's messages a generation and empties the map.
func (t *table) freeze() {
	g := &generation{keys: make([]uint64, 0, len(t.m)), state: make([]uint8, len(t.m)), n: len(t.m)}
	var sent []int64
	for h, e := range t.m {
		g.keys = append(g.keys, h)
		if e.sent != 0 {
			sent = append(sent, e.sent)
		}
	}
	slices.Sort(g.keys)
	var untagged []uint64
	for i, h := range g.keys {
		e := t.m[h]
		g.state[i] = g.set(h, e.st, &t.dict)
		if e.sent == 0 {
			untagged = append(untagged, h)
		}
	}
	g.tagged, g.sent = len(sent), newSentRanges(sent, len(t.m))
	t.spillGen(g, untagged)
	t.gens = append(t.gens, g)
	clear(t.m)
}

// spillGen moves a frozen generation's hashes and states to the spill file;
// when the file cannot be opened or written it stays in memory, as before.
func (t *table) spillGen(g *generation, untagged []uint64) {
	if t.spill == nil && !t.noSpill {
		sf, err := openSpill(t.spillDir)
		t.spill, t.noSpill = sf, err != nil
	}
	if t.spill == nil {
		return
	}
	sp, err := t.spill.write(g.keys, g.state, untagged)
	if err != nil {
		return
	}
	g.disk, g.keys, g.state = sp, nil, nil
}

// close closes the spill file; spilled messages are then not found (only
// calls the closed sink refuses look them up).
func (t *table) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.spill != nil {
		t.spill.f.Close()
		t.spill = nil
	}
	t.noSpill = true
}

// frozenBytes is what the generations hold in memory (tests: issue 23's
// count of what grows with the messages).
func (t *table) frozenBytes() int {
	b := 0
	for _, g := range t.gens {
		b += 8*len(g.keys) + len(g.state) + 40*len(g.over) + 16*len(g.sent)
		if g.disk != nil {
			b += 8 * (len(g.disk.fences) + len(g.disk.filter))
		}
	}
	return b
}

// sentGap is the widest gap (ms) between two first sends of a generation's
// tagged messages closed into one range (sentRanges), at first: a
// generation is read for a time in a gap (a lookup more), never skipped for
// one of its own.
const sentGap = 1000

// sentRanges are when a generation's tagged messages were first sent (unix
// ms), as sorted, disjoint ranges [lo, hi]: at 1,000 messages a second a
// generation's are a range of ~16 s and the few sent long before (a
// callback minutes late), some bytes where the filter of its keys was 1.5
// a message (issue 23: the run's memory grew by it until the table's cap).
// A generation sent so sparsely that its ranges would pass a byte for four
// messages has its gaps closed wider until they do not.
type sentRanges [][2]int64

func newSentRanges(sent []int64, n int) sentRanges {
	slices.Sort(sent)
	most := max(16, n/64)
	for gap := int64(sentGap); ; gap *= 4 {
		var r sentRanges
		for _, x := range sent {
			if k := len(r); k > 0 && x <= r[k-1][1]+gap {
				r[k-1][1] = max(r[k-1][1], x)
				continue
			}
			if len(r) == most {
				break // wider gaps
			}
			r = append(r, [2]int64{x, x})
		}
		if len(r) < most || len(sent) == 0 || r[len(r)-1][1] == sent[len(sent)-1] {
			return slices.Clip(r)
		}
	}
}

// has says whether x is in one of the ranges.
func (r sentRanges) has(x int64) bool {
	i, _ := slices.BinarySearchFunc(r, x, func(e [2]int64, x int64) int {
		switch {
		case e[1] < x:
			return -1
		case e[0] > x:
			return 1
		}
		return 0
	})
	return i < len(r) && r[i][0] <= x && x <= r[i][1]
}
