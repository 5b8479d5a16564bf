#!/usr/bin/env bash
# Stops the demo started by hack/demo.sh and removes everything it made:
# the workloads (deleted through the API so the agent stops them and tears
# their networks down), the server and the forwarder (by their recorded
# PIDs), any pod process left over (by the PIDs in the process runtime's
# state files; with RUNTIME=containerd the agent's containerd and its shims,
# by PID), the namespaces and the demo's data dir.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
NS=${SKIFF_DEMO_NS:-skiff-demo}
EXT=${NS}-ext
DIR=${SKIFF_DEMO_DIR:-$ROOT/.skiff-demo}
SKIFF=$ROOT/bin/skiff
export KUBECONFIG=$DIR/admin.kubeconfig
[ "$(id -u)" -eq 0 ] || { echo "demo-stop: run as root" >&2; exit 1; }

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
stop_pid() { # stop_pid PID NAME: SIGTERM, then SIGKILL after 15 s
  local pid=$1 name=$2
  alive "$pid" || return 0
  echo "stopping $name (pid $pid)"
  kill -TERM "$pid"
  for _ in $(seq 150); do alive "$pid" || return 0; sleep 0.1; done
  echo "$name did not stop: SIGKILL"; kill -KILL "$pid" 2>/dev/null
}

SERVER=$(cat "$DIR/server.pid" 2>/dev/null || true)
FWD=$(cat "$DIR/forward.pid" 2>/dev/null || true)
stop_pid "$FWD" forwarder
if alive "$SERVER" && [ -f "$KUBECONFIG" ]; then
  echo "deleting the demo's workloads"
  ip netns exec "$NS" "$SKIFF" delete -f examples/ --ignore-not-found >/dev/null 2>&1
  ip netns exec "$NS" "$SKIFF" delete pods --all --grace-period=1 >/dev/null 2>&1
  for _ in $(seq 300); do
    [ -z "$(ip netns exec "$NS" "$SKIFF" get pods -A -o name 2>/dev/null)" ] && break
    sleep 0.1
  done
fi
stop_pid "$SERVER" server

# Pod processes that outlived the agent: the runtime's state files hold
# their PIDs; each is signalled only if its argv still matches.
for f in "$DIR"/runtime/process/*.json; do
  [ -f "$f" ] || continue
  pid=$(grep -o '"pid":[0-9]*' "$f" | head -1 | cut -d: -f2)
  if alive "$pid" && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q netexec; then
    echo "killing leftover pod process $pid"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
  fi
done

# The containerd runtime: the server stopped its containerd and the agent
# removed every container with its pod. Whatever outlived that (the server
# was killed, say) is found by PID: the daemon from its pid file, each shim
# because its command line names the demo's socket (its children, the
# containers' processes, first).
CTRD_SOCK=$DIR/containerd/containerd.sock
if [ -d "$DIR/containerd" ]; then
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    if { tr '\0' ' ' < "/proc/$pid/cmdline"; } 2>/dev/null | grep -q -- "-address $CTRD_SOCK"; then
      for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
        echo "killing leftover container process $child (of shim $pid)"
        kill -KILL "$child" 2>/dev/null
      done
      echo "killing leftover containerd shim $pid"
      kill -KILL "$pid" 2>/dev/null
    fi
  done
  stop_pid "$(cat "$DIR/containerd/containerd.pid" 2>/dev/null || true)" containerd
fi

# Pod network namespaces are bind mounts under the data dir.
if [ -d "$DIR" ]; then
  awk -v d="$DIR/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m"
  done
fi
for n in "$NS" "$EXT"; do
  if ip netns list | awk '{print $1}' | grep -qx "$n"; then echo "deleting netns $n"; ip netns delete "$n"; fi
done
rm -rf "$DIR"
echo "demo stopped and cleaned up"
