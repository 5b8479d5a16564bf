#!/usr/bin/env bash
# Runs the real users' manifest gate, test/realworld/run.sh, against a built
# Skiff binary and test/realworld/baseline.txt (the objects it must keep
# accepting). kubectl is $KUBECTL if set, else the one hack/kubectl-compat.sh
# uses: built from test/kubectl-compat's module (the k8s.io/kubectl version
# in its go.mod) into the user cache directory, where make compat leaves it.
#
#   usage: hack/realworld.sh [--write-baseline] /path/to/skiff [set ...]
#
# --write-baseline rewrites the baseline with what passes now (make
# realworld-baseline) instead of comparing with it.
set -euo pipefail
GO="${GO:-go}"
root=$(cd "$(dirname "$0")/.." && pwd)
mode=--baseline
if [ "${1:-}" = --write-baseline ]; then
  mode=--write-baseline
  shift
fi
skiff=${1:?usage: hack/realworld.sh [--write-baseline] /path/to/skiff [set ...]}
shift
if [ -z "${KUBECTL:-}" ]; then
  dir="${XDG_CACHE_HOME:-$HOME/.cache}/skiff-kubectl-compat"
  mkdir -p "$dir"
  echo "realworld: building kubectl from test/kubectl-compat's module into $dir"
  (cd "$root/test/kubectl-compat" && "$GO" build -o "$dir/kubectl" ./cmd/kubectl)
  export KUBECTL="$dir/kubectl"
fi
exec "$root/test/realworld/run.sh" "$mode" "$root/test/realworld/baseline.txt" "$skiff" "$@"
