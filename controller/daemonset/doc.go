// Package daemonset is Skiff's DaemonSet controller: one pod of the
// DaemonSet's template on every node that should run it, as Kubernetes'
// pkg/controller/daemon.
//
// # Which nodes run a daemon pod
//
// NodeShouldRunDaemonPod is Kubernetes' rule. A node should run the pod
// (shouldRun) when the template's spec.nodeName is empty or names it, the
// pod's required node affinity matches (its nodeSelector against the
// node's labels; see the AFFINITY HOOK below), and every NoSchedule and
// NoExecute taint of the node is tolerated. A pod already there may stay
// (shouldContinueRunning) when only NoSchedule taints are untolerated.
// spec.unschedulable (a cordon) does not count: in Kubernetes it only acts
// through the node.kubernetes.io/unschedulable taint, which daemon pods
// tolerate, so a cordoned or drained (`--ignore-daemonsets`) node keeps its
// daemon pods and a new DaemonSet still lands there.
//
// Every daemon pod gets, besides its template's tolerations, the ones
// Kubernetes adds (AddOrUpdateDaemonPodTolerations): not-ready and
// unreachable NoExecute (no time limit), disk-pressure, memory-pressure,
// pid-pressure and unschedulable NoSchedule, and network-unavailable
// NoSchedule for hostNetwork pods. They count in NodeShouldRunDaemonPod.
//
// # Placement
//
// Since 1.12 Kubernetes' controller creates a daemon pod unbound, with a
// required node affinity on metadata.name (matchFields) for its node, and
// lets the default scheduler bind it. Skiff's PodSpec has no affinity
// field yet, so the controller sets spec.nodeName to the node directly (as
// Kubernetes did before 1.12); Skiff's scheduler leaves pods with a
// nodeName alone. The consequence: daemon pods skip the scheduler's
// resource fit and are never Pending for lack of room. AFFINITY HOOK: when
// affinity lands (requiredNodeAffinityMatches in plan.go), match it and
// create pods with the metadata.name affinity instead of spec.nodeName.
//
// # Reconcile (pure: Reconcile, ComputeStatus)
//
//   - manage, per node: a node that should run the pod and has none gets
//     one; a Failed pod is deleted (Event FailedDaemonPod) and a Succeeded
//     one too, the next sync replaces them; without surge, a node keeps
//     only its oldest running pod (Running first, then oldest, then name);
//     with surge it keeps the oldest up-to-date and the oldest old pod,
//     and the old one goes when it is not ready or the new one is
//     available; a node that may not keep the pod loses every pod.
//   - Pods bound to a node that no longer exists are deleted. Kubernetes'
//     controller deletes only unbound ones there and leaves bound ones to
//     its pod GC; Skiff has no pod GC.
//   - Only when manage has nothing to do, RollingUpdate (Kubernetes' runs
//     after manage, once its expectations are met, which is the same):
//     maxSurge 0: old pods are deleted while the unavailable count
//     (nodes with no pod, two pods, or an unavailable new pod, plus old
//     pods that are unavailable, which are always replaced) stays within
//     maxUnavailable; manage then creates their replacements. maxSurge >
//     0: a new pod is created next to each unavailable old pod and next to
//     up to maxSurge available ones; an old pod goes once its new one is
//     available; old pods on nodes that may no longer run them go only
//     once more pods are available than desired. Percents resolve against
//     the number of nodes that should run the pod, rounded up; both 0
//     means maxUnavailable 1. OnDelete does nothing: a pod is replaced
//     when the user deletes it.
//   - Up to date means the pod's controller-revision-hash label equals
//     TemplateHash (FNV-32a of the template's JSON and collisionCount,
//     safe-encoded). Skiff does not set the deprecated
//     pod-template-generation label.
//   - History (with Deps.Revisions): each template the DaemonSet had is a
//     ControllerRevision <name>-<hash> whose data restores it, numbered in
//     order, the current one always the newest (a rollback renumbers its
//     old revision); the others are cut to revisionHistoryLimit (default
//     10), never one a live pod runs. A revision name held by another
//     template bumps status.collisionCount, which changes the hash
//     (controller/internal/history). This is what `kubectl rollout
//     history ds` lists and `kubectl rollout undo ds` patches back.
//   - Status, over the nodes that should run the pod: desired, current
//     (with a pod), ready and available (the oldest pod of the node),
//     updated (the oldest pod is up to date), misscheduled (a pod on a node
//     that should not run one), unavailable = desired - available,
//     observedGeneration. Terminal pods being deleted are not counted.
//
// # Writes
//
// Pods are created with generateName <name>-, the template's labels plus
// controller-revision-hash, a controller ownerReference, in slow-start
// batches (1, 2, 4, ...), stopping at the first batch with a failure.
// Deletes carry a uid precondition. Expectations (creates by node name,
// deletes by uid; 5 minutes) keep a stale pod cache from making a second
// pod on a node. Orphans of the namespace matching the selector are
// adopted; owned pods relabelled out of the selector are released (their
// ownerReference dropped, so their node gets a new pod), as Kubernetes'
// ClaimPods. Status is a JSON patch of daemonsets/status. A DaemonSet
// being deleted only gets its status written.
//
// Deleting a Failed pod starts a back-off for that DaemonSet and node (1s,
// doubling to 15 minutes, reset after 30 minutes without a failure), as
// Kubernetes' failedPodsBackoff: a Failed pod inside it is left alone and
// the DaemonSet is looked at again when it ends, so a node that keeps
// rejecting the pod is not hot-looped. The back-off lives in the
// controller (Input.FailedBackoff carries it into the pure plan).
//
// Not done: the DaemonSet conditions (Kubernetes sets none either), and
// adopting orphan ControllerRevisions by selector.
package daemonset
