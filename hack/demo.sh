#!/usr/bin/env bash
# The Service flow of docs/architecture.md in one command (`make demo`), on a Debian machine as root.
#
# Everything runs inside a network namespace of its own (skiff-demo), so no
# rule, route or address of the machine's own network is touched: `skiff
# server` (API, controllers, built-in node agent with the process runtime or
# containerd, service proxy in iptables mode) listens on 127.0.0.1:6443 inside it, and
# `skiff netns-forward` makes that port reachable from the host's loopback
# only. A second namespace, skiff-demo-ext, stands for a machine outside the
# node (the NodePort client). `make demo-stop` (hack/demo-stop.sh) removes it
# all.
#
# Options (environment, or make variables: make demo RUNTIME=containerd):
#   RUNTIME=process     (default) pods are processes: nothing to start, no image
#   RUNTIME=containerd  pods are containers of a containerd the agent starts
#                       itself under .skiff-demo/containerd (a containerd of
#                       the machine is not used), from the image of this very
#                       skiff binary (skiff image build --self --import)
#   SKIFF_DEMO_PROXY_MODE=iptables (default) | nftables
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

NS=${SKIFF_DEMO_NS:-skiff-demo}
EXT=${NS}-ext
DIR=${SKIFF_DEMO_DIR:-$ROOT/.skiff-demo}
PORT=${SKIFF_DEMO_PORT:-16443}
MODE=${SKIFF_DEMO_PROXY_MODE:-iptables}
RUNTIME=${RUNTIME:-${SKIFF_DEMO_RUNTIME:-process}}
IMAGE=skiff.local/netexec:dev # the image examples/ name
NODE_IP=192.0.2.10
EXT_IP=192.0.2.100
LB_CIDR=198.51.100.0/28 # LoadBalancer addresses; the outside routes them to the node
SKIFF=$ROOT/bin/skiff

say()  { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run()  { printf '\033[2m$ %s\033[0m\n' "$*"; "$@"; }
# k runs the skiff CLI inside the demo namespace, where the server listens.
k()    { printf '\033[2m$ skiff %s\033[0m\n' "$*"; ip netns exec "$NS" "$SKIFF" "$@"; }
kq()   { ip netns exec "$NS" "$SKIFF" "$@"; }
inns() { ip netns exec "$NS" "$@"; }
die()  { echo "demo: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (it creates network namespaces): sudo make demo"
case "$RUNTIME" in
  process | containerd) ;;
  *) die "RUNTIME=$RUNTIME: want process or containerd" ;;
esac
for n in "$NS" "$EXT"; do
  if ip netns list | awk '{print $1}' | grep -qx "$n"; then
    die "namespace $n exists: a demo is running (make demo-stop first)"
  fi
done
# A data dir left by an earlier demo would bring its pods back.
[ -e "$DIR" ] && die "$DIR exists: an earlier demo left it (make demo-stop removes it)"
trap 'echo "demo: a step failed; make demo-stop removes what was made" >&2' ERR

say "Dependencies and build"
./hack/install-deps.sh
command -v go >/dev/null || die "needs Go >= 1.26 on PATH (https://go.dev/dl/)"
run make build
if [ "$RUNTIME" = containerd ]; then
  for b in containerd containerd-shim-runc-v2 runc; do
    command -v "$b" >/dev/null || die "RUNTIME=containerd needs $b on PATH (Debian: containerd, runc)"
  done
fi

export KUBECONFIG=$DIR/admin.kubeconfig
mkdir -p "$DIR"
T0=$(date +%s.%N)

say "A network namespace of its own: $NS (node $NODE_IP), and $EXT (a machine outside, $EXT_IP)"
run ip netns add "$NS"
run ip netns add "$EXT"
echo "$NS $EXT" > "$DIR/demo-netns"
inns ip link set lo up
ip netns exec "$EXT" ip link set lo up
ip link add skiff-demo0 netns "$NS" type veth peer name skiff-ext0 netns "$EXT"
inns ip addr add "$NODE_IP/24" dev skiff-demo0
inns ip link set skiff-demo0 up
ip netns exec "$EXT" ip addr add "$EXT_IP/24" dev skiff-ext0
ip netns exec "$EXT" ip link set skiff-ext0 up
ip netns exec "$EXT" ip route add "$LB_CIDR" via "$NODE_IP"

