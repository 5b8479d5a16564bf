package nodelifecycle

import (
	"slices"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Taints this controller manages (both NoSchedule, as Kubernetes'
// TaintNodesByCondition sets them): the scheduler keeps new pods off.
const (
	TaintUnreachable = "node.kubernetes.io/unreachable"
	TaintNotReady    = "node.kubernetes.io/not-ready"
)

// Reasons and messages of the Ready condition this controller writes, as
// Kubernetes' node lifecycle controller writes them.
const (
	ReasonNodeStatusUnknown      = "NodeStatusUnknown"
	MessageNodeStatusUnknown     = "Kubelet stopped posting node status."
	ReasonNodeStatusNeverUpdated = "NodeStatusNeverUpdated"
	MessageNodeNeverUpdated      = "Kubelet never posted node status."
)

// health is what the controller remembers of one node between syncs. The
// times are the controller's clock, never the node's: a heartbeat counts
// when its value changes, whatever time it carries, so clock skew between
// node and controller does not matter (as in Kubernetes).
type health struct {
	// Last heartbeat values seen: the Lease's spec.renewTime and the Ready
	// condition's lastHeartbeatTime.
	leaseRenew time.Time
	statusBeat time.Time
	// probe is when a heartbeat was last seen (or the node first seen).
	probe time.Time
	// notReadySince is when the node was first seen not Ready (Ready False
	// or Unknown, or missing once the grace period has passed); zero while
	// it is Ready.
	notReadySince time.Time
}

// input is everything one decision about a node needs.
type input struct {
	node  *api.Node
	lease *api.Lease // nil when the node has none
	prev  health     // zero value the first time the node is seen
	pods  []*api.Pod // pods with spec.nodeName == node
	now   time.Time
	grace time.Duration // NodeMonitorGracePeriod
	evict time.Duration // PodEvictionTimeout
}

// plan is what to do about a node; the zero plan does nothing.
type plan struct {
	health health
	// ready, when set, is the Ready condition to write through nodes/status.
	ready *api.NodeCondition
	// taints, when updateTaints, replaces spec.taints; taintStatus is the
	// Ready status they follow (apply recomputes them on a fresher node).
	taints       []api.Taint
	updateTaints bool
	taintStatus  api.ConditionStatus
	// becameNotReady: this plan marks a Ready node Unknown (for an event).
	becameNotReady bool
	// markNotReady: pods whose Ready/ContainersReady must turn False.
	markNotReady []*api.Pod
	// evict: controller-owned pods to delete with grace period 0.
	evict []*api.Pod
	// requeueAfter is when the node next needs a look (0: only on change).
	requeueAfter time.Duration
}

// readyCondition returns the node's Ready condition, or nil.
func readyCondition(n *api.Node) *api.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == api.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// decide is the node lifecycle state machine; it is pure.
//
//   - A heartbeat is a change of the Lease's renewTime or of the Ready
//     condition's lastHeartbeatTime; probe moves to now on each one (and
//     on first sight).
//   - Silent for grace (now-probe >= grace): a Ready condition that is not
//     already Unknown becomes Unknown/NodeStatusUnknown (keeping its
//     lastHeartbeatTime); a missing one becomes Unknown/
//     NodeStatusNeverUpdated.
//   - Taints follow the (new) Ready status: True none of ours; False
//     not-ready:NoSchedule; Unknown unreachable:NoSchedule. No Ready
//     condition within the grace period: taints untouched.
//   - Not Ready: every pod on the node with a Ready or ContainersReady
//     condition that is not False is marked not ready; once not Ready for
//     evict, every pod with a controller ownerReference is evicted
//     (bare pods stay: nothing would recreate them), except pods that
//     tolerate the node's not-ready/unreachable NoExecute taint forever
//     (no tolerationSeconds), as Kubernetes' taint-based eviction spares
//     them: DaemonSet pods.
func decide(in input) plan {
	p := plan{health: in.prev}
	h := &p.health
	cond := readyCondition(in.node)

	var leaseRenew, statusBeat time.Time
	if in.lease != nil && in.lease.Spec.RenewTime != nil {
		leaseRenew = in.lease.Spec.RenewTime.Time
	}
	if cond != nil {
		statusBeat = cond.LastHeartbeatTime.Time
	}
	if h.probe.IsZero() || leaseRenew.After(h.leaseRenew) || statusBeat.After(h.statusBeat) {
		h.probe = in.now
	}
	if leaseRenew.After(h.leaseRenew) {
		h.leaseRenew = leaseRenew
	}
	if statusBeat.After(h.statusBeat) {
		h.statusBeat = statusBeat
	}

	status := api.ConditionStatus("")
	if cond != nil {
		status = cond.Status
	}
	silent := in.now.Sub(h.probe) >= in.grace
	if silent && status != api.ConditionUnknown {
		c := api.NodeCondition{Type: api.NodeReady, Status: api.ConditionUnknown,
			Reason: ReasonNodeStatusUnknown, Message: MessageNodeStatusUnknown,
			LastTransitionTime: api.NewTime(in.now)}
		if cond != nil {
			c.LastHeartbeatTime = cond.LastHeartbeatTime
		} else {
			c.Reason, c.Message = ReasonNodeStatusNeverUpdated, MessageNodeNeverUpdated
			c.LastHeartbeatTime = in.node.CreationTimestamp
		}
		p.ready = &c
		p.becameNotReady = status == api.ConditionTrue
		status = api.ConditionUnknown
	}

	if status != "" {
		if taints, changed := desiredTaints(in.node.Spec.Taints, status, in.now); changed {
			p.taints, p.updateTaints, p.taintStatus = taints, true, status
		}
	}

	switch status {
	case api.ConditionTrue:
		h.notReadySince = time.Time{}
		p.requeueAfter = h.probe.Add(in.grace).Sub(in.now)
		return p
	case "":
		// No Ready condition yet, still within the grace period.
		p.requeueAfter = h.probe.Add(in.grace).Sub(in.now)
		return p
	}
	if h.notReadySince.IsZero() {
		h.notReadySince = in.now
	}
	evictNow := in.now.Sub(h.notReadySince) >= in.evict
	for _, pod := range in.pods {
		if evictNow && api.ControllerRef(&pod.ObjectMeta) != nil && !forceDeleting(pod) && !toleratesForever(pod, status) {
			p.evict = append(p.evict, pod)
			continue
		}
		if podNeedsNotReady(pod) {
			p.markNotReady = append(p.markNotReady, pod)
		}
	}
	if !evictNow {
		p.requeueAfter = h.notReadySince.Add(in.evict).Sub(in.now)
	}
	return p
}

// toleratesForever: the pod tolerates the NoExecute taint Kubernetes puts
// on a node of this Ready status (not-ready for False, unreachable for
// Unknown) with no tolerationSeconds, so Kubernetes' taint-based eviction
// never evicts it. DaemonSet pods get such tolerations.
func toleratesForever(p *api.Pod, status api.ConditionStatus) bool {
	key := TaintUnreachable
	if status == api.ConditionFalse {
		key = TaintNotReady
	}
	for _, t := range p.Spec.Tolerations {
		if (t.Key == key || (t.Key == "" && t.Operator == "Exists")) &&
			(t.Effect == "" || t.Effect == api.TaintEffectNoExecute) && t.TolerationSeconds == nil &&
			(t.Operator == "Exists" || (t.Key != "" && t.Value == "")) {
			return true
		}
	}
	return false
}

// forceDeleting: already deleted with grace 0 (waiting on finalizers);
// another delete would change nothing.
func forceDeleting(p *api.Pod) bool {
	return p.DeletionTimestamp != nil && p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds == 0
}

// podNeedsNotReady reports a pod with a Ready or ContainersReady condition
// that is not False.
func podNeedsNotReady(p *api.Pod) bool {
	for _, c := range p.Status.Conditions {
		if (c.Type == api.PodReady || c.Type == api.ContainersReady) && c.Status != api.ConditionFalse {
			return true
		}
	}
	return false
}

// desiredTaints returns taints with this controller's NoSchedule taints
// set for status (keeping the timeAdded of one already present), and
// whether that differs from taints.
func desiredTaints(taints []api.Taint, status api.ConditionStatus, now time.Time) ([]api.Taint, bool) {
	want := ""
	switch status {
	case api.ConditionFalse:
		want = TaintNotReady
	case api.ConditionUnknown:
		want = TaintUnreachable
	}
	ours := func(t api.Taint) bool {
		return t.Effect == api.TaintEffectNoSchedule && (t.Key == TaintNotReady || t.Key == TaintUnreachable)
	}
	var out []api.Taint
	have := false
	for _, t := range taints {
		switch {
		case !ours(t):
			out = append(out, t)
		case t.Key == want && !have:
			out = append(out, t)
			have = true
		}
	}
	if want != "" && !have {
		at := api.NewTime(now)
		out = append(out, api.Taint{Key: want, Effect: api.TaintEffectNoSchedule, TimeAdded: &at})
	}
	changed := !slices.EqualFunc(out, taints, func(a, b api.Taint) bool {
		return a.Key == b.Key && a.Value == b.Value && a.Effect == b.Effect
	})
	return out, changed
}

// markPodNotReady sets the pod's Ready and ContainersReady conditions to
// False (adding them when missing) with the transition at now.
func markPodNotReady(st *api.PodStatus, now time.Time) {
	for _, t := range []string{api.ContainersReady, api.PodReady} {
		c := api.GetPodCondition(st, t)
		if c == nil {
			st.Conditions = append(st.Conditions, api.PodCondition{Type: t})
			c = &st.Conditions[len(st.Conditions)-1]
		}
		if c.Status == api.ConditionFalse {
			continue
		}
		c.Status = api.ConditionFalse
		c.Reason = "NodeNotReady"
		c.Message = "the pod's node is not ready"
		c.LastTransitionTime = api.NewTime(now)
	}
}
