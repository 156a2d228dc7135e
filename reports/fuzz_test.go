package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// FuzzParseSummary: compare reads summary.json files from anywhere; parsing never
// panics, and whatever parses compares with itself without a regression.
func FuzzParseSummary(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "golden", rundir.SummaryFile)); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"schema":1,"ok":true}`))
	f.Add([]byte(`{"schema":1,"delivery":{"latency":{"p95":"x"}}}`))
	f.Add([]byte(`{"schema":99}`))
	f.Add([]byte(`{"schema":2,"kind":"run","ok":true,"verdict":"pass","verdict_reasons":[],"run":{"id":"x","scenario":"smoke"},"parts":[{"name":"a","dir":"a","verdict":"pass","outcomes":{"messages":1,"accepted":1,"delivered":1,"by_state":{"DELIVERED":1}}}],"totals":{"parts":1,"parts_passed":1}}`))
	f.Add([]byte(`{"schema":2,"kind":"run","verdict":"maybe"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseSummary(b)
		if err != nil {
			return
		}
		if c := compare(s, s, Tolerance{}); c.Regression {
			t.Fatalf("a run regresses against itself: %+v", c.Rows)
		}
		var out bytes.Buffer
		if err := compare(s, s, Tolerance{}).WriteMarkdown(&out); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzThreshold: thresholds come from scenario files; compiling never panics and
// whatever compiles evaluates against a summary without panicking.
func FuzzThreshold(f *testing.F) {
	for _, s := range []string{"delivery.latency.p95 < 30s", "delivery.lost / delivery.expected < 1%", `requests.codes["429"] > 0`, "1m30s > 2", "10 % 3 == 1", `"a" + "5s"`} {
		f.Add(s)
	}
	s, err := parseSummary([]byte(`{"schema":1}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		c, err := summary.CompileThreshold(src)
		if err != nil {
			return
		}
		_ = evalThreshold(c, s)
	})
}
