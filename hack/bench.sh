#!/usr/bin/env bash
# Runs the control-plane benchmarks of docs/performance.md,
# each once, against a real server (bbolt with fsync on, HTTPS on
# 127.0.0.1), and prints the machine they ran on. Figures from a shared or
# busy machine are noisy: run it on an idle one.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "bench: $(nproc) cores, $(uname -sr), load: $(cut -d' ' -f1-3 /proc/loadavg), $(go version)"
run() { echo "+ $*"; "$@"; }
run go test -count=1 -run '^$' -bench 'ServiceCreate16|WatchLatency100' -benchtime 1x ./server/
run go test -count=1 -run '^$' -bench 'List10kPods' -benchtime 20x ./server/
run go test -count=1 -run '^$' -bench 'StartToReady' -benchtime 5x ./server/
# HPA reaction time: load start -> scale-up, load end -> scale-down (3 loads).
run go test -count=1 -run '^$' -bench 'HPAReaction' -benchtime 3x ./controller/podautoscaler/
if command -v chromium >/dev/null; then
  run go test -count=1 -run '^$' -bench 'Dashboard' -benchtime 10x ./web/
else
  echo "bench: chromium missing, dashboard benchmark skipped"
fi
run go test -count=1 -run '^TestIdleRSSAndBinarySize$' -v ./server/ | grep -E 'binary size|idle RSS|^(ok|FAIL|---)'
# End to end (root): apply -> first response, a deleted pod out of the
# rules, failed requests and rate during a rolling update, in both modes,
# on the process runtime and (with containerd and runc) on containerd.
if [ "$(id -u)" -eq 0 ]; then
  run go test -count=1 -run '^(TestSeeds|TestContainerdRuntime)$' -v ./test/e2e/ |
    grep -E 'first response|still serving|rolling update in|SKIP|^(ok|FAIL|--- FAIL)'
  run go test -count=1 -run '^$' -bench 'ApplyToFirstResponse' -benchtime 5x ./test/e2e/ | grep -E 'Benchmark|^(ok|FAIL)'
  # Pod Ready (pods/status) -> rule in the kernel at 1k Services, both modes.
  run go test -count=1 -run '^$' -bench NetworkProgramming -benchtime 1x ./test/proxylatency/ | grep -E '^Benchmark|rule in the kernel|partial syncs|^(ok|FAIL)'
else
  echo "bench: end-to-end figures skipped (need root)"
fi
