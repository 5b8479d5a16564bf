// Package nftables is the nftables mode of Skiff's service proxy: a
// proxy.Backend that programs ClusterIP, NodePort, LoadBalancer and
// external IPs with kube-proxy's semantics (traffic policies, session
// affinity, loadBalancerSourceRanges, masquerade and hairpin, rejects) into
// one nftables table of Skiff's own. README.md has the layout, the
// measurements that chose it, and the benchmark commands.
//
// # Layout
//
// Services are dispatched by verdict maps keyed on daddr . proto . dport
// (NodePorts on proto . dport for local addresses): O(1) per packet. A
// Service port's endpoints live in one of 64 shared endpoint maps; its chain
// picks one with "numgen random mod N offset O map @endpoints-K". Ports with
// session affinity use kube-proxy's per-endpoint chains and dynamic sets.
//
// # Invariants
//
//   - Skiff writes only its own table, "ip skiff" (and "ip6 skiff" while a
//     Service has an IPv6 ClusterIP); Cleanup deletes them.
//   - Every sync is one transaction: the kernel applies all of it or none.
//     A failed sync makes the next one full.
//   - A partial sync touches only the chains, sets and map elements of the
//     Service ports it is given; an endpoint change that keeps the number
//     of endpoints only rewrites map elements (no rule, no jump: the kernel
//     does not revalidate the table), and its result is the ruleset a full
//     sync would write (tested).
//   - A full sync rewrites the table in place: it never deletes it first
//     (no packet sees a table without rules), deletes stale objects, and
//     keeps the affinity sets of endpoints that stay.
//   - Per-Service-port chain and set names contain a "/" (namespace/name/
//     protocol/port, prefixed with a hash as kube-proxy does); fixed names
//     never do.
//   - Endpoint choice is proxy.CategorizeEndpoints, as in every mode: ready
//     endpoints, or, when none is ready, serving and terminating ones;
//     Local policies use local endpoints only, but pods and the node
//     reaching an external address always get the cluster endpoints.
//   - Everything kernel-facing goes through the Kernel interface: Netlink
//     (google/nftables, one lasting socket), Exec (the nft binary, for
//     measurement) and Fake (validates references the way the kernel does,
//     and traces packets).
package nftables
