// Package nodeipam is Skiff's node IPAM controller: it gives every Node a
// pod subnet (spec.podCIDR and spec.podCIDRs) out of --cluster-cidr, as
// Kubernetes' range allocator does. The node agent waits for it before it
// builds its pod bridge.
//
// # Invariants
//
//   - One subnet per node, of Options.NodeMaskSize bits (/24 by default
//     for IPv4, /64 for IPv6); no two nodes ever get the same subnet from
//     this controller.
//   - Before any subnet is handed out, the allocations are rebuilt from the
//     podCIDRs the nodes already carry (Run waits for the nodes cache), so a
//     restart never re-issues a subnet in use.
//   - A subnet is reserved for its node from the moment it is picked until
//     the node is deleted: a failed or conflicting write keeps the
//     reservation, and the retry writes the same subnet (a stale cache
//     cannot make the controller pick two).
//   - A subnet is released when the Node is deleted (the informer no longer
//     has it); a node recreated with the same name gets a subnet anew.
//   - A podCIDR set by someone else is respected: it is recorded as taken
//     (or, when it collides with another node's, logged and reported as a
//     Warning event, since podCIDRs are immutable once set).
//   - A full range records a CIDRNotAvailable Warning event on the node and
//     retries with back-off (100ms up to 30s).
package nodeipam
