// Package endpoints is Skiff's Endpoints controller: for every Service
// with a selector it keeps one core/v1 Endpoints, named as the Service,
// listing the Service's pods, as Kubernetes' endpoints controller
// (pkg/controller/endpoint) does. Skiff's proxy reads EndpointSlices
// (controller/endpointslice); Endpoints exist for the clients and
// manifests that still read or write them.
//
// The shape is controller/doc.go's: informer handlers queue Service keys;
// sync reads the caches, the pure Reconcile computes the Endpoints and
// sync creates, updates or deletes it.
//
// # Which Services
//
//   - Services with a non-empty selector that are not ExternalName. The
//     Endpoints of a Service without a selector is the user's: never
//     written by this controller (controller/endpointslicemirroring
//     mirrors it into EndpointSlices).
//   - When a Service is gone its Endpoints is deleted, whoever wrote it.
//     "Gone" is decided by a live GET, never by the Services cache alone:
//     that cache can lag the Endpoints cache, and a user's Endpoints
//     written right after its selectorless Service would otherwise be
//     deleted.
//     At start every Endpoints is queued once, so the Endpoints of a
//     Service deleted while the controller was down goes too (an
//     Endpoints created before its Service is deleted only then).
//
// # Addresses
//
//   - A pod is in the Endpoints when it matches the selector in the
//     Service's namespace, is not Succeeded or Failed, has an IP, and is
//     not terminating (terminating pods stay with
//     publishNotReadyAddresses).
//   - Its address is its IP of the Service's family (the first
//     ipFamily, else the ClusterIP's family, else the family of the
//     pod's podIP), with nodeName, targetRef (Pod, namespace, name, uid)
//     and hostname when spec.hostname is set and spec.subdomain is the
//     Service's name.
//   - Ready pods (Ready condition True) go in addresses, the others in
//     notReadyAddresses; with publishNotReadyAddresses every pod goes in
//     addresses.
//
// # Ports and subsets
//
//   - Each Service port gives an Endpoints port with the Service port's
//     name, protocol and appProtocol and the targetPort resolved on the
//     pod: a number as is (unset: the Service port), a name looked up in
//     the pod's container ports by name and protocol. A port that does
//     not resolve on a pod leaves that pod out of that port.
//   - Subsets are packed as Kubernetes' RepackSubsets: ports with the
//     same set of (address, readiness) share a subset, so pods whose
//     named port resolves to different numbers are in different subsets.
//     Addresses are sorted by IP, ports by name; the order of subsets is
//     deterministic.
//   - A headless Service without ports gets its addresses in one subset
//     without ports; any other Service without ports gets no subsets.
//
// # Labels and annotations
//
//   - Labels: the Service's labels, service.kubernetes.io/headless for a
//     Service without a ClusterIP, and endpointslice.kubernetes.io/
//     skip-mirror=true so the mirroring controller leaves it alone.
//   - At most api.MaxEndpointsAddresses (1,000) addresses are written, as
//     Kubernetes' truncateEndpoints: ready addresses first, each subset
//     keeping its proportional share (rounded up); the annotation
//     endpoints.kubernetes.io/over-capacity: truncated marks it, and is
//     removed when the addresses fit again. (EndpointSlices hold every
//     endpoint.)
//   - endpoints.kubernetes.io/last-change-trigger-time is the earliest
//     Ready transition of the pods that are new or changed readiness in
//     this write (and the Service's creation on the first write); it is
//     removed when no such change is known (a pod went away).
//   - Other annotations and labels written by others on update are kept
//     (annotations) or replaced (labels) as in Kubernetes.
//
// # Writes
//
//   - Nothing is written when subsets, labels and the over-capacity
//     annotation are already as wanted (a pod's resourceVersion in
//     targetRef is no change).
//   - After a write, a sync whose cache still shows the replaced
//     resourceVersion (or, after a create, no Endpoints) waits for the
//     cache (retried with back-off), so a stale cache never causes a
//     conflicting write.
//   - An Endpoints deleted by someone else is written again.
package endpoints
