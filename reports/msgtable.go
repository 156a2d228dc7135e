package reports

// msgTable holds the per-message state of a run by sequence. The sequences of
// a run (and of a merge of its shards) are 1, 2, 3…: they are kept in pages
// of msgPage messages indexed by sequence, 32 bytes a message, where a map
// with a pointer to each message took about twice that. A sequence beyond
// twice the messages held (plus a few pages) goes to a map instead — a
// shard's, which step by the shard count, or an odd file's — so pages are at
// least half full and a sparse run costs what a map costs.
type msgTable struct {
	pages []*[msgPage]msg
	over  map[int64]*msg
	slab  slab[msg] // the messages of over
	n     int       // messages held
}

const msgPage = 1024

// get returns the message of seq, nil when none was added.
func (t *msgTable) get(seq int64) *msg {
	if k := seq - 1; seq > 0 && k/msgPage < int64(len(t.pages)) {
		if p := t.pages[k/msgPage]; p != nil && p[k%msgPage].held {
			return &p[k%msgPage]
		}
	}
	return t.over[seq]
}

// add returns the message of seq (seq > 0), made empty if none was added.
func (t *msgTable) add(seq int64) *msg {
	if m := t.get(seq); m != nil {
		return m
	}
	var m *msg
	if k := seq - 1; k < 2*int64(t.n)+4*msgPage {
		i := int(k / msgPage)
		if i >= len(t.pages) {
			t.pages = append(t.pages, make([]*[msgPage]msg, i+1-len(t.pages))...)
		}
		if t.pages[i] == nil {
			t.pages[i] = new([msgPage]msg)
		}
		m = &t.pages[i][k%msgPage]
	} else {
		if t.over == nil {
			t.over = map[int64]*msg{}
		}
		m = t.slab.new()
		t.over[seq] = m
	}
	m.held = true
	t.n++
	return m
}

// each calls f with every message held.
func (t *msgTable) each(f func(seq int64, m *msg)) {
	for i, p := range t.pages {
		for j := 0; p != nil && j < msgPage; j++ {
			if p[j].held {
				f(int64(i)*msgPage+int64(j)+1, &p[j])
			}
		}
	}
	for seq, m := range t.over {
		f(seq, m)
	}
}