# With containerd the agent is pointed at a socket in its own data dir where
# nothing answers yet: it starts its own containerd there (and stops it when
# it exits), leaving any containerd of the machine alone.
CTRD_SOCK=$DIR/containerd/containerd.sock
RUNTIME_FLAGS=(--runtime "$RUNTIME")
[ "$RUNTIME" = containerd ] && RUNTIME_FLAGS+=(--containerd-socket "$CTRD_SOCK")
say "skiff server inside $NS (built-in agent, $RUNTIME runtime, proxy mode $MODE)"
# The server runs with its own session so that it outlives this script. It
# enters only the namespace's network (nsenter --net), not `ip netns exec`:
# that also gives the process a mount namespace with a fresh /sys, without
# /sys/fs/cgroup, where runc cannot create a container ("no cgroup mount
# found in mountinfo").
setsid nsenter --net="/run/netns/$NS" "$SKIFF" server --data-dir "$DIR" --listen 127.0.0.1:6443 \
  --node-name demo-node --node-ip "$NODE_IP" "${RUNTIME_FLAGS[@]}" --proxy-mode "$MODE" --lb-cidr "$LB_CIDR" \
  >"$DIR/server.log" 2>&1 < /dev/null &
echo $! > "$DIR/server.pid"
echo "server pid $(cat "$DIR/server.pid"), log $DIR/server.log"
for _ in $(seq 100); do
  if [ -f "$KUBECONFIG" ] && kq get node demo-node -o name >/dev/null 2>&1; then break; fi
  kill -0 "$(cat "$DIR/server.pid")" 2>/dev/null || { tail -20 "$DIR/server.log"; die "server exited"; }
  sleep 0.1
