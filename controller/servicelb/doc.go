// Package servicelb is Skiff's load balancer for Services of type
// LoadBalancer where there is no cloud: it hands each such Service one
// address from a pool (`skiff server --lb-cidr`) and writes it to
// status.loadBalancer.ingress, which every node's proxy then forwards like
// the ClusterIP (kube-proxy's LoadBalancer rules). Getting packets for the
// pool to a node is the network's job: a route on the router (or on the
// client, as the demo does), as with MetalLB in layer-3 mode.
//
// # Invariants
//
//   - No two Services hold the same pool address: the controller is the
//     pool's only writer, with one lock over its table, rebuilt from every
//     Service's status before the first assignment.
//   - An address outside the pool in a Service's status is someone else's
//     and is never touched.
//   - A Service that stops being a LoadBalancer (or is deleted) gives its
//     address back; its status is cleared when it still exists.
//   - spec.loadBalancerIP is honoured when it is in the pool and free.
//   - A full pool leaves the Service pending (no ingress), with a
//     Warning event, and retries with back-off.
package servicelb
