// Package job is Skiff's Job controller: it runs a batch/v1 Job's pods
// until enough of them succeed, or the Job fails, as Kubernetes' Job
// controller does.
//
// # Shape
//
// Informers on jobs and pods (the caller runs them) feed a keyed work
// queue of "namespace/name". A sync reads the caches, computes a Plan with
// the pure function Reconcile (Job, its pods, now -> creates, deletes,
// finalizer removals, status, TTL deletion, requeue), and apply carries it
// out. A Job's pods are the pods whose controller ownerReference has its
// uid and that its selector matches; orphans the selector matches are
// adopted and pods relabelled out of it released, with the tracking
// finalizer (job.go claimPods; only a manualSelector Job's selector can
// match a pod it did not make).
//
// # Pods
//
//   - Built from spec.template: its labels (with the generated
//     batch.kubernetes.io/controller-uid and job-name) and annotations, a
//     controller ownerReference with blockOwnerDeletion (so the garbage
//     collector deletes them with the Job), the finalizer
//     batch.kubernetes.io/job-tracking, generateName <job>-.
//   - Indexed: generateName <job>-<index>-, hostname <job>-<index>, the
//     index in the batch.kubernetes.io/job-completion-index annotation and
//     label, and JOB_COMPLETION_INDEX (downward API from the annotation) in
//     every container and init container; the lowest free indexes first; a
//     second active pod of an index, or a pod of a completed or failed
//     index, is deleted.
//
// # Counting (the job-tracking finalizer)
//
// A finished pod (Succeeded; Failed; or being deleted and not Succeeded)
// that still has the finalizer is counted exactly once, as Kubernetes
// does: its uid is first written to status.uncountedTerminatedPods, then
// its finalizer is removed, then the status moves it to succeeded/failed
// (completedIndexes for Indexed). A crash between the steps leaves the uid
// in uncountedTerminatedPods, where the next sync finds it. The final
// status is written only when every finalizer removal succeeded.
//
// # Rules
//
//   - Active pods wanted: min(parallelism, completions - succeeded);
//     without completions (a work queue) parallelism until one pod
//     succeeded, then none new, and the Job succeeds once one pod
//     succeeded and none is active. Surplus pods are deleted unscheduled
//     first, then pending, not ready, newest.
//   - backoffLimit: the Job fails (BackoffLimitExceeded) when more pods
//     failed than the limit; with restartPolicy OnFailure the container
//     restarts of its running and pending pods count (limit 0: any
//     restart; else restarts >= limit). Replacements wait 10 s after a
//     failure, doubling with each failure since the last success, at most
//     6 min (from the last failure's finishedAt).
//   - activeDeadlineSeconds from status.startTime: DeadlineExceeded.
//   - podFailurePolicy, first matching rule, for pods in phase Failed:
//     onExitCodes looks at terminated containers, then init containers,
//     with a non-zero exit code (In/NotIn); onPodConditions at the pod's
//     conditions. FailJob fails the Job (reason PodFailurePolicy, the
//     upstream message naming container, exit code, action and rule
//     index); Ignore neither counts the pod nor backs off; Count counts
//     it; FailIndex marks its index failed (backoffLimitPerIndex).
//   - backoffLimitPerIndex: a pod of an index carries
//     batch.kubernetes.io/job-index-failure-count; an index whose failures
//     exceed the limit is failed (status.failedIndexes); more failed
//     indexes than maxFailedIndexes fails the Job
//     (MaxFailedIndexesExceeded); once every index succeeded or failed
//     with some failed, FailedIndexes.
//   - successPolicy (Indexed): the first rule whose succeededIndexes all
//     succeeded (or succeededCount of them) meets the criteria (reason
//     SuccessPolicy, "Matched rules at index <i>").
//   - As Kubernetes 1.31: a failing Job gets FailureTarget first and a
//     succeeding one SuccessCriteriaMet (CompletionsReached, "Reached
//     expected number of succeeded pods"); its active pods are deleted,
//     and Failed or Complete (with completionTime) is added once no pod is
//     active, terminating or still carrying the finalizer.
//   - suspend: active pods are deleted, Suspended=True (JobSuspended, "Job
//     suspended"), startTime cleared; on resume Suspended=False
//     (JobResumed) and startTime is set again, so the deadline restarts.
//   - podReplacementPolicy Failed: a terminating pod holds its place until
//     it is gone; TerminatingOrFailed (default) replaces it at once. Both
//     count it as failed once it is terminating (Kubernetes waits for the
//     Failed phase under Failed; Skiff's node removes a deleted pod
//     without always reporting Failed).
//   - ttlSecondsAfterFinished: the finished Job is deleted that long after
//     completionTime (or the Failed condition), with propagationPolicy
//     Foreground and a uid precondition, as Kubernetes'
//     TTL-after-finished controller does.
//   - A Job being deleted gets no new pods; its pods' finalizers are
//     removed as they terminate. A pod whose controlling Job is gone (or
//     is another Job of the same name) has its finalizer removed at once,
//     since nothing is left to count it, so the garbage collector's
//     delete can complete.
//
// # Expectations and a lagging cache
//
// Creates are expected by count (names come from generateName), deletes
// and finalizer removals by pod uid; while any is unobserved the Job's
// sync does nothing but wait (Options.ExpectationsTimeout bounds it). The
// controller keeps its last written Job per key and uses it instead of a
// cached Job with an older resourceVersion, so counts written a moment ago
// are never lost to a stale cache; status writes are PUTs guarded by the
// resourceVersion.
//
// # Events
//
// SuccessfulCreate "Created pod: <name>", SuccessfulDelete "Deleted pod:
// <name>", FailedCreate/FailedDelete, Completed "Job completed", the
// failure reason with its message (Warning), Suspended, Resumed.
package job
