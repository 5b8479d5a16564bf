// Package egress masquerades pod traffic that leaves the cluster.
//
// A pod's address comes from the node's podCIDR, which nothing outside the
// cluster routes back to: a reply to a pod that talked to the LAN or the
// internet with its own address would never arrive. So, as the bridge CNI
// plugin's ipMasq and k3s' flannel do, the node rewrites the source of such
// traffic to its own address (MASQUERADE) as it leaves. Traffic from a pod
// to another pod (any destination in the cluster CIDR, on this node or
// another) keeps the pod's address, and so does multicast.
//
// The rules live in the node's network namespace, in objects of Skiff's own
// and in the packet filter the service proxy uses:
//
//   - iptables and ipvs modes: the nat chain SKIFF-EGRESS, jumped to from
//     POSTROUTING, through the detected iptables backend (IPTables);
//   - nftables mode: the table "ip skiff-egress" with one postrouting nat
//     chain (NFTables).
//
// Ensure writes them whole each time (idempotent, and a changed podCIDR
// replaces the old rules); Remove takes them away (for
// --egress-masquerade=false). Both are tested against the proxy packages'
// validating fakes and, as root, for real in network namespaces that the
// tests create.
package egress
