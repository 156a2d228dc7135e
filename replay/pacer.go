package replay

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Pacer is a vegeta.Pacer that sends hit i at offset_i / speed from the start of
// the attack. When it falls behind (a burst of hits at one offset, a slow worker
// pool) it sends at once until it has caught up, and it keeps how late each hit
// left so the run can report it.
//
// vegeta's attacker calls Pace(elapsed, hits) before each hit, with hits the
// number already sent; the call for hit k+1 happens right after hit k was handed
// to a worker, so its elapsed is when hit k really left.
type Pacer struct {
	due []time.Duration // scaled offsets, sorted

	mu   sync.Mutex
	late []time.Duration // late[i]: actual - intended for hit i, once known
	seen []bool
}

var _ vegeta.Pacer = (*Pacer)(nil)

// newPacer returns a pacer for reqs (sorted by offset, as the readers return
// them) at speed (2 = twice as fast as recorded).
func newPacer(reqs []Request, speed float64) (*Pacer, error) {
	offs := make([]time.Duration, len(reqs))
	for i, r := range reqs {
		offs[i] = r.Offset
	}
	return newPacerOffsets(offs, speed)
}

// newPacerOffsets is newPacer from bare offsets. Unsorted offsets are sorted.
func newPacerOffsets(offsets []time.Duration, speed float64) (*Pacer, error) {
	if !(speed > 0) || math.IsInf(speed, 0) {
		return nil, fmt.Errorf("speed %v: %w", speed, ErrBadSpeed)
	}
	due := make([]time.Duration, len(offsets))
	for i, o := range offsets {
		if o < 0 {
			o = 0
		}
		due[i] = time.Duration(float64(o) / speed)
	}
	slices.Sort(due)
	return &Pacer{due: due, late: make([]time.Duration, len(due)), seen: make([]bool, len(due))}, nil
}

// Len is the number of hits the pacer sends.
func (p *Pacer) Len() int { return len(p.due) }

// Intended is when hit i is planned, from the start of the attack.
func (p *Pacer) Intended(i int) time.Duration { return p.due[i] }

// Duration is the planned length of the attack: the offset of the last hit.
func (p *Pacer) Duration() time.Duration {
	if len(p.due) == 0 {
		return 0
	}
	return p.due[len(p.due)-1]
}

// Pace implements vegeta.Pacer.
func (p *Pacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if hits > 0 && hits <= uint64(len(p.due)) {
		p.observe(int(hits-1), elapsed)
	}
	if hits >= uint64(len(p.due)) {
		return 0, true
	}
	if d := p.due[hits]; d > elapsed {
		return d - elapsed, false
	}
	return 0, false
}

// observe records that hit i left at elapsed (the first report wins).
func (p *Pacer) observe(i int, elapsed time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen[i] {
		return
	}
	p.seen[i] = true
	p.late[i] = max(elapsed-p.due[i], 0)
}

// Rate implements vegeta.Pacer: the planned hits in the second around elapsed.
func (p *Pacer) Rate(elapsed time.Duration) float64 {
	lo := sort.Search(len(p.due), func(i int) bool { return p.due[i] >= elapsed-500*time.Millisecond })
	hi := sort.Search(len(p.due), func(i int) bool { return p.due[i] > elapsed+500*time.Millisecond })
	return float64(hi - lo)
}

// Lateness summarises how late the hits left against their planned offsets.
type Lateness struct {
	Hits   int           `json:"hits"`    // hits whose send time is known
	Late   int           `json:"late"`    // hits more than lateThreshold behind plan
	P50    time.Duration `json:"p50_ns"`  //
	P99    time.Duration `json:"p99_ns"`  //
	Max    time.Duration `json:"max_ns"`  //
	MaxHit int           `json:"max_hit"` // index of the latest hit
}

// lateThreshold is how far behind plan a hit must be to count as late.
const lateThreshold = 10 * time.Millisecond

// Lateness returns how late the hits sent so far left.
func (p *Pacer) Lateness() Lateness {
	p.mu.Lock()
	defer p.mu.Unlock()
	var l Lateness
	var xs []time.Duration
	for i, ok := range p.seen {
		if !ok {
			continue
		}
		d := p.late[i]
		xs = append(xs, d)
		if d > lateThreshold {
			l.Late++
		}
		if d > l.Max {
			l.Max, l.MaxHit = d, i
		}
	}
	l.Hits = len(xs)
	if len(xs) > 0 {
		slices.Sort(xs)
		l.P50 = quantile(xs, 0.50)
		l.P99 = quantile(xs, 0.99)
	}
	return l
}

// quantile of sorted xs, nearest rank.
func quantile(xs []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	i = min(max(i, 0), len(xs)-1)
	return xs[i]
}
