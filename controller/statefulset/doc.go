// Package statefulset is Skiff's StatefulSet controller: it keeps, for each
// StatefulSet, the pods <name>-<ordinal> with stable names and network
// identities, brought up, scaled down and updated in order, as Kubernetes'
// StatefulSet controller does.
//
// # Shape
//
// Informers on statefulsets and pods (injected; the caller runs them) feed
// a keyed work queue of "namespace/name". A worker's sync reads the caches,
// computes a Plan with the pure function computePlan (set, its pods,
// revisions, time -> actions), applies it, and writes the status. Failed
// syncs are retried with exponential back-off up to Options.MaxRetries,
// then dropped until the set or one of its pods changes.
//
// # Pods
//
//   - Pod <set>-<i> for i in [ordinals.start, ordinals.start+replicas),
//     built from spec.template: its labels plus
//     statefulset.kubernetes.io/pod-name, apps.kubernetes.io/pod-index and
//     controller-revision-hash; its annotations; a controller
//     ownerReference (blockOwnerDeletion) to the set; spec.hostname = the
//     pod's name and spec.subdomain = spec.serviceName, so that DNS can
//     answer <pod>.<serviceName>.<ns>.svc.<domain>.
//   - A set's pods are the pods whose controller reference has the set's
//     uid. An orphan pod (no controller, not being deleted) with a name of
//     the set and labels matching the selector is adopted (PUT guarded by
//     its resourceVersion). Only names <set>-<decimal ordinal> count;
//     other pods the set owns are left alone.
//
// # Ordering (computePlan)
//
//   - OrderedReady (default): creates go lowest ordinal first, one at a
//     time, each only when every lower pod is Running, Ready and available
//     (minReadySeconds); a terminating or unready pod blocks. Scale-down
//     deletes the highest ordinal first, one at a time, only when every
//     remaining replica is healthy, and the next only once the last is gone
//     from the API.
//   - Parallel: every missing pod is created and every pod beyond the
//     replicas is deleted in one sync, without waiting.
//   - A pod whose phase is Failed (or Succeeded) is deleted and, once gone,
//     recreated with the same name; so is a pod deleted by anyone else.
//   - RollingUpdate (default): the revision is the FNV hash of
//     spec.template, <set>-<hash> in the controller-revision-hash label.
//     After scaling is settled, the highest pod at or above the partition
//     that is not at the update revision is deleted (and recreated at the
//     update revision), one pod at a time, the next only once every pod
//     above it is healthy. Pods below the partition are recreated at the
//     current revision. OnDelete replaces nothing: a pod deleted by the
//     user comes back at the update revision.
//
// # Revisions and status
//
//   - status.updateRevision is the hash of spec.template;
//     status.currentRevision is the revision of the pods before the update
//     started, kept in the status itself, and becomes the update revision
//     once every pod is updated and Ready (under both strategies;
//     Kubernetes does so for RollingUpdate only).
//   - History (with Deps.Revisions): each revision is a ControllerRevision
//     of that name whose data restores its template, numbered in order,
//     the update revision always the newest (a rollback renumbers its old
//     one); the others are cut to revisionHistoryLimit (default 10),
//     never the current revision nor one a pod runs
//     (controller/internal/history). `kubectl rollout history/undo sts`
//     read and patch these.
//   - A pod below the partition is recreated at the current revision from
//     its ControllerRevision's template, else from a template recovered
//     from a live pod of that revision; if neither is left, at the update
//     revision.
//   - replicas counts the set's pods, readyReplicas the Running and Ready
//     ones, availableReplicas those Ready for minReadySeconds,
//     current/updatedReplicas the pods not terminating at each revision;
//     observedGeneration is the generation the sync read. The status is
//     written (JSON patch of the status subresource, guarded by a test of
//     the set's uid) only when it differs from the cached one.
//
// # Expectations
//
//   - A create is expected (by pod name) before it is sent and observed
//     when the pod cache shows that pod; a delete is expected (by pod uid)
//     and observed when the cache shows the pod terminating or gone. A
//     failed write drops its expectation at once. While a set has
//     expectations outstanding its sync computes no plan (it still writes
//     status), so a cache that lags behind the controller's own writes
//     never causes a second create or an early delete. Expectations expire
//     after Options.ExpectationsTimeout (5 min).
//   - Deletes carry preconditions.uid, so a pod recreated under the same
//     name is never hit by a delete meant for its predecessor.
//
// # Claims (claims.go)
//
//   - Each spec.volumeClaimTemplates entry t gives the pod of ordinal i
//     the claim <t>-<set>-<i>: t's spec, labels (plus the selector's
//     matchLabels) and annotations, in the set's namespace. Missing claims
//     are created just before their pod (SuccessfulCreate "create Claim
//     data-web-0 Pod web-0 in StatefulSet web success"); a claim being
//     deleted fails the pod's create until it is gone. The pod's volume
//     named t (added, or replacing a template volume of that name) is a
//     persistentVolumeClaim volume of that claim. Claims are never updated
//     from the templates (which are immutable) and outlive their pods.
//   - Owner references follow spec.persistentVolumeClaimRetentionPolicy
//     (upstream's updateClaimOwnerRefForSetAndPod), brought in line on
//     every sync before the plan runs: whenDeleted Delete makes the set an
//     owner (the garbage collector deletes the claims with the set);
//     whenScaled Delete makes a condemned pod (ordinal out of range) the
//     owner, so its claim goes with it, and drops the set's reference;
//     Retain for both leaves claims unowned. So by default (Retain,
//     Retain) a scale-down keeps the claims and a scale-up reuses them.
//   - No expectations are needed for claims: their names are fixed, so a
//     create from a stale cache is AlreadyExists, counted as done; owner
//     updates carry the cached resourceVersion.
//
// # Events
//
// Through the injected EventRecorder (client/record), as Kubernetes words
// them: SuccessfulCreate "create Pod web-0 in StatefulSet web successful",
// SuccessfulDelete, FailedCreate / FailedDelete "... failed error: ...",
// RecreatingFailedPod.
//
// # Not done
//
// Identity repair of existing pods (Kubernetes rewrites a pod whose labels
// or hostname drifted), release of owned pods that stop matching the
// selector, maxUnavailable for rolling updates, and
// status conditions.
package statefulset
