// Package podroutes gives a multi-node Skiff cluster its pod-to-pod routes
// the way flannel does, in one of two modes.
//
// host-gw (NewReconciler): every node keeps, in its node network
// namespace, one route per other node,
//
//	<their podCIDR> via <their InternalIP>  proto 92 (Protocol)
//
// so a packet from a pod on node A to a pod (or a Service endpoint) on
// node B leaves A for B's address on the LAN, and B delivers it onto its
// pod bridge. Nothing is encapsulated: the nodes must share an L2 segment
// (each other's InternalIP is on-link). A peer whose InternalIP is not on
// a connected network is refused by the kernel (ENETUNREACH); its route is
// reported as failed ("not on-link") and retried at the next sync.
//
// vxlan (NewVXLANReconciler), as flannel's vxlan backend: a device
// skiff.vxlan (VNI 1, UDP 8472, local = this node's InternalIP, learning
// off, MTU 1450) holding this node's VTEP address (its podCIDR's network
// address, /32), and per peer
//
//	<their podCIDR> via <their VTEP address> dev skiff.vxlan onlink  proto 92
//	neighbour <their VTEP address> lladdr VtepMAC(their podCIDR) permanent
//	fdb VtepMAC(their podCIDR) dst <their InternalIP> self permanent
//
// The MACs derive from the podCIDRs, so nothing is published on the Nodes.
// The nodes only need UDP 8472 between them, across routers too.
//
// Reconciler.Sync makes the node's Skiff routes exactly the wanted set;
// Controller runs Sync on every Node change and on a timer.
//
// # Invariants
//
//   - Only routes of protocol Protocol in the main table are Skiff's. Sync
//     lists, deletes and replaces only those; a route someone else made
//     for the same destination is never touched (the add fails with
//     EEXIST and the peer is reported as a conflict). The device
//     skiff.vxlan is Skiff's, with every neighbour and forwarding entry on
//     it: a device of that name that differs from the wanted one is
//     replaced, and host-gw mode deletes one an earlier vxlan mode left.
//   - Sync is idempotent: with the wanted state already in place it makes
//     no change, so running it on a timer costs a few dumps.
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
// Cluster) to the address it leaves the entry node by, so its replies
// come back through that node. Pod traffic to addresses outside the
// cluster is not masqueraded by Skiff.
package podroutes
