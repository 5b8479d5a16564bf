#!/usr/bin/env bash
# Runs the kubectl and client-go compatibility tests: test/kubectl-compat is
# a module of its own (replace ../.. for Skiff), so k8s.io/kubectl and
# k8s.io/client-go stay out of Skiff's go.mod and binary.
#
# Two passes: a current kubectl built from its Go module (the k8s.io/kubectl
# version in that go.mod), then Debian's kubernetes-client (kubectl 1.20,
# which reads OpenAPI v2 in protobuf), unpacked from its .deb into the cache
# without installing it (its /usr/bin/kubectl may clash with another).
# KUBECTL_COMPAT_DEBIAN=0 skips the second pass and says so.
set -euo pipefail
GO="${GO:-go}"
cd "$(dirname "$0")/../test/kubectl-compat"
# The module replaces Skiff with ../..: new Skiff dependencies must show in
# its go.sum too; tidy keeps the two in step (it changes nothing otherwise).
"$GO" mod tidy
"$GO" vet ./...
echo "kubectl-compat: kubectl built from k8s.io/kubectl"
"$GO" test -count=1 -timeout 10m ./...

if [ "${KUBECTL_COMPAT_DEBIAN:-1}" != 1 ]; then
  echo "kubectl-compat: Debian kubectl pass NOT run (KUBECTL_COMPAT_DEBIAN=${KUBECTL_COMPAT_DEBIAN})"
  exit 0
fi
dir="${XDG_CACHE_HOME:-$HOME/.cache}/skiff-kubectl-compat/debian"
if [ ! -x "$dir/usr/bin/kubectl" ]; then
  mkdir -p "$dir"
  (
    cd "$dir"
    apt-get download kubernetes-client >/dev/null 2>&1 || { apt-get update -qq && apt-get download kubernetes-client; }
    dpkg -x kubernetes-client_*.deb .
    rm -f kubernetes-client_*.deb
  )
fi
echo "kubectl-compat: Debian's $("$dir/usr/bin/kubectl" version --client --short 2>/dev/null || echo kubectl)"
KUBECTL="$dir/usr/bin/kubectl" "$GO" test -count=1 -timeout 10m ./...
