// Package scenarios reads msgload scenario files: YAML with ${VAR} expansion,
// unknown fields refused, defaults applied from one table (defaults.go, also
// written into the JSON Schema) before the checks, every problem reported at
// once with its file, line and column. The message part of a scenario is
// package msgspec, so the body generator does not link the loader. It also holds the built-in scenario library (embedded,
// so `msgload run smoke` works by name), the JSON Schema editors validate against,
// and the plan a scenario implies (requests per client, rate against the limit,
// expected share of 429 answers) that `msgload validate` prints.
package scenarios
