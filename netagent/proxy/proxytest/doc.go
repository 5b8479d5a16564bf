// Package proxytest holds what the proxy modes' tests share: an in-memory
// API behind real client.Informers (Cluster), object builders, a recording
// Backend, the conformance table every mode's fake must pass (Cases,
// Conformance: a packet against Services and EndpointSlices -> DNAT,
// masquerade, drop, reject or untouched, with per-mode exceptions and
// their reasons), and, on Linux as root, a simulated node built from
// network namespaces with the real-kernel cases every mode must pass
// (KernelCases, RunKernelCases, CheckRestart).
//
// # Invariants
//
//   - Everything a kernel test creates lives in network namespaces the test
//     created (a "node" namespace with a bridge, "pod" namespaces on it, a
//     "client" namespace on a veth); they are removed when the test ends,
//     and StartKernel fails the test if the machine's own netfilter state
//     changed (iptables-save of both backends and nft list tables, before
//     and after). Traffic goes only between those namespaces.
//   - KernelCases run in the iptables (both backends) and nftables modes
//     as root, and in the ipvs mode in the VM; Conformance runs in every
//     mode on its fake kernel, without root.
//   - The namespaces are netnstest's (netagent/netns/netnstest: each in a
//     directory of its own, removed at cleanup); tests that need root skip
//     through netnstest.RequireRoot, the one root check (CI runs as root).
//   - Cluster assigns increasing resourceVersions and keeps a history, so a
//     watch from any version replays what came after it.
//
// # The simulated node
//
//	client netns 192.168.77.2 --veth-- 192.168.77.1 node netns
//	node netns: skiff0 bridge 10.244.0.1/24; 10.96.0.0/16 routed onto skiff0 (docs/networking.md, "Safety of the data plane")
//	pod netns:  10.244.0.x/24 on a veth in skiff0 (hairpin on), default via 10.244.0.1,
//	            HTTP on :8080 and UDP on :5353 answering "<pod> <client address>"
//
// The node sets ip_forward=1, bridge-nf-call-iptables=1 and
// send_redirects=0: with redirects on, a pod's packet to a ClusterIP (routed
// back out of the bridge it came in on) makes the node send an ICMP
// redirect, which uses up the per-host ICMP rate limit, so the REJECT of a
// Service without endpoints is never delivered and the client times out
// instead of being refused. A real node needs the same setting.
package proxytest
