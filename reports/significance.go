package reports

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/exp/rand"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/msgload/msgload/rundir"
)

// Samples are the raw latencies of a run, in seconds, sorted ascending: the
// values summary.json's latency percentiles are computed from, and what
// compare's significance test reads.
type Samples struct {
	Request  []float64 // every request: requests.latency
	Delivery []float64 // every accepted message: delivery.latency; +Inf for each censored one (no final status by the deadline), ranked last
}

// Run is a run's summary and, when the run's raw files are at hand, its raw
// latencies (nil when only summary.json could be read: compare then cannot
// test a latency change for significance).
type Run struct {
	*Summary
	Samples *Samples
}

// errNoRawFiles says a directory has no attempts.jsonl to take latencies from.
var errNoRawFiles = errors.New("no raw files")

// ReadSamples reads the raw latencies of the run in dir from its attempts.jsonl
// and events.jsonl, through the same analysis Analyze makes (the joins of
// attempts and callbacks are the report's, so the values are exactly those
// behind summary.json's percentiles).
func ReadSamples(dir string) (*Samples, error) {
	if _, err := os.Stat(filepath.Join(dir, rundir.AttemptsFile)); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errNoRawFiles, dir, err)
	}
	a, err := analyzeKeep(os.DirFS(dir), dir, true) // the raw request latencies
	if err != nil {
		return nil, err
	}
	s := &Samples{Request: a.reqLat.v, Delivery: a.delivery.v}
	slices.Sort(s.Request) // already sorted by the percentiles; cheap when so
	slices.Sort(s.Delivery)
	for range a.delivery.cens {
		s.Delivery = append(s.Delivery, math.Inf(1))
	}
	return s, nil
}

// The significance test: a percentile bootstrap of the change of one
// percentile between two runs.
const (
	// bootstrapReplicates is how many resamples of each run are drawn.
	bootstrapReplicates = 4000
	// bootstrapSeed makes the test repeatable: the same two runs give the same
	// interval, so compare's output is the same every time.
	bootstrapSeed = 14
)

// shiftInterval returns the two-sided confidence interval (conf, e.g. 0.95) of
// the change NEW − BASE of the nearest-rank percentile q (0..100), by the
// percentile bootstrap: each replicate resamples both runs with replacement
// (as many values as each has) and takes the difference of their percentiles.
// base and new are sorted ascending and not empty.
//
// The percentile of a resample is drawn directly rather than by resampling
// all n values: resampling from the sorted values x₁…xₙ is taking x⌈n·U⌉ for
// uniform U, so the k-th smallest of the resample is x⌈n·V⌉ with V the k-th
// smallest of n uniforms, which is Beta(k, n−k+1). That is exact and costs
// one Beta draw per replicate whatever the run's size.
func shiftInterval(base, new []float64, q, conf float64) (lo, hi float64) {
	src := rand.NewSource(bootstrapSeed)
	bd := percentileDraws(base, q, src)
	nd := percentileDraws(new, q, src)
	d := make([]float64, bootstrapReplicates)
	for i := range d {
		d[i] = change(bd[i], nd[i])
	}
	slices.Sort(d)
	alpha := (1 - conf) / 2
	li := int(math.Floor(alpha * bootstrapReplicates))
	hi_ := int(math.Ceil((1-alpha)*bootstrapReplicates)) - 1
	li = min(max(li, 0), bootstrapReplicates-1)
	hi_ = min(max(hi_, 0), bootstrapReplicates-1)
	return d[li], d[hi_]
}

// change is NEW − BASE of one replicate; a censored value (+Inf: no final
// status) ranks after every value, so two censored ones are no change and a
// censored one against a value is an unbounded change (±Inf), never NaN.
func change(b, n float64) float64 {
	if math.IsInf(b, 1) && math.IsInf(n, 1) {
		return 0
	}
	return n - b
}

// percentileDraws returns bootstrapReplicates draws of the nearest-rank
// percentile q of a resample of sorted.
func percentileDraws(sorted []float64, q float64, src rand.Source) []float64 {
	n := len(sorted)
	k := rank(q, n)
	b := distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1), Src: src}
	out := make([]float64, bootstrapReplicates)
	for i := range out {
		j := int(math.Ceil(b.Rand()*float64(n))) - 1
		out[i] = sorted[min(max(j, 0), n-1)]
	}
	return out
}
