// Package apiserver serves Skiff's Kubernetes-shaped REST API over a
// store.Interface: the same paths, verbs, JSON, watch stream and Status
// errors as the Kubernetes API for the resources in Config.Resources.
//
// # Request path
//
// Every request passes, in order: recoverer (a panic becomes a 500 Status),
// requestLogger (slog), metrics (apiserver_request_total,
// apiserver_request_duration_seconds), bodyDeadline (a request with a body
// must send it within Config.BodyTimeout, else 408), then, for everything
// but /healthz, /livez, /readyz and /version, authenticate (Bearer token →
// User in the context, else 401), inflight (429 over
// Config.MaxRequestsInFlight reads or MaxMutatingRequestsInFlight writes,
// as kube-apiserver's max-in-flight filter) and limitBody (413 over
// Config.MaxBodyBytes). Bodies are read into a buffer that grows with the
// bytes that arrive, never by the Content-Length announced (readBody). chi
// routes discovery (/api, /apis, /api/v1, /apis/{g}/{v}), OpenAPI and
// /metrics, each authorized as a non-resource request (Attributes.Path,
// verb = the lowercase method), as are unknown paths (403 or 404);
// everything under /api/v1/ and /apis/{g}/{v}/ is parsed by parsePath into
// (resource, namespace, name, subresource), mapped to a Kubernetes verb,
// authorized (Config.Authorizer, with a list's or watch's parsed field
// selector; a ViewAuthorizer may narrow what a read returns) and served by
// one handler method (a path naming no served resource is authorized as
// the resource it names, then 404):
//
//	list, watch, create, deletecollection   on the collection
//	get, update, patch, delete              on the object
//	status (get/update/patch), scale (get/update/patch), binding (create),
//	log (get), finalize (update, namespaces)
//
// Config.Actions add create-only REST (actions.go, as Kubernetes' create-only
// storage: TokenRequest, the self reviews): a subresource of a served
// resource ("serviceaccounts/token") or a cluster-scoped resource of its
// own in its group-version ("selfsubjectaccessreviews.authorization.k8s.io"),
// listed in discovery with the verb create, authorized as a create, its
// body decoded as a write's is (kind and apiVersion, when set, must be the
// Action's: 400), answered 201 with what Serve returns; nothing is stored.
// Config.Paths add non-resource GET paths (the issuer discovery documents).
// Config.Reads add computed read-only resources (reads.go, as an
// aggregated API server's: metrics.k8s.io's nodes and pods), keyed
// "resource.group": listed in discovery with the verbs get and list,
// authorized as a get or list of that resource, a list's labelSelector
// parsed as a stored list's; any other method or a watch is 405.
//
// A write decodes the body strictly (sigs.k8s.io/json; unknown or duplicate
// fields are 400 naming their path unless fieldValidation says otherwise;
// JSON, YAML, or Kubernetes protobuf, which package protobuf turns into the
// same JSON first; answers are JSON whatever the Accept header),
// fills server-owned metadata, defaults and validates (422 with one cause per
// field error), and then runs one store transaction that re-reads the stored
// object, checks resourceVersion preconditions (409), checks the namespace
// (creates only: 404 when absent, 403 when terminating), calls the
// resource's TxnHook, and puts the new value. After the transaction the
// hook's Outcome.OnCommit or OnAbort runs. PUT and PATCH do their heavy
// part before the transaction (update.go): they read the object, compute,
// check and encode the new version, and their transaction only checks that
// the object is still at the revision read (else they start again), calls
// the hook and puts the value. An object encoded over MaxObjectBytes is 413.
//
// # Key layout
//
//	/registry/<group or "core">/<resource>/<namespace>/<name>   namespaced
//	/registry/<group or "core">/<resource>/<name>               cluster-scoped
//
// (KeyFor). A list or watch of one namespace uses the prefix ending in
// "<namespace>/", across namespaces the prefix ending in "<resource>/".
//
// # Invariants
//
//   - A stored value is the object's complete JSON with apiVersion, kind and
//     metadata.resourceVersion equal to the revision of the transaction that
//     wrote it. Gets, lists and watch events therefore send stored bytes as
//     they are: a list is the envelope around the concatenated values, never
//     re-encoded. Label selectors read only metadata (rawjson.go); field
//     selectors decode the object to call ResourceInfo.Fields.
//   - uid, creationTimestamp, generation, deletionTimestamp and
//     deletionGracePeriodSeconds are set only by the server. generation is 1
//     on create and grows by one whenever anything outside metadata and
//     status changes.
//   - On a resource with a status subresource, the main resource never
//     changes status and /status changes nothing but status.
//   - An update that changes nothing writes nothing: no new revision, no
//     watch event.
//   - An object leaves the store in exactly two ways: a DELETE with nothing
//     holding it (finalizers, a bound pod's grace period, a namespace's
//     spec.finalizers), or an update that removes the last such hold. The
//     TxnHook sees OpDelete in both cases and only then.
//   - A patch applies to the object as stored when its transaction
//     commits (a stale read is computed again; after optimisticTries, inside
//     the transaction), so concurrent patches never conflict unless a patch
//     sets metadata.resourceVersion itself. The same holds for a PUT
//     without resourceVersion.
//   - The store closure of a PUT or PATCH (of an object or its status)
//     neither parses, merges, validates nor encodes the object, unless the
//     resource's hook may change the object (the encoding then follows the
//     hook) or the object changed under every optimistic try (the
//     fallback). Scale, binding and finalize still update inside their
//     transaction; their objects are small.
//   - Every error response is a Status with the Kubernetes reason and code.
//
// # Custom resources
//
// SetCustomResources (custom.go) replaces, while the server runs, a second
// set of resources served like those of Config.Resources: in groups of
// their own, listed in discovery after the built-in groups, each with the
// TxnHook given with it, without OpenAPI, a strategic merge patch being
// 415. Package
// apiextensions drives it from the stored CustomResourceDefinitions. A
// ResourceInfo whose StorageVersion is not its Version stores its objects
// with the storage version's apiVersion (always the first field of their
// JSON) and every answer, read or write, has it rewritten to the version
// asked for.
//
// A built-in resource may be served in a second version by conversion
// (api.ResourceInfo.Conversion; autoscaling/v1 HorizontalPodAutoscalers,
// stored as autoscaling/v2): it is listed in Config.Resources after its
// stored version and shares its name, hook and stored objects; bodies are
// decoded strictly into the served version's type and converted to the
// stored one before defaulting and validation; every answer (get, list,
// watch, write) is converted back; OpenAPI describes the served type.
// Discovery lists a group's versions by kube-apiserver's version
// priority (api.CompareVersions), the preferred one first.
//
// # Watch
//
// resourceVersion unset or "0" sends ADDED for the current objects (one store
// List) and then follows store.Watch from that list's revision; "N" follows
// store.Watch from N. A compacted N yields a 200 stream holding one ERROR
// event with a 410 Gone Status. Selectors are applied to old and new values,
// so an object that stops matching is sent as DELETED and one that starts
// matching as ADDED. DELETED objects carry the revision of the deletion.
// BOOKMARKs (allowWatchBookmarks) come from store progress events.
package apiserver
