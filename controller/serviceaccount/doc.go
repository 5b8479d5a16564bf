// Package serviceaccount is Skiff's service accounts controller: every
// active namespace has a ServiceAccount named "default", created when the
// namespace appears and created again when it is deleted, as Kubernetes'
// serviceaccounts-controller does. Pods that name no ServiceAccount run as
// that one (the API server defaults spec.serviceAccountName on create).
// The controller writes only ServiceAccounts; it mounts no tokens and
// creates no token Secrets.
//
// # Flow
//
//	namespaces informer (add, update) ─┐
//	serviceaccounts informer (delete) ─┴─► queue of namespace names ─► sync(ns)
//	sync(ns): Reconcile(namespace, has default SA) → create "default" or nothing
//
// # Invariants
//
//   - A namespace that is absent from the cache, being deleted
//     (deletionTimestamp) or not Active gets nothing: the namespace
//     controller is emptying it, and the API server refuses new content in
//     a terminating namespace anyway.
//   - The controller never updates or deletes a ServiceAccount; a user's
//     changes to "default" are kept.
//   - No expectations are needed: a create from a stale cache gets 409
//     AlreadyExists, which counts as done, so the controller never writes
//     two ServiceAccounts of one name. A create refused because the
//     namespace went away or is terminating (404, 403) is done as well;
//     other failures are retried with back-off (200ms up to 30s, at most
//     15 times in a row, then again at the namespace's next change).
package serviceaccount
