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
//     dependent with blockOwnerDeletion=true refers to it any more, in the
//     graph and in a live list (see "No dependents left" below); the
//     server then deletes the owner.
//   - A dependent that would wait on an owner that waits on it (a cycle) has
//     its blockOwnerDeletion cleared before it is deleted, as Kubernetes
//     does, so cycles finish.
//
// # Orphan deletion
//
//   - An owner with deletionTimestamp and the "orphan" finalizer first has
//     its reference removed from every dependent, those of the graph and
//     those of a live list (see "No dependents left" below); only then is
//     the "orphan" finalizer removed. A dependent is never left referring
//     to an owner that is gone, so it is never collected for it.
//
// # No dependents left
//
//   - The graph learns of a dependent from a watch event that may arrive
//     after its owner's deletion has been processed. So before removing an
//     "orphan" or "foregroundDeletion" finalizer, which says "no
//     dependents remain", the collector lists live every namespaced
//     resource in the owner's namespace (every resource in every namespace
//     for a cluster-scoped owner) and keeps the objects whose
//     ownerReferences name the owner's uid. A list without resourceVersion
//     reads the store's current revision, which is past the owner's
//     deletion, so it holds every dependent created before that deletion
//     that still exists.
//   - The decision is made again on the graph's dependents merged with the
//     listed ones (the listed state wins). Listed objects the graph has not
//     seen are fed into it, so they are synced (deleted for Foreground,
//     orphaned for Orphan) before the finalizer goes. A known object is not
//     overwritten: its watch state may be newer than the list.
//   - A failed list fails the sync, which is retried with back-off: the
//     finalizer stays until a list succeeds.
//   - The list is made only when the graph already says "done", once per
//     owner deletion in the normal case; while the graph shows blocking
//     dependents no list is made.
//   - Why a live list and not "wait until every reflector has seen the
//     owner's deletion revision": a reflector's revision advances only on
//     its own resource's events and on bookmarks (every few seconds), so a
//     quiet resource would hold every Orphan and Foreground deletion for a
//     bookmark period, and a reflector in back-off or relisting for longer;
//     a bounded wait would then have to guess. The list is exact, needs no
//     timing and costs a few paged reads at the rare moment of finalizer
//     removal.
//   - A dependent created (or adopted) after the owner's deletion mark is
//     outside this guarantee, as in Kubernetes: once the owner is gone it
//     is collected like any dependent of an absent owner.
//   - The propagation chosen when the cascade deletes a dependent
//     (Foreground if it has dependents of its own) is read from the graph;
//     a grandchild created in the instant before the cascade reaches its
//     parent is then collected in the background after its parent goes,
//     possibly after the top owner. It is never kept and never wrongly
//     deleted.
//
// # Custom resources
//
//   - Options.Custom gives the custom resources served (one version per
//     CustomResourceDefinition); the collector follows them as upstream's
//     follows discovery (custom.go). A new one gets a reflector once the
//     graph is synced; workers may already run, which is safe since nothing
//     is deleted on the graph's word alone. A removed one loses its
//     reflector and its objects leave the graph, so their dependents are
//     synced.
//   - An owner reference to the kind of a custom resource that was served
//     and is no longer counts as absent: its objects were deleted with its
//     definition. A kind never served stays unresolvable (a live owner).
//
// # Consistency
//
//   - No worker starts before every resource has been listed once, so a
//     partial first graph never drives a sync.
//   - Nothing is deleted on the graph's word alone: a dependent is deleted
//     only after a live GET found each of its owners absent (or waiting in
//     the foreground), and finalizers say "no dependents" only after a live
//     list agreed. A graph that lags the store can delay work, never cause
//     a wrong delete.
//   - A delete carries the uid and resourceVersion the decision was made
//     on: an object that changed after it was read (an owner deleted with
//     Orphan removing its reference meanwhile) is not deleted but decided
//     again (409 requeues it). The server's TestGCOrphanRightAfterCreate
//     once saw the unguarded delete take an orphaned Service.
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
