// Package deployment is Skiff's Deployment controller. It keeps, for each
// Deployment, spec.replicas pods of spec.template, rolls out template
// changes within maxSurge and maxUnavailable, keeps a revision history for
// rollbacks, and reports status counters and conditions, as Kubernetes'
// deployment and ReplicaSet controllers do together.
//
// # No ReplicaSets
//
// Skiff has no ReplicaSet resource. The controller manages pods directly
// and groups them by template hash; each group is a "virtual replica set"
// named <deployment>-<hash>, which is only a name:
//
//   - Pods are created from a template with generateName
//     "<deployment>-<hash>-" (truncated to 58 characters, as Kubernetes
//     truncates generated names), so they are named
//     <deployment>-<hash>-<5 random characters>.
//   - Each pod carries the label pod-template-hash=<hash>, where <hash> is
//     TemplateHash of the template: the 32-bit FNV-1a hash of its JSON,
//     printed in decimal and rendered in the alphabet
//     "bcdfghjklmnpqrstvwxz2456789", as Kubernetes renders ComputeHash.
//     Changing the template, including the
//     kubectl.kubernetes.io/restartedAt annotation that `rollout restart`
//     sets on it, changes the hash and starts a rollout.
//   - Each pod has a controller ownerReference to its Deployment
//     (blockOwnerDeletion: true), so the garbage collector deletes the
//     pods with the Deployment.
//   - Events and condition messages say "replica set <deployment>-<hash>"
//     where Kubernetes names the ReplicaSet, e.g. "Scaled up replica set
//     web-5d4f8b7c9 from 0 to 3".
//
// # Which pods belong to a Deployment
//
//   - A pod belongs to a Deployment when its controller ownerReference
//     points at the Deployment's uid and its labels match the selector.
//   - A pod without a controller whose labels match, and that is not being
//     deleted, is adopted (an ownerReference is added with a merge patch
//     carrying the pod's uid and resourceVersion as preconditions), unless
//     the Deployment is being deleted. A controlled pod whose labels no
//     longer match is released. This is Kubernetes' ControllerRef claim.
//   - Pods in phase Succeeded or Failed do not count for anything.
//   - Pods with a deletionTimestamp (terminating) are never available,
//     never counted in the status and never deleted again; Recreate waits
//     for old ones to be gone.
//   - "New" pods carry the current template's hash, "old" pods any other.
//
// # Revisions and rollback
//
//   - Annotation deployment.kubernetes.io/revision holds the current
//     revision number. Annotation skiff.dev/revision-history holds a JSON
//     list of Revision {revision, hash, changeCause, template}, oldest
//     first, the current revision last (see History).
//   - When spec.template hashes to something other than the last entry,
//     the controller records it as revision max+1 before creating any pod
//     of it; a hash already in the history (a rollback, or an undone
//     edit) moves to max+1, as Kubernetes renumbers the old ReplicaSet.
//     The kubernetes.io/change-cause annotation is recorded with it.
//   - Older revisions are trimmed to spec.revisionHistoryLimit (default
//     10), except those that still have pods; the encoded annotation is
//     kept under 64 KiB by dropping the oldest.
//   - Rollback: set annotation skiff.dev/rollback-to-revision to a
//     revision number, or to "0" for the revision before the current one
//     (as spec.rollbackTo.revision did in extensions/v1beta1). The
//     controller copies that revision's template into spec.template and
//     removes the annotation in one update, with Event
//     DeploymentRollback; an unknown revision or one equal to the current
//     template only removes the annotation, with a Warning
//     (DeploymentRollbackRevisionNotFound,
//     DeploymentRollbackTemplateUnchanged). A paused Deployment keeps the
//     annotation until it is resumed, as in Kubernetes.
//
// # Rolling updates and scaling
//
// maxSurge is resolved against spec.replicas rounding up, maxUnavailable
// rounding down; if both resolve to 0, maxUnavailable is 1 (validation
// rejects both being 0 literally). A pod is available when it has been
// Ready (the Ready condition's lastTransitionTime) for more than
// minReadySeconds; the controller re-checks when the next pod should
// become available. Each round (computePlan, a pure function) does one of:
//
//   - too many new pods: delete the surplus, in deletion order;
//   - too few new pods: create min(replicas - new, replicas + maxSurge -
//     total); the round ends, old pods are looked at in the next one;
//   - old pods left: delete old pods that are not available (they cost no
//     availability), at most total - (replicas - maxUnavailable) - (new
//     pods not yet available); then delete as many more old pods, oldest
//     revision first, as keep availableReplicas >= replicas -
//     maxUnavailable.
//
// So non-terminating pods never exceed replicas + maxSurge, and the
// controller never takes available pods below replicas - maxUnavailable;
// old pods go only as new ones become available. Plain scaling is the
// same rules with no old pods. Recreate deletes every old pod, waits until
// none is left, terminating ones included, then creates the new pods.
//
// Deletion order (Kubernetes' ActivePods, simplified): unscheduled before
// scheduled; Pending before Unknown before Running; not Ready before
// Ready; Ready for less time first; more restarts first; newest first.
//
// A paused Deployment does not roll out (no new revision is recorded, no
// pod of a new template is created, rollbacks wait) but still scales:
// surplus pods go in deletion order whatever their revision, missing pods
// are added to the newest revision that has pods. A paused Deployment
// without pods gets none, as Kubernetes creates no ReplicaSet while
// paused. Kubernetes' proportional scaling of several ReplicaSets during
// a rollout is not reproduced.
//
// # Expectations
//
// Before creating or deleting, the controller records how many creations
// and which deletions it expects for the Deployment; pod events lower
// them. While any are pending the Deployment is not planned again (its
// status still is), so a pod cache that has not caught up with the
// controller's own writes never causes a second create or delete. Pending
// expectations expire after Options.ExpectationsTTL (5 minutes) in case
// an event was lost. Creations go in slow-start batches (1, 2, 4, ...) and
// stop at the first failing batch; at most 500 pods are created or
// deleted per round.
//
// # Status
//
// status.replicas counts non-terminating pods; updatedReplicas those with
// the current hash; readyReplicas the Ready ones; availableReplicas the
// available ones; unavailableReplicas is spec.replicas - available (not
// below 0); observedGeneration is metadata.generation (which the server
// also bumps on annotation changes, as Kubernetes does for Deployments).
// terminatingReplicas and collisionCount are not set. Conditions:
//
//   - Available: True/MinimumReplicasAvailable when availableReplicas >=
//     replicas - maxUnavailable, else False/MinimumReplicasUnavailable.
//   - Progressing (only with a progressDeadlineSeconds other than
//     MaxInt32): True/NewReplicaSetCreated when a template's rollout
//     starts; True/ReplicaSetUpdated whenever updated, ready or available
//     pods increase or old pods decrease; True/NewReplicaSetAvailable when
//     every pod is updated and available; False/ProgressDeadlineExceeded
//     when no progress was seen for progressDeadlineSeconds;
//     Unknown/DeploymentPaused and Unknown/DeploymentResumed around a
//     pause. The controller re-checks at the deadline.
//
// Status is written through the status subresource, and only when it
// differs from the stored one.
//
// # Controller
//
// New registers handlers on the Deployment and Pod informers (and a pod
// index by controller uid); handlers only enqueue "namespace/name" keys.
// Run waits for both caches, then workers sync keys from a
// client/workqueue with back-off (100ms to 30s) and a retry cap (15, then
// the key is dropped until its next change). A sync reads only the
// caches; it never mutates cached objects. When the Deployment cache is
// older than the controller's own last write of a Deployment (by
// resourceVersion, the store's increasing revision), the sync starts from
// that write instead, so the controller does not conflict with itself.
// A Deployment with pending expectations is re-synced when they expire.
//
// # Wiring
//
// The server runs it as controller "deployment" on shared informers:
//
//	ctl := deployment.New(deployment.Deps{Client: c, Deployments: deploymentsInformer,
//		Pods: podsInformer, Recorder: recorder, Log: log}, deployment.Options{})
//	go ctl.Run(ctx)
package deployment
