// Package gc is Skiff's garbage collector: it deletes objects whose owners
// are gone and carries out Foreground and Orphan deletion, following the
// ownerReferences of every resource, as the Kubernetes garbage collector
// does.
//
// The controller watches the metadata of every resource it is given and
// keeps a graph: uid -> object (resource, namespace, name, ownerReferences,
// finalizers, deletion state) and owner uid -> dependents. Graph changes put
// uids on a keyed work queue; a worker syncs one uid at a time: it reads
// the object and its owners live from the API, computes a plan with the pure
// function decide, and applies it.
//
// # Background deletion
//
//   - A dependent is synced when it appears or changes while one of its
//     owners is not in the graph or is being deleted, and whenever one of
//     its owners leaves the graph (a DELETED event, or missing from a
//     relist). A dependent of present, live owners costs no API call.
//   - An owner is absent when a live GET of its name (in the dependent's
//     namespace for a namespaced owner) finds nothing or an object with
//     another uid. A cached graph entry alone never makes an owner absent;
//     only absent uids are cached, because a uid never comes back.
//   - A dependent whose every owner is absent is deleted (preconditions.uid
//     set, so a recreated object of the same name is never hit), with the
//     policy its own finalizers ask for (orphan, foregroundDeletion), else
//     Background.
//   - A dependent with at least one live owner is kept; its references to
//     absent owners, and to owners waiting for their dependents (below), are
//     removed.
//   - An owner reference that cannot be resolved (a kind not in the resource
//     table, or a namespaced owner kind from a cluster-scoped dependent)
//     counts as a live owner: the collector never deletes on a guess.
//
// # Foreground deletion
//
//   - An owner with deletionTimestamp and the "foregroundDeletion" finalizer
//     is waiting for its dependents. Each dependent without another live
//     owner is deleted: with Foreground if it has dependents of its own (so
//     the wait propagates down the chain), else by its finalizers or
//     Background.
//   - The owner's "foregroundDeletion" finalizer is removed only when no
//     dependent with blockOwnerDeletion=true refers to it any more; the
//     server then deletes the owner.
//   - A dependent that would wait on an owner that waits on it (a cycle) has
//     its blockOwnerDeletion cleared before it is deleted, as Kubernetes
//     does, so cycles finish.
//
// # Orphan deletion
//
//   - An owner with deletionTimestamp and the "orphan" finalizer first has
//     its reference removed from every dependent; only then is the "orphan"
//     finalizer removed.
//
// # Consistency
//
//   - No worker starts before every resource has been listed once, so a
//     partial graph never removes a foregroundDeletion finalizer early.
//   - Every edit of finalizers or ownerReferences is a JSON patch that tests
//     metadata.uid and metadata.resourceVersion of the object just read, so
//     a concurrent writer is never overwritten; a failed test (422) or a
//     Conflict (409) is retried on a fresh read.
//   - Watches that fall behind a compaction (410 Gone) relist; the relist's
//     Replace turns objects that vanished meanwhile into deletions.
//   - A failed sync is retried with exponential back-off, without limit:
//     garbage is never forgotten.
//   - Run owns every goroutine it starts (reflectors, workers) and returns
//     only after they have all exited.
package gc
