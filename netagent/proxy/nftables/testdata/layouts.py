#!/usr/bin/env python3
"""Writes an nft script of N ClusterIP Services x 3 endpoints in one of the
candidate layouts compared in ../README.md ("Layout measurements").

    python3 layouts.py 10000 shard 64 > r.nft
    ip netns add x; time ip netns exec x nft -f r.nft; ip netns del x

Layouts: namedvmap, datamap (one map per Service), global (one map),
gotos, inline, shard <maps>. Only ever load it inside a test netns.
"""
import sys

n, layout = int(sys.argv[1]), sys.argv[2]
shards = int(sys.argv[3]) if len(sys.argv) > 3 else 1
out = []
w = out.append
w("""table ip skiff {
 chain mark-for-masquerade {
  meta mark set meta mark | 0x4000
 }
 map service-ips { type ipv4_addr . inet_proto . inet_service : verdict; }
 chain services {
  ip daddr . meta l4proto . th dport vmap @service-ips
 }
 chain nat-prerouting {
  type nat hook prerouting priority dstnat;
  jump services
 }
 chain nat-output {
  type nat hook output priority -100;
  jump services
 }
 set hairpin { type ipv4_addr . ipv4_addr; }
}""")
maps = 1 if layout == "global" else shards if layout == "shard" else 0
for m in range(maps):
    w("add map ip skiff endpoints-%d { typeof numgen random mod 1 : ip daddr . tcp dport; }" % m)
elems, hairpin, shared = [], [], {}
for i in range(n):
    ip = "10.96.%d.%d" % (i // 250, i % 250 + 1)
    eps = ["10.%d.%d.%d" % (100 + i // 20000, (i // 80) % 250, (i % 80) * 3 + k + 1) for k in range(3)]
    s = "svc%d" % i
    chain = "service-" + s
    w("add chain ip skiff " + chain)
    w("add rule ip skiff %s ip daddr %s tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade" % (chain, ip))
    if layout in ("namedvmap", "gotos"):
        for k, e in enumerate(eps):
            w("add chain ip skiff endpoint-%s-%d" % (s, k))
            w("add rule ip skiff endpoint-%s-%d ip saddr %s jump mark-for-masquerade" % (s, k, e))
            w("add rule ip skiff endpoint-%s-%d meta l4proto tcp dnat to %s:8080" % (s, k, e))
    if layout == "namedvmap":
        w("map ip skiff eps-%s { typeof numgen random mod 3 : verdict; elements = { %s } }" % (
            s, ", ".join("%d : goto endpoint-%s-%d" % (k, s, k) for k in range(3))))
        w("add rule ip skiff %s numgen random mod 3 vmap @eps-%s" % (chain, s))
    elif layout == "gotos":
        w("add rule ip skiff %s numgen random mod 3 == 0 goto endpoint-%s-0" % (chain, s))
        w("add rule ip skiff %s numgen random mod 2 == 0 goto endpoint-%s-1" % (chain, s))
        w("add rule ip skiff %s goto endpoint-%s-2" % (chain, s))
    elif layout == "datamap":
        w("map ip skiff endpoints-%s { typeof numgen random mod 3 : ip daddr . tcp dport; elements = { %s } }" % (
            s, ", ".join("%d : %s . 8080" % (k, e) for k, e in enumerate(eps))))
        w("add rule ip skiff %s meta l4proto tcp dnat ip addr . port to numgen random mod 3 map @endpoints-%s" % (chain, s))
    elif layout == "inline":
        w("add rule ip skiff %s numgen random mod 3 == 0 meta l4proto tcp dnat to %s:8080" % (chain, eps[0]))
        w("add rule ip skiff %s numgen random mod 2 == 0 meta l4proto tcp dnat to %s:8080" % (chain, eps[1]))
        w("add rule ip skiff %s meta l4proto tcp dnat to %s:8080" % (chain, eps[2]))
    elif layout in ("global", "shard"):
        m = i % maps
        shared.setdefault(m, []).append(", ".join("%d : %s . 8080" % ((i << 12) + k, e) for k, e in enumerate(eps)))
        w("add rule ip skiff %s meta l4proto tcp dnat ip addr . port to numgen random mod 3 offset %d map @endpoints-%d" % (
            chain, i << 12, m))
    else:
        sys.exit("unknown layout " + layout)
    elems.append("%s . tcp . 80 : goto %s" % (ip, chain))
    hairpin += ["%s . %s" % (e, e) for e in eps]
for m, lines in shared.items():
    for j in range(0, len(lines), 300):
        w("add element ip skiff endpoints-%d { %s }" % (m, ", ".join(lines[j:j + 300])))
for j in range(0, len(elems), 1000):
    w("add element ip skiff service-ips { %s }" % ", ".join(elems[j:j + 1000]))
for j in range(0, len(hairpin), 1000):
    w("add element ip skiff hairpin { %s }" % ", ".join(hairpin[j:j + 1000]))
print("\n".join(out))
