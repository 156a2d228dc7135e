#!/usr/bin/env bash
# Runs every native fuzz test of the module for $1 (default 20s) each.
set -euo pipefail
t=${1:-20s}
for pkg in $(go list ./...); do
  for f in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "== $pkg $f"
    go test -run '^$' -fuzz "^${f}\$" -fuzztime "$t" "$pkg"
  done
done
