// Package reports turns the raw files of a run directory (run.json, attempts.jsonl,
// events.jsonl, truth.json) into the run's verdict: summary.json, the documented
// contract CI scripts and `msgload compare` read, plus report.html, report.md,
// junit.xml and the short terminal summary. It reads nothing but the run
// directory, so a report can be rebuilt byte-for-byte anywhere. The types of
// summary.json and the threshold check are package reports/summary's (the
// contract, which scenario validation links alone); reports fills and writes them.
package reports
