// Package trace computes the parts of `skiff trace POD URL` that need no
// kernel: the pod's resolv.conf and its search expansion, the DNS queries
// of that expansion (through an injected exchange function), the Service
// port an address belongs to, the endpoints from the EndpointSlices and the
// chance the proxy rules give each. The agent (netagent/trace.go) feeds it
// its informers, the node DNS and the proxy backend's rules.
//
// # Invariants
//
//   - The search expansion is the stub resolver's (glibc, musl and Go
//     agree): a name ending in "." is only tried as is; a name with at
//     least ndots dots is tried as is first, then with each search domain;
//     a shorter one with each search domain first, then as is.
//   - Queries stop at the first name that has an address; a name that
//     answers NXDOMAIN or no address moves to the next candidate.
//   - Endpoint probabilities come only from the rules read from the
//     kernel: iptables probabilities are conditional (each rule is reached
//     only when the ones before it were not taken), nftables numgen and
//     IPVS shares are absolute. Without rules every probability stays 0
//     and a warning says why.
//   - Nothing here blocks or touches the kernel.
package trace
