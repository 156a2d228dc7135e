package message

import (
	"testing"

	"github.com/msgload/msgload/internal/depcheck"
)

// forbiddenDeps are modules the body generator must not link: it runs for
// every request on the attack's hot path, and these belong to the reports
// (charts, histograms, quantiles) and to the threshold language.
var forbiddenDeps = []string{
	"gonum.org/",                    // gonum and gonum/plot: the report's charts and statistics
	"github.com/expr-lang/expr",     // threshold expressions
	"github.com/influxdata/tdigest", // quantiles (vegeta's lib links it)
	"github.com/HdrHistogram/",      // histograms
	"github.com/tsenart/vegeta",     // its lib links tdigest
	"github.com/msgload/msgload/reports",
	"github.com/msgload/msgload/thresholds",
}

// TestNoHeavyDeps fails when the package links a forbidden module, directly or
// through what it imports (the scenario loader once pulled in the reports).
func TestNoHeavyDeps(t *testing.T) {
	const self = "github.com/msgload/msgload/attack/message"
	depcheck.Forbidden(t, self, forbiddenDeps, nil)
}

// binaryForbiddenDeps are modules the msgload binary must not link: a
// plotting stack (gonum/plot with its LaTeX, PDF and raster back-ends and
// twelve embedded fonts, parsed at start-up) made a fifth of the binary and
// most of its file-backed resident pages; report.html draws with uPlot,
// report.md's SVG files are written by reports/svg.go.
var binaryForbiddenDeps = []string{
	"gonum.org/",            // gonum/plot and gonum (the binomial CDF is reports' own)
	"codeberg.org/go-fonts", // Liberation fonts
	"codeberg.org/go-latex",
	"codeberg.org/go-pdf",
	"git.sr.ht/~sbinet/gg",
	"github.com/golang/freetype",
	"golang.org/x/image",
}

// TestBinaryNoPlottingDeps is `go list -deps ./cmd/msgload | grep gonum`, and
// the rest of the plotting stack, as a test.
func TestBinaryNoPlottingDeps(t *testing.T) {
	depcheck.Forbidden(t, "github.com/msgload/msgload/cmd/msgload", binaryForbiddenDeps, nil)
}

// TestBinaryNoPhoneMetadata keeps github.com/nyaruka/phonenumbers out of the
// msgload binary: its package init decodes the whole numbering-plan metadata
// (2.4 MB of heap in 34,500 allocations, ~50 ms of CPU) in every process, a
// delivery-none run included, where Go cannot defer it. The two lookups msgload
// needs (calling codes, time zones by prefix) are internal/e164's, decoded on
// first use; the library stays the oracle of e164's tests.
func TestBinaryNoPhoneMetadata(t *testing.T) {
	depcheck.Forbidden(t, "github.com/msgload/msgload/cmd/msgload", []string{"github.com/nyaruka/phonenumbers"}, nil)
}
