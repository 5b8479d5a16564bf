// Package namespace is Skiff's namespace controller: it empties a
// namespace that is being deleted and then finalizes it, so the API server
// can remove it, as Kubernetes' namespace controller does.
//
// # Invariants
//
//   - It acts only on a namespace whose live state (read with a GET, never
//     from the watch cache alone) has a deletionTimestamp; Active namespaces
//     are never touched.
//   - Every namespaced resource of the table, and every namespaced custom
//     resource served when the pass starts (Options.Custom: the
//     CustomResourceDefinitions'), is emptied: each object without
//     a deletionTimestamp is deleted once per pass with propagationPolicy
//     Background and its own default grace period (pods terminate
//     gracefully), guarded by preconditions.uid. Objects already being
//     deleted are waited for, never deleted again.
//   - spec.finalizers is emptied through PUT .../namespaces/{name}/finalize
//     only after a pass finds no object left in any namespaced resource;
//     until then the namespace is requeued with exponential back-off.
//   - The finalize PUT carries the resourceVersion just read; a Conflict is
//     retried on a fresh read. A namespace whose spec.finalizers is already
//     empty is not written again.
//   - No worker starts before the namespaces have been listed once; Run
//     returns only after every goroutine it started has exited.
package namespace
