// Package scheduler is Skiff's scheduler: it binds pending pods to nodes
// through POST pods/{name}/binding, as Kubernetes' default scheduler does,
// with a subset of its plugins.
//
// It reads pods and nodes from two informers (the caller runs them) and
// keeps its own per-node state: allocatable cpu, memory and pod count, the
// requests of the pods counted there, per-owner pod counts, and the
// per-node counts behind inter-pod affinity and topology spread (below).
// One goroutine makes every decision; workers make the API calls.
//
// # Which pods
//
//   - A pod is scheduled when it has no spec.nodeName, no
//     deletionTimestamp, is not Succeeded or Failed, and its
//     spec.schedulerName is empty or Options.SchedulerName
//     ("default-scheduler").
//   - A node's load counts every pod with that spec.nodeName that is not
//     Succeeded or Failed, whoever bound it, including terminating pods.
//   - The queue hands out pending pods by spec.priority, highest first
//     (the Priority admission, apiserver/priorityadmission, resolved it
//     from priorityClassName; unset counts as 0), then in arrival order,
//     as kube-scheduler's PrioritySort. There is no preemption: a
//     high-priority pod that fits nowhere waits like any other.
//
// # Filters (a node must pass all, in this order)
//
//   - spec.unschedulable is false, or the pod tolerates
//     node.kubernetes.io/unschedulable:NoSchedule.
//   - Every NoSchedule and NoExecute taint is tolerated (Kubernetes'
//     ToleratesTaint: effect, key, Equal/Exists); PreferNoSchedule is
//     ignored.
//   - The Ready condition is True.
//   - NodeAffinity (affinity.go): every nodeSelector entry equals a node
//     label, and the required node affinity holds: its nodeSelectorTerms
//     are ORed, a term's matchExpressions and matchFields ANDed, a term
//     with neither matches nothing. In needs the label with one of the
//     values; NotIn matches a node without the label; Exists and
//     DoesNotExist test the key; Gt and Lt compare the label and the one
//     value as integers (a non-integer never matches); matchFields only
//     knows metadata.name. Failure: "node(s) didn't match Pod's node
//     affinity/selector".
//   - Pod count below status.allocatable.pods (default 110); cpu and memory
//     requests (sum over containers, at least the largest init container,
//     a missing request taken from the limit) fit in allocatable minus the
//     requests already counted. A resource missing from allocatable falls
//     back to capacity, else 0.
//   - PodTopologySpread (spread.go), each DoNotSchedule constraint: the
//     domains are the values of topologyKey on the eligible nodes — nodes
//     with every DoNotSchedule constraint's key that pass the pod's
//     nodeSelector and required node affinity (nodeAffinityPolicy Honor,
//     the default; Ignore counts every node) and, with nodeTaintsPolicy
//     Honor (default Ignore), whose NoSchedule/NoExecute taints the pod
//     tolerates. A domain's count is the pods counted there in the pod's
//     namespace that labelSelector selects (with matchLabelKeys added as
//     key In (the pod's value)); a nil selector selects none. A node
//     without the key fails ("... (missing required label)"); otherwise
//     count(node's domain) + 1 if the pod matches its own selector − the
//     smallest domain count must not exceed maxSkew. With minDomains set
//     and fewer eligible domains than it, the smallest count is 0.
//   - InterPodAffinity (affinity.go), in upstream's order: (1) the node
//     has every required affinity term's topologyKey and each term selects
//     a counted pod in its domain, except that when no pod anywhere
//     matches any term and the pod matches all its own terms, any node
//     with the keys passes (the first pod of a self-affine group)
//     ("node(s) didn't match pod affinity rules"); (2) none of the pod's
//     required anti-affinity terms selects a counted pod in the node's
//     domain ("node(s) didn't match pod anti-affinity rules"); (3) no
//     counted pod's required anti-affinity term selects the pod in the
//     node's domain ("node(s) didn't satisfy existing pods anti-affinity
//     rules"); a node without the term's topologyKey passes (2) and (3).
//     A term selects pods in its namespaces plus those namespaceSelector
//     selects (an empty selector: every namespace; a non-empty one is
//     matched against the namespace's kubernetes.io/metadata.name label
//     only, since the scheduler does not watch namespaces), else the pod's
//     own namespace; matchLabelKeys / mismatchLabelKeys add key In / NotIn
//     (the pod's value) to labelSelector.
//
// # Score
//
//   - When the pod has preferred node affinity, preferred pod
//     (anti-)affinity, ScheduleAnyway constraints, or counted pods carry
//     terms that select it, the plugin scores come first: NodeAffinity
//     (sum of the weights of the preferred terms the node matches, scaled
//     to 0-100 by the highest), InterPodAffinity (for each of the pod's
//     preferred terms, ± weight × matching pods in the node's domain; for
//     each counted pod's preferred term that selects the pod, its ± weight,
//     and for its required affinity term 1, per such pod in the domain;
//     scaled to 0-100 between the lowest and highest) and
//     PodTopologySpread (per ScheduleAnyway constraint, (count of the
//     node's domain + maxSkew − 1) × log(domains + 2), summed; scaled as
//     upstream, 100 × (max + min − score) / max, a node without a key 0),
//     added with equal weight (upstream weighs each 2). The highest sum
//     wins.
//   - Then fewest pods of the pod's owner (controller ownerReference uid):
//     the replicas of one owner spread across nodes.
//   - Then Kubernetes' LeastAllocated: the mean free fraction of cpu and
//     memory after placing the pod, counting a missing request as 100m cpu
//     and 200Mi memory.
//   - Ties go to the first candidate scanning from a start index that
//     advances with every decision (round-robin).
//
// # Cost of a decision
//
//   - A decision is O(nodes) plus O(distinct carried terms): every
//     per-node figure is kept up to date, none is recomputed. The cache
//     keeps, per distinct matcher (namespaces + selector) a pending pod has
//     used, the count of matching counted pods per node, updated as pods
//     are counted and dropped (O(matchers) per pod), and per distinct term
//     carried by counted pods the number of carriers per node; a decision
//     sums those per domain over the nodes. A matcher's counts are built
//     with one pass over the counted pods the first time it is needed; past
//     1024 matchers they are all dropped and rebuilt on demand.
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
