// Package thresholds is the threshold language of scenario files: expressions
// such as `delivery.latency.p95 < 30s` that must hold for a run to pass. It
// rewrites the duration, percentage and size literals the language adds to
// expr's grammar (30s, 1%, 1MB), compiles an expression against an environment
// (a struct value whose `expr` tags are the names thresholds use), explains a
// mistyped name in the environment's JSON names with the nearest one, and runs
// a compiled expression.
//
// It knows nothing of what the environment holds: reports compiles and
// evaluates thresholds against its Summary, and adds the rules that depend on
// the summary's meaning (a figure without data fails). Keeping the language
// apart from reports lets the scenario loader check a threshold where it is
// written, without linking the report writers (charts, histograms).
package thresholds
