// Package nodelifecycle is Skiff's node lifecycle controller: it notices
// nodes that stop heartbeating, marks them and their pods not ready, and
// evicts their controller-owned pods so their controllers recreate them
// elsewhere, as Kubernetes' node lifecycle controller does.
//
// # Heartbeats
//
//   - A node heartbeats by renewing its Lease in namespace kube-node-lease
//     (name = node name, spec.renewTime) or by updating its Ready
//     condition's lastHeartbeatTime. A heartbeat counts when the value
//     moves forward; the time it counts at is the controller's clock
//     (Options.Now), so node clock skew does not matter. A node seen for the
//     first time (including after a controller restart) starts its grace
//     period then.
//   - Run creates kube-node-lease when it does not exist.
//
// # State machine (decide, a pure function)
//
//   - Silent for Options.NodeMonitorGracePeriod (40s): a Ready condition
//     that is not Unknown becomes Unknown, reason NodeStatusUnknown,
//     "Kubelet stopped posting node status." (lastHeartbeatTime kept); a
//     node that never posted one gets Unknown/NodeStatusNeverUpdated.
//   - Taints follow Ready: Unknown adds node.kubernetes.io/unreachable:
//     NoSchedule, False node.kubernetes.io/not-ready:NoSchedule, True
//     removes both. Other taints are never touched.
//   - While not Ready, every pod on the node with a Ready or
//     ContainersReady condition that is not False gets both set to False
//     through pods/status, so EndpointSlices drop it.
//   - Not Ready for Options.PodEvictionTimeout (5m, counted from when the
//     controller first saw it not Ready): every pod with a controller
//     ownerReference is deleted with gracePeriodSeconds 0 and a uid
//     precondition. Bare pods stay, and so do pods that tolerate the
//     node's not-ready (Ready False) or unreachable (Unknown) NoExecute
//     taint with no tolerationSeconds, which Kubernetes' taint-based
//     eviction never evicts (every DaemonSet pod has both).
//   - Ready again (the node agent sets it): the taints go and the eviction
//     timer resets. Marking pods Ready again is the node agent's job.
//
// # Writes and retries
//
//   - Node status (PUT nodes/status) is written before the taints (PUT
//     nodes), which are recomputed on the node the status write returned;
//     then the pods. Every write carries the cached resourceVersion; a
//     Conflict retries the whole sync, with back-off, up to
//     Options.MaxRetries; every step is idempotent.
//   - Keys are node names. A node is synced when it, its Lease, or (only
//     while the node is not Ready) one of its pods changes; at the next
//     deadline (end of grace, end of eviction timeout); and every
//     Options.MonitorPeriod.
//   - Not done: Kubernetes' zone-aware eviction rate limiting and its
//     "full disruption" pause.
package nodelifecycle
