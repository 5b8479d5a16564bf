// Package tainteviction is Kubernetes' taint eviction controller: it
// deletes the pods of a node with NoExecute taints they do not tolerate.
//
// # Rules (Decide, a pure function)
//
//   - Only NoExecute taints count; a node without one evicts nothing, and
//     a pod's timer ends when its node has none left.
//   - A pod that is terminal (Succeeded, Failed) or already being deleted
//     is left alone.
//   - A pod that does not tolerate every NoExecute taint (Kubernetes'
//     ToleratesTaint: effect NoExecute or empty, key, Equal/Exists) is
//     deleted at once.
//   - A pod that tolerates them all stays forever when none of the
//     tolerations used carries tolerationSeconds; else it is deleted once
//     the smallest tolerationSeconds among them (negative counts as 0) has
//     passed since the controller first saw the pod on the tainted node,
//     as upstream's timed eviction queue (so a controller restart starts
//     the timers anew, as upstream does).
//
// # Writes
//
//   - Eviction is a delete with a uid precondition and the pod's own grace
//     period, and a Normal event TaintManagerEviction ("Marking for
//     deletion Pod ns/name"). NotFound and Conflict (gone or replaced)
//     are not retried; other errors retry the node with back-off.
//   - Keys are node names: a node is synced when it changes, when a pod
//     is bound to a node with NoExecute taints, and at the next deadline.
package tainteviction