done
kq get node demo-node -o name >/dev/null || die "the node did not register (see $DIR/server.log)"
# Ready once the agent has the pod network and the proxy in place.
for _ in $(seq 100); do
  [ "$(kq get node demo-node -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ] && break
  sleep 0.1
done
k get nodes -o wide

if [ "$RUNTIME" = containerd ]; then
  say "The pods' image: this skiff binary, packed without a registry, into the agent's containerd"
  echo "(examples/ run 'skiff netexec ...' from $IMAGE: /skiff, with / on the image's PATH)"
  run "$SKIFF" image build --self --name "$IMAGE" --import --containerd-socket "$CTRD_SOCK" --data-dir "$DIR"
  run "$SKIFF" image ls --containerd-socket "$CTRD_SOCK" --data-dir "$DIR"
fi

say "Apply examples/ (Deployment backend x3 + ClusterIP backend-svc, client pod, NodePort, LoadBalancer, ExternalName, headless + StatefulSet)"
TA=$(date +%s.%N)
k apply -f examples/
# The client's first successful response through the ClusterIP.
for _ in $(seq 300); do
  CLIENT_IP=$(kq get pod client -o 'jsonpath={.status.podIP}' 2>/dev/null || true)
  if [ -n "$CLIENT_IP" ] && inns curl -fsS --max-time 2 \
      "http://$CLIENT_IP:8080/dial?host=backend-svc&port=80&request=hostname&tries=1" 2>/dev/null | grep -q '"responses"'; then
    break
  fi
  sleep 0.05
done
TB=$(date +%s.%N)
awk -v a="$TA" -v b="$TB" 'BEGIN { printf "apply -> first response from the client pod through http://backend-svc: %.2f s\n", b - a }'
k rollout status deployment/backend --timeout=60s
k get pods -o wide
if [ "$RUNTIME" = containerd ]; then
  echo "each pod's container is a containerd container (namespace skiff) with a running task:"
  k get pods -o 'jsonpath={range .items[*]}{.metadata.name}{"\t"}{.status.containerStatuses[0].containerID}{"\n"}{end}'
  run ctr --address "$CTRD_SOCK" -n skiff tasks ls
fi

say "The Service and its ClusterIP"
k get svc
VIP=$(kq get svc backend-svc -o 'jsonpath={.spec.clusterIP}')

say "The EndpointSlice (the ready backends)"
k get endpointslices -l kubernetes.io/service-name=backend-svc

# rule_endpoints: how many endpoints the kernel rules spread backend-svc
# over right now (the proxy follows the EndpointSlice within ~100 ms).
rule_endpoints() {
  if [ "$MODE" = iptables ]; then
    inns iptables-save -t nat 2>/dev/null | grep -c -- '-A KUBE-SVC-.*"default/backend-svc:http -> ' || true
  else
    inns nft list table ip skiff 2>/dev/null | grep -A3 'chain service-.*default/backend-svc/' |
      grep -o 'mod [0-9]*' | head -1 | cut -d' ' -f2
  fi
}
wait_rules() { # wait_rules N: until the rules spread over N endpoints
  for _ in $(seq 100); do
    [ "$(rule_endpoints)" = "$1" ] && return 0
    sleep 0.05
  done
  echo "(the proxy has not written the rules for $1 endpoints yet; see $DIR/server.log)"
}

say "The kernel rules, with their probabilities ($MODE, inside $NS)"
rules() { # one snapshot of the rules, so that what is shown is consistent
  if [ "$MODE" = iptables ]; then
    printf '\033[2m$ iptables-save | grep backend-svc\033[0m\n'
    inns iptables-save -t nat 2>/dev/null | grep -v '^#' | grep 'default/backend-svc' || true
    echo "(KUBE-SERVICES sends the ClusterIP to KUBE-SVC-...; its rules are tried in order: the first takes 1/N,"
    echo " the next 1/(N-1) of the rest, ..., the last the rest, so each KUBE-SEP-... DNAT to a pod gets 1/N overall)"
  else
    # One chain per Service port picks an endpoint with numgen random mod N
    # (each with probability 1/N) out of a shared endpoints map.
    local dump chain m off n
    dump=$(inns nft list table ip skiff)
    # The dispatch (KUBE-SERVICES in iptables mode): a verdict map from
    # ClusterIP . protocol . port to the Service port's chain.
    printf '\033[2m$ nft list map ip skiff service-ips | grep %s\033[0m\n' "$VIP"
    awk '/map service-ips \{/ { on = 1 } on && /elements/ { p = 1 } p { print } p && /}/ { exit }' <<<"$dump" |
      tr ',{}' '\n\n\n' | grep -F "$VIP . " | sed 's/^[[:space:]]*/  /' || true
    chain=$(grep -A3 'chain service-.*default/backend-svc/' <<<"$dump" || true)
    printf '\033[2m$ nft list table ip skiff | grep -A3 "chain service-.*backend-svc"\033[0m\n'
    echo "$chain"
    m=$(grep -o 'map @endpoints-[0-9]*' <<<"$chain" | head -1 | cut -d@ -f2)
    off=$(grep -o 'offset [0-9]*' <<<"$chain" | head -1 | cut -d' ' -f2)
    n=$(grep -o 'mod [0-9]*' <<<"$chain" | head -1 | cut -d' ' -f2)
    if [ -n "$m" ] && [ -n "$n" ]; then
      printf '\033[2m$ nft list map ip skiff %s   # keys %s..%s: backend-svc'"'"'s endpoints (the map is shared)\033[0m\n' \
        "$m" "${off:-0}" "$(( ${off:-0} + n - 1 ))"
      awk -v m="map $m {" 'index($0, m) { on = 1 } on && /elements/ { p = 1 } p { print } p && /}/ { exit }' <<<"$dump" |
        tr ',{}' '\n\n\n' | grep -o '0x[0-9a-f]* : [0-9.]* \. [0-9]*' |
        while read -r key _ ep _ port; do
          k=$((key))
          if [ "$k" -ge "${off:-0}" ] && [ "$k" -lt $(( ${off:-0} + n )) ]; then
            echo "  $k -> $ep:$port   (probability 1/$n)"
          fi
        done || true
    fi
  fi
}
wait_rules 3
rules

say "A DNS answer (the node DNS on the pod bridge's gateway)"
GW=$(kq get node demo-node -o 'jsonpath={.spec.podCIDR}' | sed 's#0/[0-9]*$#1#')
run ip netns exec "$NS" dig +noall +answer @"$GW" backend-svc.default.svc.cluster.local
run ip netns exec "$NS" dig +noall +answer @"$GW" cache-redis-external.default.svc.cluster.local
run ip netns exec "$NS" dig +noall +answer @"$GW" web-0.web.default.svc.cluster.local
echo "the client pod's /etc/resolv.conf:"
sed 's/^/  /' "$DIR/pods/$(kq get pod client -o 'jsonpath={.metadata.uid}')/resolv.conf" || true

spread() { # spread N: the client pod calls http://backend-svc/hostname N times
  printf '\033[2m$ (in pod client) for i in $(seq %s); do curl -s http://backend-svc/hostname; done | sort | uniq -c\033[0m\n' "$1"
  inns curl -fsS "http://$CLIENT_IP:8080/dial?host=backend-svc&port=80&request=hostname&tries=$1" |
    tr -d '{}[]"' | sed 's/^responses://; s/,errors:.*//' | tr ',' '\n' | sort | uniq -c
}
say "The client pod calls http://backend-svc ($VIP:80) and reaches all three backends"
spread 30

# The NodePort and LoadBalancer Services have slices of their own: wait
# for their three ready endpoints before calling them.
for _ in $(seq 100); do
  n=$(kq get endpointslices -l kubernetes.io/service-name=backend-nodeport \
    -o 'jsonpath={range .items[*].endpoints[?(@.conditions.ready==true)]}{.addresses[0]} {end}' 2>/dev/null | wc -w)
  [ "$n" -ge 3 ] && break
  sleep 0.1
done
say "NodePort: from $EXT (outside the node) to $NODE_IP:30080"
for _ in 1 2 3 4 5 6; do
  ip netns exec "$EXT" curl -fsS --max-time 2 "http://$NODE_IP:30080/hostname" || true; echo
done

LB_IP=$(kq get svc backend-lb -o 'jsonpath={.status.loadBalancer.ingress[0].ip}' 2>/dev/null || true)
if [ -n "$LB_IP" ]; then
  say "LoadBalancer: backend-lb got $LB_IP from --lb-cidr $LB_CIDR; from $EXT (routed to the node)"
  for _ in 1 2 3 4 5 6; do
    ip netns exec "$EXT" curl -fsS --max-time 2 "http://$LB_IP/hostname" || true; echo
  done
fi

# A machine outside the cluster has no route to the pods: only the node's
# egress masquerade (netagent/egress) lets its answer come back.
say "Egress: the client pod calls $EXT ($EXT_IP, no route to the pods); it sees the node's address"
ip netns exec "$EXT" "$SKIFF" netexec --http-port=8090 --udp-port=8091 >/dev/null 2>&1 &
EXT_PID=$!
for _ in $(seq 50); do
  ip netns exec "$EXT" curl -fsS --max-time 1 "http://$EXT_IP:8090/hostname" >/dev/null 2>&1 && break
  sleep 0.1
done
printf '\033[2m$ (in pod client) curl -s http://%s:8090/clientip\033[0m\n' "$EXT_IP"
inns curl -fsS "http://$CLIENT_IP:8080/dial?host=$EXT_IP&port=8090&request=clientip&tries=1" |
  tr -d '{}[]"' | sed 's/^responses://; s/,errors:.*//' || echo "(no answer)"
echo "(the node is $NODE_IP; the pod is $CLIENT_IP)"
kill "$EXT_PID" 2>/dev/null || true
wait "$EXT_PID" 2>/dev/null || true

say "Scale to 5 and the new spread"
k scale deployment/backend --replicas=5
k rollout status deployment/backend --timeout=60s
wait_rules 5
k get endpointslices -l kubernetes.io/service-name=backend-svc
if [ "$MODE" = iptables ]; then
  printf '\033[2m$ iptables-save | grep -- "-A KUBE-SVC.*backend-svc"\033[0m\n'
  inns iptables-save -t nat 2>/dev/null | grep -v '^#' | grep 'default/backend-svc' | grep -- '-A KUBE-SVC' || true
  echo "(1/5, 1/4, 1/3, 1/2, the rest: 1/5 each)"
else
  rules
fi
spread 50

if kq trace --help >/dev/null 2>&1; then
  say "skiff trace: each step for client -> http://backend-svc"
  k trace client http://backend-svc || true
fi

# The host-side forwarder (loopback to loopback) for the dashboard and API.
setsid "$SKIFF" netns-forward --netns "/run/netns/$NS" --listen "127.0.0.1:$PORT" --target 127.0.0.1:6443 \
  >"$DIR/forward.log" 2>&1 < /dev/null &
echo $! > "$DIR/forward.pid"
sed "s#https://127.0.0.1:6443#https://127.0.0.1:$PORT#" "$KUBECONFIG" > "$DIR/host.kubeconfig"

say "Done in $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s. The server keeps running."
cat <<MSG
  Dashboard:  https://127.0.0.1:$PORT/   (CA: $DIR/tls/ca.crt)
  Token:      $(cat "$DIR/tokens/admin")
  CLI (host): KUBECONFIG=$DIR/host.kubeconfig $SKIFF get pods -o wide
  Inside:     ip netns exec $NS $SKIFF --kubeconfig $KUBECONFIG get svc
  Logs:       $DIR/server.log
  Stop and clean up (server and forwarder by PID, pods, namespaces $NS and $EXT, $DIR):
              make demo-stop
MSG
