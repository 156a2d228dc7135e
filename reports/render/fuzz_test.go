package render

import (
	"bytes"
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/msgload/msgload/reports"
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
		s, err := reports.AnalyzeFS(fsys, "fuzz")
		if err != nil {
			t.Fatalf("Analyze: %v", err)
		}
		// a line that repeats an attempt already read (duplicate_lines) is
		// counted there, once, not as a second request
		if s.Requests.Total+s.Requests.Duplicates != good || s.Requests.BadLines != lines {
			t.Fatalf("attempts: total %d, duplicated %d, bad %d; want %d lines decoded, %d bad", s.Requests.Total, s.Requests.Duplicates, s.Requests.BadLines, good, lines)
		}
		b, err := s.JSON()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseSummary(b); err != nil {
			t.Fatalf("summary.json does not read back: %v", err)
		}
		var out bytes.Buffer
		if err := (view{s}).WriteHTML(&out); err != nil {
			t.Fatal(err)
		}
	})
}
