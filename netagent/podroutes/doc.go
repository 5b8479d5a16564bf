// Package podroutes gives a multi-node Skiff cluster its pod-to-pod routes
// the way flannel's host-gw backend does: every node keeps, in its node
// network namespace, one route per other node,
//
//	<their podCIDR> via <their InternalIP>  proto skiff (Protocol, 0x5c)
//
// so a packet from a pod on node A to a pod (or a Service endpoint) on
// node B leaves A for B's address on the LAN, and B delivers it onto its
// pod bridge. Nothing is encapsulated: the nodes must share an L2 segment
// (each other's InternalIP is on-link). A peer whose InternalIP is not on
// a connected network is refused by the kernel (ENETUNREACH); its route is
// reported as failed and retried at the next sync. VXLAN is not built.
//
// Reconciler.Sync makes the node's Skiff routes exactly the wanted set;
// Controller runs Sync on every Node change and on a timer.
//
// # Invariants
//
//   - Only routes of protocol Protocol in the main table are Skiff's. Sync
//     lists, deletes and replaces only those; a route someone else made
//     for the same destination is never touched (the add fails with
//     EEXIST and the peer is reported as a conflict).
//   - Sync is idempotent: with the wanted set already in place it makes no
//     change, so running it on a timer costs one route dump.
//   - Peers: every Node but this one with an IPv4 podCIDR and an IPv4
//     InternalIP that is not one of this node's addresses. A podCIDR
//     overlapping this node's own, or an earlier peer's (by node name), is
//     skipped: two routes for one range would make one of the nodes
//     unreachable anyway.
//   - Routes are left in place when the agent stops (its pods keep running
//     and keep talking); a restarted agent adopts them at its first Sync.
//
// # Masquerade
//
// Traffic between pod CIDRs keeps its source address: the bridge CNI
// plugin runs with ipMasq off, and the service proxy masquerades ClusterIP
// traffic only from outside --cluster-cidr, so the agents must be given
// the server's --cluster-cidr (the default matches). NodePort and
// LoadBalancer traffic from outside is masqueraded by the proxy (policy
// Cluster), so its replies come back through the node it entered. Pod
// traffic to addresses outside the cluster is not masqueraded by Skiff.
package podroutes
