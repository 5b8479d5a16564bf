// Package deployment is Skiff's Deployment controller, as upstream's
// pkg/controller/deployment: each Deployment owns ReplicaSets (one per
// pod template it has had) and the controller creates, scales, annotates
// and deletes ReplicaSets only; the ReplicaSet controller
// (controller/replicaset) makes and deletes the pods. It rolls out
// template changes within maxSurge and maxUnavailable, keeps the old
// ReplicaSets as the revision history, and reports status summed over its
// ReplicaSets.
//
// # Shape
//
// As controller/endpointslice: sync reads the caches and claims the
// Deployment's ReplicaSets; Reconcile (pure, plan.go) turns the Deployment
// and its ReplicaSets into a Plan (create the new ReplicaSet, the
// Deployment's revision, ReplicaSet writes with their new sizes and
// annotations, ReplicaSets to delete); apply carries it out in that
// order, stopping at the first failure; ComputeStatus (pure, status.go)
// derives the status.
//
// # ReplicaSets (ReplicaSetControllerRefManager)
//
//   - A ReplicaSet belongs to a Deployment when its controller
//     ownerReference has the Deployment's uid and its labels match the
//     selector. One that no longer matches is released (the reference
//     removed) unless the Deployment is being deleted. An orphan that
//     matches and is not being deleted is adopted unless the Deployment
//     is being deleted; before the first adoption of a round the
//     Deployment is re-read live (RecheckDeletionTimestamp). Adoption and
//     release are merge patches of metadata.ownerReferences carrying the
//     ReplicaSet's uid and resourceVersion as preconditions.
//   - A Deployment with an empty selector is never acted on (Warning
//     SelectingAll), as upstream.
//   - The new ReplicaSet is the oldest whose template equals
//     spec.template once the pod-template-hash label is taken out of both
//     (EqualIgnoreHash); every other is old.
//   - A new ReplicaSet is named <deployment>-<hash>, where <hash> is
//     ComputeHash(spec.template, status.collisionCount): the 32-bit FNV-1a
//     hash of the template's JSON (upstream hashes a spew dump; the
//     algorithm and alphabet are the same), the collision count, when
//     set, written into the hash as 8 bytes (a little-endian uint32 and 4
//     zero bytes), the sum in decimal
//     rendered with rand.SafeEncodeString's alphabet
//     "bcdfghjklmnpqrstvwxz2456789". The hash is added as label
//     pod-template-hash to its labels, its selector's matchLabels and its
//     template; it has the Deployment as controller (blockOwnerDeletion:
//     true), so the garbage collector deletes it with the Deployment; its
//     minReadySeconds follows the Deployment's.
//   - A create that finds the name taken by a ReplicaSet that is the
//     Deployment's with its template only retries (the cache is behind);
//     by anything else, status.collisionCount goes up by one and the next
//     round hashes differently, as upstream.
//
// # Revisions (SetNewReplicaSetAnnotations)
//
//   - deployment.kubernetes.io/revision on a ReplicaSet is its revision;
//     the new ReplicaSet gets max(old revisions)+1 when its own is lower
//     (a new template, or a rollback to an old one, which keeps its old
//     number in deployment.kubernetes.io/revision-history, comma separated,
//     at most 2,000 characters). The Deployment's revision annotation
//     follows its new ReplicaSet's (written by an update of the
//     Deployment).
//   - The Deployment's annotations are copied to its new ReplicaSet
//     (kubernetes.io/change-cause among them), except
//     last-applied-configuration, the revision, revision-history,
//     desired-replicas, max-replicas and deprecated.deployment.rollback.to.
//   - deployment.kubernetes.io/desired-replicas (spec.replicas) and
//     max-replicas (replicas + maxSurge) are set on every ReplicaSet the
//     controller scales.
//   - Rollback is client-side, as in Kubernetes since apps/v1: `kubectl
//     rollout undo` (and `skiff rollout undo`) replaces spec.template with
//     the chosen revision's ReplicaSet template without its hash label;
//     that ReplicaSet becomes the new one again and gets the next
//     revision. There is no rollback annotation.
//   - Cleanup (cleanupDeployment), only when a rollout is complete (by
//     the stored status) or the Deployment is paused: beyond
//     revisionHistoryLimit old ReplicaSets, the lowest revisions that have
//     no replicas (spec and status) and an observed status are deleted
//     (uid precondition).
//
// # One round (syncDeployment)
//
//   - Being deleted: status only.
//   - Paused, or a scaling event (an active ReplicaSet's desired-replicas
//     differs from spec.replicas): scale only, with no new ReplicaSet (a
//     paused Deployment without ReplicaSets gets none). One active
//     ReplicaSet, or none, gets spec.replicas (FindActiveOrLatest); a
//     saturated new ReplicaSet scales the old ones to 0; otherwise, in a
//     rolling update, the difference between replicas + maxSurge and the
//     sum of the active ReplicaSets is spread in proportion to each one's
//     size against its max-replicas annotation (getReplicaSetFraction,
//     rounded), largest first (newer first on scale-up, older first on
//     scale-down), the leftover to the first: proportional scaling of a
//     Deployment scaled mid-rollout. A paused Deployment is then cleaned
//     up.
//   - RollingUpdate (rolloutRolling): maxSurge resolves against
//     spec.replicas rounding up, maxUnavailable rounding down; both 0
//     makes maxUnavailable 1; maxUnavailable is at most replicas. The new
//     ReplicaSet is created (or found) with NewRSNewReplicas:
//     min(replicas + maxSurge - sum of all ReplicaSets, replicas - its
//     size) more, where each ReplicaSet counts max(spec.replicas,
//     status.replicas) (upstream: spec.replicas; a ReplicaSet just scaled
//     down still runs the pods being deleted). If the new ReplicaSet was scaled (up, or down to
//     replicas) the round ends. Else old ReplicaSets are scaled down
//     (reconcileOldReplicaSets): at most all - (replicas - maxUnavailable)
//   - (new ReplicaSet's replicas not yet available), first replicas
//     that are not available, oldest ReplicaSet first
//     (cleanupUnhealthyReplicas), then as many as keep the sum of
//     availableReplicas at replicas - maxUnavailable, oldest first. If
//     nothing was scaled and the stored status is complete, cleanup.
//     Unlike upstream, that sum counts each ReplicaSet's available pods
//     at most up to its spec.replicas: right after a scale-down its
//     status still counts the pods being deleted, and upstream, summing
//     the status alone, can go below replicas - maxUnavailable when a
//     new pod turns ready before that status is rewritten.
//   - Recreate (rolloutRecreate): every active old ReplicaSet is scaled
//     to 0; the round ends if one was; while an old ReplicaSet reports
//     replicas or one of its pods is neither Succeeded nor Failed
//     (terminating ones count), nothing more; then the new ReplicaSet is
//     created (or scaled) with spec.replicas; cleanup when complete.
//
// Availability (minReadySeconds) is the ReplicaSets' status: the
// ReplicaSet controller re-checks a pod when it should become available.
// Updates of a ReplicaSet carry the cached resourceVersion, so a stale
// cache makes a conflict (retried), never a second scale; the new
// ReplicaSet's name is deterministic, so a stale cache never creates it
// twice. This is why the controller needs no expectations, as upstream.
//
// # Status (calculateStatus, syncRolloutStatus)
//
// replicas, readyReplicas and availableReplicas are the sums of the
// ReplicaSets' status; updatedReplicas the new one's status.replicas;
// unavailableReplicas the sum of spec.replicas minus available (not below
// 0); observedGeneration is metadata.generation; collisionCount is kept.
// terminatingReplicas is not set. Conditions:
//
//   - Available: True/MinimumReplicasAvailable when availableReplicas >=
//     replicas - maxUnavailable, else False/MinimumReplicasUnavailable.
//   - Progressing (only with a progressDeadlineSeconds other than
//     MaxInt32): Unknown/DeploymentPaused on pause and
//     Unknown/DeploymentResumed on resume (checkPausedConditions, not over
//     a timed-out one); True/NewReplicaSetCreated "Created new replica set
//     %q" when the new ReplicaSet was created, True/FoundNewReplicaSet
//     when it existed and there was no condition; then, in a rollout
//     round that is not already complete: True/NewReplicaSetAvailable
//     "ReplicaSet %q has successfully progressed." when every replica is
//     updated and available; True/ReplicaSetUpdated "ReplicaSet %q is
//     progressing." (lastUpdateTime now) when updated, ready or available
//     replicas rose or old ones fell against the stored status;
//     False/ProgressDeadlineExceeded "ReplicaSet %q has timed out
//     progressing." when the condition's lastUpdateTime is more than
//     progressDeadlineSeconds ago. The round asks to be re-run a second
//     after the deadline (requeueStuckDeployment).
//   - ReplicaFailure: the new ReplicaSet's ReplicaFailure condition, else
//     an old one's; removed when none has one.
//
// Conditions are set as SetDeploymentCondition: unchanged when status and
// reason are, lastTransitionTime kept while the status stays, the changed
// condition moved last. Paused, scaling and deleting rounds only
// recompute counters and Available (syncDeploymentStatus). Status is
// written through the status subresource, and only when it differs.
//
// # Upgrade from pod-owning Deployments (Migrate)
//
// Earlier Skiff versions had no ReplicaSets: Deployments controlled their
// pods directly and kept their revisions in a skiff.dev/revision-history
// annotation. Migrate, which the server runs before any controller
// starts, moves each such Deployment: a ReplicaSet per template hash (the
// one the pods carry, computed as ComputeHash without a collision count)
// with that template, revision and change-cause, and as spec.replicas the
// number of its active pods; then every pod's controller reference is
// changed to its ReplicaSet (and its pod-template-hash label set), with
// uid and resourceVersion preconditions; last the legacy annotations are
// removed. The ReplicaSet controller then finds exactly its replicas and
// creates or deletes none; no pod restarts. Each step is idempotent.
//
// # Controller
//
// New registers handlers on the Deployment, ReplicaSet and Pod informers
// and indexes (ReplicaSets by controlling Deployment uid or as orphans of
// a namespace; pods by controller uid); handlers only enqueue
// "namespace/name" keys: a ReplicaSet's Deployment, or for an orphan
// every Deployment whose selector matches it; a pod's Deployment only for
// Recreate (whose new ReplicaSet waits for old pods). Run waits for the
// caches, then workers sync keys from a client/workqueue with back-off
// (100ms to 30s) and a retry cap (15). A sync never mutates cached
// objects. When the Deployment cache is older than the controller's own
// last write (by resourceVersion), the sync starts from that write.
//
// # Benchmarks
//
// BenchmarkScaleUp creates a 200-replica Deployment; BenchmarkRollout1000
// rolls a 1,000-replica Deployment to a new template through ReplicaSets
// and reports the deployment controller's API writes per rollout. Both
// run against a real server; no figures are recorded here.
//
// # Wiring
//
// The server runs it as controller "deployment" on shared informers,
// after Migrate:
//
//	_ = deployment.Migrate(ctx, c, log)
//	ctl := deployment.New(deployment.Deps{Client: c, Deployments: deploymentsInformer,
//		ReplicaSets: replicaSetsInformer, Pods: podsInformer, Recorder: recorder, Log: log}, deployment.Options{})
//	go ctl.Run(ctx)
package deployment
