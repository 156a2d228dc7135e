// Package reports is the analysis of a run: it turns the raw files of a run
// directory (run.json, attempts.jsonl, events.jsonl, truth.jsonl) into the
// run's summary and verdict — the figures of summary.json, the documented
// contract CI scripts and `msgload compare` read, the thresholds evaluated and
// every reason with whose it is (Conclude). It reads nothing but the run
// directory, so a report can be rebuilt byte-for-byte anywhere. The types of
// summary.json and the threshold check are package reports/summary's (the
// contract, which scenario validation links alone); the files people read —
// report.html, report.md, junit.xml, the terminal summary — are written by
// package reports/render from what reports decided, and reports links none of
// their template or chart code. The analysis has two drivers: the files,
// whole (Analyze, Conclude), and attempts.jsonl (and the sink's
// events.jsonl) as a run writes it, carried from one live judgement to the
// next (Carried, carried.go, carriedevents.go).
package reports
