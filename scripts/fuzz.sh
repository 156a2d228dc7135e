#!/usr/bin/env bash
# Runs every native fuzz test of the module for $1 (default 20s) each.
# Minimizing a new input is bounded by $2 (default 2s): Go's default of 60s
# spent a whole run's time minimizing (FuzzParse ran 30 inputs in 60 s, 88,410
# with 2 s). What a run finds stays in the package's testdata/fuzz.
set -euo pipefail
t=${1:-20s}
m=${2:-2s}
for pkg in $(go list ./...); do
  for f in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "== $pkg $f"
    go test -run '^$' -fuzz "^${f}\$" -fuzztime "$t" -fuzzminimizetime "$m" "$pkg"
  done
done
