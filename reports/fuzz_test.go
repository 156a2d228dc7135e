package reports

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// FuzzAnalyzeRun feeds arbitrary attempts.jsonl and events.jsonl bodies (as a
// crashed writer, a foreign tool or a hostile callback could leave them) to the
// analysis: it never panics, never loses a line (every line is either counted,
// counted as a duplicate of one read before, or reported bad), the summary
// reads back and the page renders.
func FuzzAnalyzeRun(f *testing.F) {
	r := fullRun()
	var att, ev bytes.Buffer
	for _, a := range r.attempts[:20] {
		b, _ := json.Marshal(a)
		att.Write(append(b, '\n'))
	}
	for _, e := range r.events[:10] {
		b, _ := json.Marshal(e)
		ev.Write(append(b, '\n'))
	}
	f.Add(att.Bytes(), ev.Bytes())
	f.Add([]byte(`{"seq":1,"op":"send","client":"c","attempt":1,"sent":"2026-11-23T02:00:01Z","code":429,"retry_after":"Wed, 21 Oct 2015 07:28:00 GMT"}`), []byte(`{"kind":"callback","corr":{"seq":1,"matched":true,"terminal":true}}`))
	f.Add([]byte("{\"seq\":1}\nnot json\n{\"seq\":"), []byte("{\"kind\":\"webhook\"}\n\x00\n"))
	meta, _ := json.Marshal(r.meta)
	f.Fuzz(func(t *testing.T, attempts, events []byte) {
		fsys := fstest.MapFS{rundir.MetaFile: {Data: meta}, rundir.AttemptsFile: {Data: attempts}, rundir.EventsFile: {Data: events}}
		var lines, good int64
		_ = rundir.DecodeJSONL(bytes.NewReader(attempts), func(rundir.Attempt) error { good++; return nil }, func(int, error) { lines++ })
		s, err := AnalyzeFS(fsys, "fuzz")
		if err != nil {
			t.Fatalf("Analyze: %v", err)
		}
		// a line that repeats an attempt already read (duplicate_lines) is
		// counted there, once, not as a second request
		if s.Requests.Total+s.Requests.Duplicates != good || s.Requests.BadLines != lines {
			t.Fatalf("attempts: total %d, duplicated %d, bad %d; want %d lines decoded, %d bad", s.Requests.Total, s.Requests.Duplicates, s.Requests.BadLines, good, lines)
		}
		b, err := s.marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseSummary(b); err != nil {
			t.Fatalf("summary.json does not read back: %v", err)
		}
		var out bytes.Buffer
		if err := s.WriteHTML(&out); err != nil {
			t.Fatal(err)
		}
	})
}

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
