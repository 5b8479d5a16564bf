// Package podautoscaler is the HorizontalPodAutoscaler controller
// (autoscaling/v2): every SyncPeriod (15 s, as kube-controller-manager's
// --horizontal-pod-autoscaler-sync-period) it reads each autoscaler's
// target through the target's /scale subresource, the pods of the scale's
// selector and their usage from the resource metrics API
// (metrics.k8s.io/v1beta1 pods), computes a replica count, writes it to
// /scale and reports the status.
//
// The target's kind is resolved as upstream's RESTMapper does: a built-in
// kind from api.Resources(), else the kind discovery lists for the
// reference's apiVersion (/apis/{group}/{version}), so a custom resource
// whose definition declares the scale subresource is scaled like a
// Deployment. A kind found but without /scale, or not found at all, is
// AbleToScale False FailedGetScale ("no matches for kind ...").
//
// # The rules, as Kubernetes' pkg/controller/podautoscaler
//
//   - A target whose spec.replicas is 0 is not scaled (ScalingActive False,
//     ScalingDisabled). One above maxReplicas is set to maxReplicas, one
//     below minReplicas to minReplicas, without reading metrics.
//   - Otherwise every metric proposes a count and the largest wins. A
//     metric that cannot be read is invalid: when every metric is invalid,
//     or some are and the valid ones would scale down, nothing is scaled
//     (ScalingActive False with the first error, an Event
//     FailedComputeMetricsReplicas).
//   - Resource and ContainerResource metrics (cpu, memory; Utilization of
//     the requests or AverageValue) follow replica_calculator.go: pods being
//     deleted or Failed are ignored; Pending pods are unready; a cpu reading
//     of a pod not Ready, within 5 minutes of its start, or taken before its
//     readiness last changed, is unready; ready pods without a reading are
//     missing. ratio = usage / target over the ready pods with readings; with
//     none missing or unready the count is ceil(ratio × ready pods), unless
//     |ratio − 1| ≤ tolerance (0.1, or behavior's tolerance), which keeps the
//     current count. Otherwise missing pods count as using 100 % of their
//     request (scale down) or 0 (scale up), unready pods as 0 (scale up
//     only), the ratio is recomputed, and a change of direction or a ratio
//     within tolerance keeps the current count. A container without a
//     request for the resource makes a Utilization metric invalid.
//   - Pods, Object and External metrics need the custom or external
//     metrics APIs, which Skiff does not serve: such a metric is invalid
//     (FailedGetPodsMetric, FailedGetObjectMetric, FailedGetExternalMetric).
//   - Without spec.behavior the proposal is stabilised over a 5-minute
//     down-scale window (the highest recommendation of the window wins) and
//     a step up is limited to max(2 × current, 4). With spec.behavior each
//     direction has its stabilisation window (scale up: the lowest
//     recommendation of its window; scale down: the highest) and its
//     policies, limited by the replicas already added or removed within
//     each policy's period; selectPolicy Max takes the policy allowing the
//     largest change, Min the smallest, Disabled none. Then the count is
//     clamped to [minReplicas, maxReplicas]. The conditions AbleToScale,
//     ScalingActive and ScalingLimited carry upstream's reasons and
//     messages.
//
// # State
//
// Recommendations and scale events live in the controller's memory, keyed
// by autoscaler, as upstream keeps them: a restarted server starts with
// empty windows. Reconcile is a pure function of the autoscaler, the scale,
// the pods, the readings, that history and the time; the controller only
// reads, calls it, and writes the plan.
package podautoscaler
