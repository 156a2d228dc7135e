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
		if i, id, ok := t.findIn(j, h); ok {
			if id == stateOver {
				return g.over[h], slot{g, i}, true
			}
			return t.dict.states[id], slot{g, i}, true
		}
	}
	return msgState{}, slot{}, false
}

// findIn looks hash h up in generation j: its index there and state number.
// A spilled generation that cannot be read is forgotten (counted as evicted:
// a later event of its messages is a first arrival, as past the cap).
func (t *table) findIn(j int, h uint64) (int, uint8, bool) {
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
		t.m[h] = st
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
	for h := range t.m {
		g.keys = append(g.keys, h)
	}
	slices.Sort(g.keys)
	for i, h := range g.keys {
		g.state[i] = g.set(h, t.m[h], &t.dict)
	}
	t.spillGen(g)
	t.gens = append(t.gens, g)
	clear(t.m)
}

// spillGen moves a frozen generation's hashes and states to the spill file;
// when the file cannot be opened or written it stays in memory, as before.
func (t *table) spillGen(g *generation) {
	if t.spill == nil && !t.noSpill {
		sf, err := openSpill(t.spillDir)
		t.spill, t.noSpill = sf, err != nil
	}
	if t.spill == nil {
		return
	}
	sp, err := t.spill.write(g.keys, g.state)
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
		b += 8*len(g.keys) + len(g.state) + 40*len(g.over)
		if g.disk != nil {
			b += 8 * (len(g.disk.fences) + len(g.disk.filter))
		}
	}
	return b
}
