#!/usr/bin/env bash
# Runs every Fuzz* target in the module for a short time ($1, default 5s).
set -euo pipefail
cd "$(dirname "$0")/.."
t="${1:-5s}"
n=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)\(' "$dir"/*_test.go 2>/dev/null | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/' | sort -u); do
    echo "fuzz: $pkg $f ($t)"
    go test -run '^$' -fuzz "^${f}\$" -fuzztime "$t" "$pkg"
    n=$((n+1))
  done
done
echo "fuzz: $n targets run"
