// Package scheduler is Skiff's scheduler: it binds pending pods to nodes
// through POST pods/{name}/binding, as Kubernetes' default scheduler does,
// with a subset of its plugins.
//
// It reads pods and nodes from two informers (the caller runs them) and
// keeps its own per-node state: allocatable cpu, memory and pod count, the
// requests of the pods counted there, and per-owner pod counts. One
// goroutine makes every decision; workers make the API calls.
//
// # Which pods
//
//   - A pod is scheduled when it has no spec.nodeName, no
//     deletionTimestamp, is not Succeeded or Failed, and its
//     spec.schedulerName is empty or Options.SchedulerName
//     ("default-scheduler").
//   - A node's load counts every pod with that spec.nodeName that is not
//     Succeeded or Failed, whoever bound it, including terminating pods.
//
// # Filters (a node must pass all, in this order)
//
//   - spec.unschedulable is false, or the pod tolerates
//     node.kubernetes.io/unschedulable:NoSchedule.
//   - Every NoSchedule and NoExecute taint is tolerated (Kubernetes'
//     ToleratesTaint: effect, key, Equal/Exists); PreferNoSchedule is
//     ignored.
//   - The Ready condition is True.
//   - Every nodeSelector entry equals a node label.
//   - Pod count below status.allocatable.pods (default 110); cpu and memory
//     requests (sum over containers, at least the largest init container,
//     a missing request taken from the limit) fit in allocatable minus the
//     requests already counted. A resource missing from allocatable falls
//     back to capacity, else 0.
//
// # Score
//
//   - Fewest pods of the pod's owner (controller ownerReference uid) first:
//     the replicas of one owner spread across nodes.
//   - Then Kubernetes' LeastAllocated: the mean free fraction of cpu and
//     memory after placing the pod, counting a missing request as 100m cpu
//     and 200Mi memory.
//   - Ties go to the first candidate scanning from a start index that
//     advances with every decision (round-robin). A decision is O(nodes):
//     every per-node figure is kept up to date, none is recomputed.
//
// # Assume cache
//
//   - A chosen pod is counted on its node before the decision lock is
//     released, so the next decision sees it, and its bind is handed to a
//     worker. A pod counted on a node (assumed or bound) is never
//     scheduled again.
//   - The assumption ends when the informer shows the pod bound (it is then
//     counted once, as bound), when the bind fails (it is forgotten; a
//     NotFound or Conflict is not retried, other errors are retried with
//     back-off up to Options.MaxRetries), or Options.AssumeTimeout after a
//     successful bind that the informer has not shown.
//
// # Pods that fit nowhere
//
//   - Get PodScheduled=False, reason Unschedulable and Kubernetes' message
//     ("0/3 nodes are available: 1 node(s) didn't match Pod's node
//     affinity/selector, 2 Insufficient cpu.") through PUT pods/status,
//     written only when it changes, and a FailedScheduling Warning event
//     per attempt.
//   - Wait, parked, until a node is added or changes in a way that can
//     matter (readiness, unschedulable, taints, labels, allocatable; not a
//     heartbeat), a counted pod is deleted or finishes, or their back-off
//     passes (Options.RetryBase doubling to RetryMax). An update of a
//     parked pod that does not change its spec (metadata.generation), such
//     as the status written above, does not wake it.
//
// # Concurrency
//
//   - Informer handlers only update the cache and queue keys. The cache has
//     one lock; the unschedulable set another. Run returns after ctx ends
//     and every goroutine it started has exited.
package scheduler
