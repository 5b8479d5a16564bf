// Package endpointslicemirroring is Skiff's EndpointSlice mirroring
// controller: the Endpoints a user writes for a Service without a
// selector is mirrored into EndpointSlices, so the proxy (which reads
// EndpointSlices only) sends the Service's traffic to the hand-written
// addresses, as Kubernetes' endpointslicemirroring controller does.
//
// The shape is controller/doc.go's: informer handlers queue
// "namespace/name" keys (of Endpoints, Services and the controller's own
// slices); sync reads the caches, the pure Reconcile computes the writes.
//
// # What is mirrored
//
//   - An Endpoints is mirrored when a Service of the same name exists
//     and has no selector, and the Endpoints is not labelled
//     endpointslice.kubernetes.io/skip-mirror=true (the endpoints
//     controller labels every Endpoints it writes so) and is not a
//     leader-election lock (the control-plane.alpha.kubernetes.io/leader
//     annotation). Otherwise its mirrored slices are deleted: when the
//     Endpoints or the Service goes, or the Service gains a selector.
//   - Only slices labelled endpointslice.kubernetes.io/managed-by=
//     endpointslicemirroring-controller.k8s.io are read or written. The
//     EndpointSlice controller manages only slices labelled
//     endpointslice-controller.k8s.io of Services with a selector, so
//     the two never write the same slice.
//
// # The slices
//
//   - One slice per address family and port set (subsets with the same
//     ports share a slice), generateName "<endpoints>-", a controller
//     owner reference to the Endpoints.
//   - Labels: the Endpoints' labels, kubernetes.io/service-name=<name>
//     and the managed-by label. Annotations: the Endpoints' annotations
//     but kubectl.kubernetes.io/last-applied-configuration (the
//     last-change trigger time is carried over).
//   - Endpoints: each address once per slice, ready for addresses and
//     not ready for notReadyAddresses, with targetRef, nodeName and
//     hostname as written. Addresses that are not valid endpoint IPs
//     (invalid, loopback, link-local, unspecified) are skipped. At most
//     MaxEndpointsPerSubset (1,000) endpoints of a subset are mirrored.
//   - Ports: name, port, protocol (TCP when unset) and appProtocol.
//
// # Writes
//
//   - Existing slices are matched by address type and port set and
//     updated in place (with their resourceVersion); extra ones are
//     deleted (guarded by UID).
//   - The controller remembers the slices it wrote; a sync whose cache
//     does not show them yet waits for it (retried with back-off), so a
//     stale cache never causes a double create.
package endpointslicemirroring
