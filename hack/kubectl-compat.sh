#!/usr/bin/env bash
# Runs the kubectl and client-go compatibility tests: test/kubectl-compat is
# a module of its own (replace ../.. for Skiff), so k8s.io/kubectl and
# k8s.io/client-go stay out of Skiff's go.mod and binary. The tests build
# kubectl from its Go module (the k8s.io/kubectl version in that go.mod)
# into the user cache directory; KUBECTL=/path/to/kubectl tests another.
set -euo pipefail
GO="${GO:-go}"
cd "$(dirname "$0")/../test/kubectl-compat"
"$GO" vet ./...
"$GO" test -count=1 -timeout 10m ./...
