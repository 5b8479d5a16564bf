// Package fakeapi is an in-memory, stateful stand-in for the Skiff API
// server, for controller tests. It implements the calls the controllers'
// consumer interfaces make (List, Watch, Get, Create, Update, Patch,
// Delete) over JSON objects and enforces the server rules the controllers
// depend on, so a controller that breaks them fails its tests.
//
// # Server rules it enforces
//
//   - Identity: Create assigns a unique metadata.uid; resourceVersion is one
//     global, increasing revision; a write with a stale resourceVersion gets
//     409 Conflict; a delete whose preconditions.uid differs gets 409.
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
// No validation, selectors, graceful pod deletion or garbage collection:
// the controllers under test provide that behaviour.
package fakeapi
