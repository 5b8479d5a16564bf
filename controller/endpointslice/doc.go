// Package endpointslice is Skiff's EndpointSlice controller: for every
// Service with a selector it keeps a set of discovery.k8s.io/v1
// EndpointSlices holding the Service's pods, as Kubernetes'
// EndpointSlice controller does.
//
// The work is split as in Kubernetes: informer handlers only queue
// Service keys; a worker's sync reads the caches, Reconcile (pure,
// table-tested) computes the slices to create, update and delete, and
// apply writes them through the API.
//
// # Construction
//
// New(Deps, Options), as every controller (controller/doc.go): Deps are
// the consumer-side Client (EndpointSlice writes) and Cache interfaces of
// the three informers, an optional Recorder and Log; Options are
// MaxEndpointsPerSlice and Workers. Run(ctx) waits for the caches and
// runs workqueue.Run, whose OnError hook records the
// FailedToUpdateEndpointSlices Warning. The tests on internal/fakeapi are
// what `go test -short` runs; the integration tests use a real server.
//
// # Which Services and slices
//
//   - Only Services with a non-empty selector that are not ExternalName
//     get slices. The controller never writes slices of other Services.
//   - Only slices labelled endpointslice.kubernetes.io/managed-by=
//     endpointslice-controller.k8s.io are read or written; slices with
//     any other manager are never touched.
//   - Every slice carries kubernetes.io/service-name=<service>, the
//     managed-by label, the Service's own labels (minus the reserved
//     ones), service.kubernetes.io/headless for headless Services,
//     generateName "<service>-", and a controller owner reference to the
//     Service (blockOwnerDeletion). A slice owned by another Service UID
//     (an earlier Service of the same name) is deleted.
//   - When a Service is gone its slices are deleted at once (guarded by
//     their UIDs), including slices it created that the cache does not
//     show yet; the garbage collector would also delete them later.
//
// # Endpoints
//
//   - One endpoint per pod of the Service's namespace that matches the
//     selector, has an IP (status.podIPs, else status.podIP) and is not
//     Succeeded or Failed. Conditions: serving = Ready is True;
//     terminating = the pod has a deletionTimestamp; ready = serving and
//     not terminating, or always with publishNotReadyAddresses.
//   - Each endpoint has its addresses, nodeName, targetRef (Pod,
//     namespace, name, uid) and hostname when spec.hostname is set and
//     spec.subdomain is the Service's name.
//   - Ports: for each Service port its name, protocol and the target
//     port resolved on the pod (a named targetPort is looked up in the
//     pod's container ports by name and protocol). Pods whose resolved
//     port sets differ are in different slices; a port that does not
//     resolve on a pod is left out of that pod's port set.
//   - Slices are per address type: the Service's ipFamilies (else its
//     ClusterIP's family; a headless Service without ipFamilies gets IPv4
//     and, when a pod has an IPv6 address, IPv6).
//
// # Packing
//
//   - At most Options.MaxEndpointsPerSlice (default 100) endpoints a slice.
//   - Existing slices are updated in place; endpoints that went are
//     removed; new endpoints go first into slices already being written,
//     then into the unchanged slice they fill closest to full, and a new
//     slice is created only when needed. Nothing is rebalanced, so one
//     pod's change rewrites exactly the one slice that holds it.
//   - A Service without endpoints keeps one empty placeholder slice.
//   - The annotation endpoints.kubernetes.io/last-change-trigger-time on
//     every slice written is the time of the change that triggered the
//     write: the earliest new pod Ready transition (its condition's
//     lastTransitionTime), or the Service's creation on its first sync.
//
// # Consistency
//
//   - The controller remembers the generation of every slice it wrote and
//     every slice it deleted (the slice tracker). A sync that finds the
//     slice cache older than those writes does nothing and is retried when
//     the cache catches up, so a stale cache never causes a double create
//     or an update from an old state.
//   - Updates carry the cached resourceVersion; a conflict is retried.
//   - Slice changes by anyone else requeue the Service (after 1 s) so the
//     controller repairs them; its own writes do not.
//   - A sync fails at most 15 times in a row with exponential back-off;
//     then the Service is dropped until its next change.
//   - No worker starts before the three caches have synced; Run returns
//     only after every goroutine it started has exited.
//
// # Cost
//
//   - Handlers only queue keys; pod updates that cannot change an
//     endpoint (and resyncs) queue nothing.
//   - A sync reads the Service's pods and slices from the caches. A Memo
//     per Service of 64 pods or more keeps what was derived from each pod
//     object, so only changed pods are derived again; existing endpoints
//     are matched to their pods by name without allocating, and only slices
//     being written are copied. A 5,000-pod Service's flip costs about
//     0.7 ms of compute. Smaller Services derive their pods at each sync:
//     that is cheaper than keeping about 600 bytes per pod.
package endpointslice
