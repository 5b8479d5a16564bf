// Package fakeapi is an in-memory, stateful stand-in for the Skiff API
// server, for controller and scheduler tests. It implements the calls the
// controllers' consumer interfaces make (List, Watch, Get, Create, Update,
// Patch, Delete, and Do for pod bindings) over JSON objects and enforces
// the server rules the controllers depend on, so a controller that breaks
// them fails its tests. client.NewInformerFor runs informers over a
// Server; Server.Client is the view with *client.Client's Create (which
// decodes the stored object back) and Do.
//
// # Server rules it enforces
//
//   - Identity: Create assigns a unique metadata.uid (and a name from
//     generateName plus a five-digit counter); resourceVersion is one
//     global, increasing revision; generation is 1 on create and grows
//     when anything outside metadata and status changes (a binding sets
//     spec.nodeName without growing it); a write with a stale
//     resourceVersion gets 409 Conflict; a delete whose preconditions.uid
//     differs gets 409.
//   - Deletion: DELETE with propagationPolicy Foreground adds the
//     "foregroundDeletion" finalizer, Orphan adds "orphan", Background (the
//     default) removes both. An object with finalizers is only marked
//     (deletionTimestamp) and lives until an update or patch removes the
//     last finalizer; no finalizer may be added once it is marked.
//   - Namespaces: created with spec.finalizers ["kubernetes"] and phase
//     Active; deleting one marks it Terminating; it disappears once PUT
//     .../finalize empties spec.finalizers (and metadata.finalizers is
//     empty). Objects cannot be created in a missing (404) or terminating
//     (403) namespace.
//   - Patches: merge patch and JSON patch (a failed "test" is 422 Invalid);
//     other types are 415.
//   - Watch: events after a resourceVersion, in order, per resource and
//     namespace; a start revision older than the last Expire gets an ERROR
//     event with a 410 Gone Status, as the real server does.
//
// # What it is not
//
// No validation, selectors, no-op write suppression, graceful pod deletion or garbage collection:
// the controllers under test provide that behaviour.
package fakeapi
