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
// this size (a few MB), and a freeze sorts this many hashes.
const genSize = 1 << 16

// genLen is the generation size for a table of max messages: small enough
// that forgetting the oldest generation keeps most of a small table.
func genLen(limit int) int {
	return min(genSize, max(limit/4, 1))
}

// generation is a frozen part of the table: its hashes sorted, each with the
// index of its state in the table's stateDict, or stateOver when the
// dictionary was full (the state is then in over).
type generation struct {
	keys  []uint64
	state []uint8
	over  map[uint64]msgState
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

// find returns the state of hash h and where it is; call with mu held.
func (t *table) find(h uint64) (msgState, slot, bool) {
	if st, ok := t.m[h]; ok {
		return st, slot{}, true
	}
	for j := len(t.gens) - 1; j >= 0; j-- {
		g := t.gens[j]
		if i, ok := slices.BinarySearch(g.keys, h); ok {
			if g.state[i] == stateOver {
				return g.over[h], slot{g, i}, true
			}
			return t.dict.states[g.state[i]], slot{g, i}, true
		}
	}
	return msgState{}, slot{}, false
}

// store puts st back where find found hash h; call with mu held.
func (t *table) store(h uint64, at slot, st msgState) {
	if at.g == nil {
		t.m[h] = st
		return
	}
	at.g.set(at.i, st, &t.dict)
}

// set gives the message at i the state st.
func (g *generation) set(i int, st msgState, d *stateDict) {
	if id, ok := d.id(st); ok {
		g.state[i] = id
		delete(g.over, g.keys[i])
		return
	}
	g.state[i] = stateOver
	if g.over == nil {
		g.over = map[uint64]msgState{}
	}
	g.over[g.keys[i]] = st
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
		n := len(t.gens[0].keys)
		t.gens[0] = nil
		t.gens = t.gens[1:]
		t.n -= n
		forgot += n
	}
	t.evicted += uint64(forgot)
	return forgot
}

// freeze makes the map's messages a generation and empties the map.
func (t *table) freeze() {
	g := &generation{keys: make([]uint64, 0, len(t.m)), state: make([]uint8, len(t.m))}
	for h := range t.m {
		g.keys = append(g.keys, h)
	}
	slices.Sort(g.keys)
	for i, h := range g.keys {
		g.set(i, t.m[h], &t.dict)
	}
	t.gens = append(t.gens, g)
	clear(t.m)
}
