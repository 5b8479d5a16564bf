// Package replicaset is Skiff's ReplicaSet and ReplicationController
// controller: it keeps spec.replicas pods of spec.template matching
// spec.selector for each apps/v1 ReplicaSet and core/v1
// ReplicationController, as upstream's pkg/controller/replicaset (which
// also runs ReplicationControllers, converted on the way in and out). One
// Controller runs one Kind (ReplicaSetKind or ReplicationControllerKind);
// the two kinds differ only in Kind's small adapter to Set (an RC's map
// selector becomes matchLabels, its status converts field by field).
//
// # Shape
//
// As controller/endpointslice: sync reads the caches, Reconcile (pure)
// turns the set and its candidate pods into a Plan (adopt, release,
// create n, delete these), the apply step (claim, manage) carries it out,
// ComputeStatus (pure) derives the status, and expectations keep a stale
// pod cache from causing a second create or delete.
//
// # Which pods are the set's (ControllerRef, as PodControllerRefManager)
//
//   - Only active pods are looked at: not Succeeded, not Failed, no
//     deletionTimestamp (upstream's FilterActivePods). Inactive pods are
//     never adopted, released, counted or deleted.
//   - A pod whose controller ownerReference has the set's uid is the set's
//     while its labels match the selector. When they no longer match it is
//     released (the reference removed) unless the set is being deleted.
//   - A pod with no controller ownerReference whose labels match is
//     adopted, unless the set is being deleted. Before the first adoption
//     of a round the set is read live from the API (RecheckDeletionTimestamp):
//     nothing is adopted if it is gone, has another uid or has a
//     deletionTimestamp.
//   - A pod controlled by anything else (a Deployment, another set) is
//     never touched, whatever its labels: upstream adopts orphans only.
//   - Adoption and release are merge patches of metadata.ownerReferences
//     that carry the pod's uid and resourceVersion as preconditions (a
//     merge patch replaces the whole list, so it must be computed from
//     the stored one); a pod gone meanwhile (404) is skipped, any other
//     failure ends the round before pods are created or deleted, as
//     upstream's claimPods error does. The controller reference is
//     {apiVersion, kind, name, uid, controller: true, blockOwnerDeletion:
//     true}, so the garbage collector deletes the pods with the set.
//
// # Replicas
//
//   - Pods are created or deleted only when the set's expectations are
//     satisfied and it is not being deleted (rsNeedsSync).
//   - Too few: create min(missing, 500) pods (BurstReplicas) from the
//     template (its labels, annotations, finalizers and spec), named by
//     generateName "<set>-" (cut to 58 characters, as upstream's name
//     generator), in slow-start batches of 1, 2, 4, ... (slowStartBatch):
//     the pods of a batch are created at once, and no batch starts after
//     one with a failure. A create refused because the namespace is
//     being terminated is not an error.
//   - Too many: delete min(surplus, 500) pods (uid preconditions, 16 at a
//     time), in upstream's getPodsToDelete order (ActivePodsWithRanks):
//     unscheduled before scheduled; Pending before Unknown before Running;
//     not Ready before Ready; lower controller.kubernetes.io/pod-deletion-cost
//     first; more related pods on the same node first (related: the pods
//     of every set with the same controller as this one, none for a set
//     without a controller, as upstream); both Ready: Ready for less time
//     first; more container restarts first; newer first. Times compare on
//     upstream's LogarithmicScaleDown scale (log2 of the age in ns, ties
//     by uid); the last tie is broken by name.
//
// # Expectations
//
// Before creating or deleting, the controller records how many creations
// and which deletions it expects for the set (UIDTrackingControllerExpectations:
// creations counted, deletions by pod name); pod events lower them (a pod
// that gets a deletionTimestamp counts as deleted at once). A creation
// that failed or was never tried (after a failing batch) lowers them too.
// While any are pending the set's pods are claimed and its status written,
// but none is created or deleted; pending expectations expire after
// Options.ExpectationsTTL (5 minutes) in case an event was lost.
//
// # Status
//
// ComputeStatus is upstream's calculateStatus over the owned active pods
// (after adoption): replicas; fullyLabeledReplicas (pods carrying every
// label of the template); readyReplicas; availableReplicas (Ready for
// strictly more than minReadySeconds, by the Ready condition's
// lastTransitionTime); observedGeneration = metadata.generation. A
// failed create or delete adds condition ReplicaFailure (True,
// FailedCreate or FailedDelete, the error as message: a quota or
// forbidden refusal reads as the API said it) when it is absent; a
// round without error removes it. terminatingReplicas is not set
// (upstream's DeploymentReplicaSetTerminatingReplicas gate, off). The
// status is written through the status subresource only when it changed;
// a conflict is retried once on a live read. A set with ready pods not
// yet available is looked at again when the first becomes available.
//
// # Controller
//
// New registers handlers on the set and pod informers and two indexes
// (pods by controlling set uid or as orphans of a namespace; sets by
// their own controller's uid); handlers only enqueue "namespace/name"
// keys. Run waits for both caches, then workers sync keys from a
// client/workqueue with back-off (100ms to 30s) and a retry cap (15).
//
// # Benchmarks
//
// BenchmarkReconcile1000 plans 1,000 replicas from scratch and scales
// 1,000 down to 0 (the pure step alone); BenchmarkCreate1000 (a real
// server) times a ReplicaSet of 1,000 replicas until its status says
// 1,000 and reports the API writes it took. No figures are recorded here:
// the lead runs them on a quiet machine.
//
// # Wiring
//
// The server runs two of them, "replicaset" and "replicationcontroller",
// on shared informers:
//
//	rs := replicaset.New(replicaset.Deps{Client: c, Sets: rsInformer, Pods: podInformer,
//		Recorder: recorder, Log: log}, replicaset.Options{Kind: replicaset.ReplicaSetKind})
//	go rs.Run(ctx)
package replicaset
