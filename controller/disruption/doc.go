// Package disruption is Skiff's disruption controller: it keeps the status
// of every PodDisruptionBudget, which the pods/eviction subresource reads
// (and decrements) to refuse evictions that would break the budget, as
// Kubernetes' pkg/controller/disruption.
//
// # Status (Compute, pure)
//
//   - The budget's pods are its namespace's pods its selector matches
//     (policy/v1: a null selector matches none, an empty one all).
//   - maxUnavailable: expectedPods is the sum of the scales (spec.replicas)
//     of the pods' controllers, each counted once; desiredHealthy is
//     expectedPods - maxUnavailable (a percent of expectedPods, rounded
//     up), at least 0. minAvailable as a number: expectedPods is the number
//     of matching pods and desiredHealthy is minAvailable. minAvailable as
//     a percent: expectedPods from the scales, desiredHealthy the percent
//     of it rounded up. Neither: both 0.
//   - currentHealthy counts the pods that are Ready, not terminating, and
//     not in disruptedPods; a disruptedPods entry (written by an eviction)
//     counts for DeletionTimeout (2 minutes), after which it is dropped
//     (the delete did not happen).
//   - disruptionsAllowed = currentHealthy - desiredHealthy, 0 when negative
//     or when expectedPods is 0 (a budget matching no pods yet is safe).
//   - The DisruptionAllowed condition: True/SufficientPods when
//     disruptionsAllowed > 0, else False/InsufficientPods.
//   - A pod whose controller has no scale (a DaemonSet, a Job) under a
//     maxUnavailable or percent budget fails the sync: disruptionsAllowed
//     0, DisruptionAllowed False/SyncFailed (Kubernetes' failSafe) and a
//     CalculateExpectedPodCountFailed Event. Pods without a controller are
//     reported in an UnmanagedPods Event.
//
// # Finding a controller's scale
//
// A pod's controller is read by apiVersion and kind through the server's
// resource table and its scale taken with api.ScaleOf (Deployment,
// StatefulSet, and every kind ScaleOf learns, such as ReplicaSet). A
// controller that is itself controlled by a Deployment counts as that
// Deployment, as Kubernetes' finders do for ReplicaSets. Skiff's
// Deployments own their pods directly.
//
// # Writes
//
// The status is written with a PUT of poddisruptionbudgets/status guarded
// by the cached resourceVersion; the eviction subresource writes it too,
// and a Conflict retries the sync with back-off. Budgets are synced when
// they change, when a pod they select changes, and when a disruptedPods
// entry expires. Kubernetes also watches the controllers; Skiff relies on
// the pod events a scale change brings.
package disruption
