// Package summary is the summary contract: the types of summary.json (the
// figures every CI script, `msgload compare` and a threshold read, with their
// `json` and `expr` names), how a figure without data reads (null in the
// file, "no data" or "not measured" for people: nulls.go), and the threshold
// check scenario validation applies before a run starts (thresholds.go,
// live.go). It links nothing beyond the threshold language and its expression
// engine (a test keeps it so), so that loading a scenario does not link the
// analysis or the writers of package reports, which fill and write these
// types.
package summary
