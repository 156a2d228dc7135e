package reports

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// hist is an HDR histogram of durations in microseconds, from 1µs to 1 day.
type hist struct{ h *hdrhistogram.Histogram }

const histMax = int64(24 * 3600 * 1e6)

func newHist() *hist { return &hist{h: hdrhistogram.New(1, histMax, 3)} }

// observe records a duration in seconds; negative values record as 0.
func (h *hist) observe(sec float64) {
	us := int64(math.Round(sec * 1e6))
	if us < 1 {
		us = 1
	}
	if us > histMax {
		us = histMax
	}
	_ = h.h.RecordValue(us)
}

func (h *hist) count() int64 { return h.h.TotalCount() }

// quantile returns the value at q (0..100) in seconds.
func (h *hist) quantile(q float64) float64 {
	if h.h.TotalCount() == 0 {
		return 0
	}
	return round6(float64(h.h.ValueAtQuantile(q)) / 1e6)
}

func (h *hist) percentiles() Percentiles {
	if h == nil || h.h.TotalCount() == 0 {
		return Percentiles{}
	}
	return Percentiles{
		Count: h.h.TotalCount(),
		P50:   h.quantile(50),
		P90:   h.quantile(90),
		P95:   h.quantile(95),
		P99:   h.quantile(99),
		Max:   round6(float64(h.h.Max()) / 1e6),
		Mean:  round6(h.h.Mean() / 1e6),
	}
}

// round6 keeps microsecond precision so that summary.json stays readable and
// stable across platforms.
func round6(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return math.Round(f*1e6) / 1e6
}
