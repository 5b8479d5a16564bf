package daemonset

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"sort"
	"strconv"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Taint keys of the default tolerations every daemon pod gets, as
// Kubernetes names them.
const (
	TaintNodeNotReady           = "node.kubernetes.io/not-ready"
	TaintNodeUnreachable        = "node.kubernetes.io/unreachable"
	TaintNodeDiskPressure       = "node.kubernetes.io/disk-pressure"
	TaintNodeMemoryPressure     = "node.kubernetes.io/memory-pressure"
	TaintNodePIDPressure        = "node.kubernetes.io/pid-pressure"
	TaintNodeUnschedulable      = "node.kubernetes.io/unschedulable"
	TaintNodeNetworkUnavailable = "node.kubernetes.io/network-unavailable"
)

// Input is what one reconcile of a DaemonSet looks at.
type Input struct {
	DS *api.DaemonSet
	// Nodes are every Node in the cluster.
	Nodes []*api.Node
	// Pods are the pods the DaemonSet controls (claimed), terminating and
	// terminal ones included.
	Pods []*api.Pod
	// Hash is the template hash (the controller-revision-hash label of
	// up-to-date pods).
	Hash string
	Now  time.Time
	// FailedBackoff holds, per node, until when a Failed pod there is
	// left alone (Kubernetes' failed-pods back-off, so a node that keeps
	// rejecting the pod is not hot-looped).
	FailedBackoff map[string]time.Time
}

// Reason says why a pod is deleted.
type Reason string

// Delete reasons.
const (
	ReasonFailed        Reason = "Failed"        // phase Failed: replaced
	ReasonSucceeded     Reason = "Succeeded"     // phase Succeeded: replaced
	ReasonExcess        Reason = "Excess"        // a second pod on a node
	ReasonNotEligible   Reason = "NotEligible"   // the node may no longer run it
	ReasonNodeGone      Reason = "NodeGone"      // its node was deleted
	ReasonUpdate        Reason = "Update"        // replaced by a rolling update
	ReasonSurgeReplaced Reason = "SurgeReplaced" // its surge replacement is available
)

// Delete is one pod to delete.
type Delete struct {
	Pod    *api.Pod
	Reason Reason
}

// Plan is what a reconcile decided: pods to create (by node name, in
// order) and pods to delete. Rolling is true when the deletions and
// creations come from the rolling update (the manage step had nothing to
// do).
type Plan struct {
	Create  []string
	Delete  []Delete
	Rolling bool
	// RequeueAfter > 0 asks for another look then (a pod becoming
	// available).
	RequeueAfter time.Duration
}

// Empty reports a plan with nothing to write.
func (p Plan) Empty() bool { return len(p.Create) == 0 && len(p.Delete) == 0 }

// Reconcile computes the plan of one DaemonSet: first what Kubernetes'
// manage step does (a pod on each node that should run one, none on nodes
// that should not, failed pods replaced, extra pods removed); when that
// has nothing to do, the RollingUpdate step (OnDelete has none).
func Reconcile(in Input) Plan {
	if in.DS.DeletionTimestamp != nil {
		return Plan{}
	}
	p := manage(in)
	if !p.Empty() {
		return p
	}
	if in.DS.Spec.UpdateStrategy.Type == api.RollingUpdateDaemonSetStrategyType {
		p = rollingUpdate(in)
		p.Rolling = !p.Empty()
	}
	return p
}

// nodeToPods groups pods by their node (spec.nodeName). With
// includeDeletedTerminal false, terminal pods already being deleted are
// left out.
func nodeToPods(pods []*api.Pod, includeDeletedTerminal bool) map[string][]*api.Pod {
	m := map[string][]*api.Pod{}
	for _, p := range pods {
		if !includeDeletedTerminal && isTerminal(p) && p.DeletionTimestamp != nil {
			continue
		}
		m[targetNode(p)] = append(m[targetNode(p)], p)
	}
	return m
}

// targetNode is the node a daemon pod is for. Skiff binds daemon pods by
// spec.nodeName (doc.go, Placement).
func targetNode(p *api.Pod) string { return p.Spec.NodeName }

func isTerminal(p *api.Pod) bool {
	return p.Status.Phase == api.PodFailed || p.Status.Phase == api.PodSucceeded
}

func manage(in Input) Plan {
	var plan Plan
	byNode := nodeToPods(in.Pods, true)
	exists := map[string]bool{}
	for _, n := range in.Nodes {
		exists[n.Name] = true
		if until, ok := in.FailedBackoff[n.Name]; ok && until.After(in.Now) {
			for _, p := range byNode[n.Name] {
				if p.Status.Phase == api.PodFailed && p.DeletionTimestamp == nil {
					plan.requeue(until.Sub(in.Now))
					break
				}
			}
		}
		create, del := podsShouldBeOnNode(in, n, byNode[n.Name])
		if create {
			plan.Create = append(plan.Create, n.Name)
		}
		plan.Delete = append(plan.Delete, del...)
	}
	// Pods for nodes that no longer exist. Kubernetes' controller deletes
	// only the unscheduled ones and leaves bound pods to the pod GC;
	// Skiff has no pod GC, so it deletes them all.
	gone := make([]string, 0)
	for name := range byNode {
		if !exists[name] {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	for _, name := range gone {
		for _, p := range byNode[name] {
			if p.DeletionTimestamp == nil {
				plan.Delete = append(plan.Delete, Delete{Pod: p, Reason: ReasonNodeGone})
			}
		}
	}
	return plan
}

// podsShouldBeOnNode is Kubernetes' podsShouldBeOnNode for one node.
func podsShouldBeOnNode(in Input, node *api.Node, pods []*api.Pod) (create bool, del []Delete) {
	ds := in.DS
	shouldRun, shouldContinue := NodeShouldRunDaemonPod(node, ds)
	switch {
	case shouldRun && len(pods) == 0:
		return true, nil
	case shouldContinue:
		var running []*api.Pod
		for _, p := range pods {
			switch {
			case p.DeletionTimestamp != nil:
			case p.Status.Phase == api.PodFailed:
				if until, ok := in.FailedBackoff[node.Name]; ok && until.After(in.Now) {
					continue
				}
				del = append(del, Delete{Pod: p, Reason: ReasonFailed})
			case p.Status.Phase == api.PodSucceeded:
				del = append(del, Delete{Pod: p, Reason: ReasonSucceeded})
			default:
				running = append(running, p)
			}
		}
		sortPods(running)
		if !AllowsSurge(ds) {
			for _, p := range running[min(1, len(running)):] {
				del = append(del, Delete{Pod: p, Reason: ReasonExcess})
			}
			return false, del
		}
		if len(running) <= 1 {
			return len(running) == 0 && shouldRun, del
		}
		// Surging: keep the oldest new pod and the oldest old pod, and the
		// old one only while the new one is not yet available and the old
		// one is still ready.
		var oldestNew, oldestOld *api.Pod
		for _, p := range running {
			if p.Labels[api.DefaultDaemonSetUniqueLabelKey] == in.Hash {
				if oldestNew == nil {
					oldestNew = p
					continue
				}
			} else if oldestOld == nil {
				oldestOld = p
				continue
			}
			del = append(del, Delete{Pod: p, Reason: ReasonExcess})
		}
		if oldestNew != nil && oldestOld != nil {
			switch {
			case !api.IsPodReady(oldestOld):
				del = append(del, Delete{Pod: oldestOld, Reason: ReasonSurgeReplaced})
			case podAvailable(oldestNew, ds.Spec.MinReadySeconds, in.Now):
				del = append(del, Delete{Pod: oldestOld, Reason: ReasonSurgeReplaced})
			}
		}
		return false, del
	case len(pods) > 0:
		for _, p := range pods {
			if p.DeletionTimestamp == nil {
				del = append(del, Delete{Pod: p, Reason: ReasonNotEligible})
			}
		}
	}
	return false, del
}

// sortPods orders pods as Kubernetes' podByCreationTimestampAndPhase:
// Running before others, then oldest first, then by name.
func sortPods(pods []*api.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if (a.Status.Phase == api.PodRunning) != (b.Status.Phase == api.PodRunning) {
			return a.Status.Phase == api.PodRunning
		}
		if !a.CreationTimestamp.Equal(b.CreationTimestamp.Time) {
			return a.CreationTimestamp.Before(b.CreationTimestamp.Time)
		}
		return a.Name < b.Name
	})
}

// findUpdatedPodsOnNode returns the node's one up-to-date and one old
// pod (not terminating); ok is false when it has more than one of either.
func findUpdatedPodsOnNode(pods []*api.Pod, hash string) (newPod, oldPod *api.Pod, ok bool) {
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Labels[api.DefaultDaemonSetUniqueLabelKey] == hash {
			if newPod != nil {
				return nil, nil, false
			}
			newPod = p
		} else {
			if oldPod != nil {
				return nil, nil, false
			}
			oldPod = p
		}
	}
	return newPod, oldPod, true
}

// desiredCounts is Kubernetes' updatedDesiredNodeCounts: the number of
// nodes that should run the pod, maxSurge and maxUnavailable resolved
// against it (percents rounded up), and byNode extended with an empty entry
// for every such node without a pod.
func desiredCounts(in Input, byNode map[string][]*api.Pod) (maxSurge, maxUnavailable, desired int) {
	for _, n := range in.Nodes {
		if run, _ := NodeShouldRunDaemonPod(n, in.DS); !run {
			continue
		}
		desired++
		if _, ok := byNode[n.Name]; !ok {
			byNode[n.Name] = nil
		}
	}
	maxUnavailable = unavailableCount(in.DS, desired)
	maxSurge = surgeCount(in.DS, desired)
	if desired > 0 && maxUnavailable == 0 && maxSurge == 0 {
		maxUnavailable = 1
	}
	return maxSurge, maxUnavailable, desired
}

func scaled(v *api.IntOrString, total int) int {
	if v == nil {
		return 0
	}
	n, err := api.GetScaledValueFromIntOrPercent(v, total, true)
	if err != nil {
		return 0
	}
	return n
}

func unavailableCount(ds *api.DaemonSet, n int) int {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != api.RollingUpdateDaemonSetStrategyType || ru == nil {
		return 0
	}
	return scaled(ru.MaxUnavailable, n)
}

func surgeCount(ds *api.DaemonSet, n int) int {
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ds.Spec.UpdateStrategy.Type != api.RollingUpdateDaemonSetStrategyType || ru == nil {
		return 0
	}
	return scaled(ru.MaxSurge, n)
}

// AllowsSurge reports whether a rolling update of ds may run a new pod
// next to the old one on a node (maxSurge resolves to more than 0).
func AllowsSurge(ds *api.DaemonSet) bool { return surgeCount(ds, 1) > 0 }

// sortedNodes are byNode's keys, sorted, so plans are deterministic
// (Kubernetes walks a map).
func sortedNodes(byNode map[string][]*api.Pod) []string {
	names := make([]string, 0, len(byNode))
	for n := range byNode {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// rollingUpdate is Kubernetes' rollingUpdate: without surge, delete old
// pods while the unavailable count stays within maxUnavailable (the manage
// step then creates the new ones); with surge, create new pods next to old
// ones (at most maxSurge at a time) and delete an old pod once its new pod
// is available.
func rollingUpdate(in Input) Plan {
	ds := in.DS
	byNode := nodeToPods(in.Pods, false)
	maxSurge, maxUnavailable, desired := desiredCounts(in, byNode)
	minReady := ds.Spec.MinReadySeconds
	nodes := map[string]*api.Node{}
	for _, n := range in.Nodes {
		nodes[n.Name] = n
	}
	var plan Plan
	if maxSurge == 0 {
		numUnavailable := 0
		var allowed, candidates []*api.Pod
		for _, name := range sortedNodes(byNode) {
			newPod, oldPod, ok := findUpdatedPodsOnNode(byNode[name], in.Hash)
			if !ok {
				numUnavailable++
				continue
			}
			switch {
			case oldPod == nil && newPod == nil, oldPod != nil && newPod != nil:
				numUnavailable++
			case newPod != nil:
				if !podAvailable(newPod, minReady, in.Now) {
					numUnavailable++
					plan.requeue(availableIn(newPod, minReady, in.Now))
				}
			default:
				switch {
				case !podAvailable(oldPod, minReady, in.Now):
					allowed = append(allowed, oldPod)
					numUnavailable++
				case numUnavailable >= maxUnavailable:
				default:
					candidates = append(candidates, oldPod)
				}
			}
		}
		remaining := max(0, maxUnavailable-numUnavailable)
		remaining = min(remaining, len(candidates))
		for _, p := range append(allowed, candidates[:remaining]...) {
			plan.Delete = append(plan.Delete, Delete{Pod: p, Reason: ReasonUpdate})
		}
		return plan
	}

	var shouldNotRun []*api.Pod
	var candidateNodes, allowedNodes []string
	numSurge, numAvailable := 0, 0
	for _, name := range sortedNodes(byNode) {
		newPod, oldPod, ok := findUpdatedPodsOnNode(byNode[name], in.Hash)
		if !ok {
			numSurge++
			continue
		}
		if oldPod != nil {
			if podAvailable(oldPod, minReady, in.Now) {
				numAvailable++
			}
		} else if newPod != nil && podAvailable(newPod, minReady, in.Now) {
			numAvailable++
		}
		switch {
		case oldPod == nil:
		case newPod == nil:
			run := false
			if n, ok := nodes[name]; ok {
				run, _ = NodeShouldRunDaemonPod(n, ds)
			}
			switch {
			case !podAvailable(oldPod, minReady, in.Now):
				if !run {
					plan.Delete = append(plan.Delete, Delete{Pod: oldPod, Reason: ReasonUpdate})
					continue
				}
				allowedNodes = append(allowedNodes, name)
			default:
				if !run {
					shouldNotRun = append(shouldNotRun, oldPod)
					continue
				}
				if numSurge >= maxSurge {
					continue
				}
				candidateNodes = append(candidateNodes, name)
			}
		default:
			if !podAvailable(newPod, minReady, in.Now) {
				numSurge++
				plan.requeue(availableIn(newPod, minReady, in.Now))
				continue
			}
			plan.Delete = append(plan.Delete, Delete{Pod: oldPod, Reason: ReasonSurgeReplaced})
		}
	}
	remaining := maxSurge - numSurge
	// Only delete pods on nodes that may no longer run them once as many
	// pods as desired are available elsewhere.
	if deletable := min(numAvailable-desired, len(shouldNotRun)); deletable > 0 {
		for _, p := range shouldNotRun[:deletable] {
			plan.Delete = append(plan.Delete, Delete{Pod: p, Reason: ReasonNotEligible})
		}
	}
	remaining = min(max(0, remaining), len(candidateNodes))
	plan.Create = append(allowedNodes, candidateNodes[:remaining]...)
	return plan
}

func (p *Plan) requeue(d time.Duration) {
	if d > 0 && (p.RequeueAfter == 0 || d < p.RequeueAfter) {
		p.RequeueAfter = d
	}
}

// podAvailable is Kubernetes' IsPodAvailable: Ready for at least
// minReadySeconds.
func podAvailable(p *api.Pod, minReadySeconds int32, now time.Time) bool {
	return availableIn(p, minReadySeconds, now) == 0
}

// availableIn is how long until a ready pod becomes available: 0 when it
// is, < 0 when it is not ready.
func availableIn(p *api.Pod, minReadySeconds int32, now time.Time) time.Duration {
	c := api.GetPodCondition(&p.Status, api.PodReady)
	if c == nil || c.Status != api.ConditionTrue {
		return -1
	}
	if minReadySeconds <= 0 || c.LastTransitionTime.IsZero() {
		return 0
	}
	return max(0, c.LastTransitionTime.Add(time.Duration(minReadySeconds)*time.Second).Sub(now))
}

// ComputeStatus is the DaemonSet's status as Kubernetes'
// updateDaemonSetStatus counts it, over the nodes that should run the pod
// (the oldest pod of each node counts). requeue > 0 is when a ready pod
// becomes available.
func ComputeStatus(in Input) (st api.DaemonSetStatus, requeue time.Duration) {
	ds := in.DS
	st = api.DaemonSetStatus{
		ObservedGeneration: ds.Generation,
		CollisionCount:     ds.Status.CollisionCount,
		Conditions:         ds.Status.Conditions,
	}
	byNode := nodeToPods(in.Pods, false)
	for _, n := range in.Nodes {
		run, _ := NodeShouldRunDaemonPod(n, ds)
		pods := byNode[n.Name]
		if !run {
			if len(pods) > 0 {
				st.NumberMisscheduled++
			}
			continue
		}
		st.DesiredNumberScheduled++
		if len(pods) == 0 {
			continue
		}
		st.CurrentNumberScheduled++
		pods = append([]*api.Pod(nil), pods...)
		sortPods(pods)
		p := pods[0]
		if api.IsPodReady(p) {
			st.NumberReady++
			if d := availableIn(p, ds.Spec.MinReadySeconds, in.Now); d == 0 {
				st.NumberAvailable++
			} else if requeue == 0 || d < requeue {
				requeue = d
			}
		}
		if p.Labels[api.DefaultDaemonSetUniqueLabelKey] == in.Hash {
			st.UpdatedNumberScheduled++
		}
	}
	st.NumberUnavailable = st.DesiredNumberScheduled - st.NumberAvailable
	return st, requeue
}

// NodeShouldRunDaemonPod is Kubernetes' rule: shouldRun is whether a new
// daemon pod belongs on node (spec.nodeName of the template, when set,
// names it; the pod's required node affinity, which includes its
// nodeSelector, matches; every NoSchedule and NoExecute taint tolerated);
// shouldContinueRunning is whether a pod already there may stay (the same,
// but only NoExecute taints count).
func NodeShouldRunDaemonPod(node *api.Node, ds *api.DaemonSet) (shouldRun, shouldContinueRunning bool) {
	spec := &ds.Spec.Template.Spec
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return false, false
	}
	if !requiredNodeAffinityMatches(spec, node) {
		return false, false
	}
	tols := daemonTolerations(spec)
	untolerated := func(effects ...string) bool {
		for i := range node.Spec.Taints {
			t := &node.Spec.Taints[i]
			for _, e := range effects {
				if t.Effect == e && !tolerates(tols, t) {
					return true
				}
			}
		}
		return false
	}
	if untolerated(api.TaintEffectNoSchedule, api.TaintEffectNoExecute) {
		return false, !untolerated(api.TaintEffectNoExecute)
	}
	return true, true
}

// requiredNodeAffinityMatches is Kubernetes' GetRequiredNodeAffinity(pod).
// Match(node): the nodeSelector's labels, and the pod's
// requiredDuringSchedulingIgnoredDuringExecution node affinity.
//
// AFFINITY HOOK: Skiff's PodSpec has no affinity field yet. When
// spec.affinity.nodeAffinity lands, match its required node selector terms
// here as well (any term matches: all its matchExpressions against the
// node's labels and its matchFields against metadata.name), and switch
// pod placement to the node affinity of doc.go's Placement section.
func requiredNodeAffinityMatches(spec *api.PodSpec, node *api.Node) bool {
	for k, v := range spec.NodeSelector {
		if lv, ok := node.Labels[k]; !ok || lv != v {
			return false
		}
	}
	return true
}

// tolerates is Kubernetes' Toleration.ToleratesTaint over tols.
func tolerates(tols []api.Toleration, taint *api.Taint) bool {
	for i := range tols {
		t := &tols[i]
		if t.Effect != "" && t.Effect != taint.Effect {
			continue
		}
		if t.Key != "" && t.Key != taint.Key {
			continue
		}
		switch t.Operator {
		case "", "Equal":
			if t.Key != "" && t.Value == taint.Value {
				return true
			}
		case "Exists":
			return true
		}
	}
	return false
}

// daemonTolerations are spec's tolerations plus the ones Kubernetes adds to
// every daemon pod (AddOrUpdateDaemonPodTolerations): not-ready and
// unreachable NoExecute with no time limit; disk-, memory- and
// pid-pressure and unschedulable NoSchedule; network-unavailable
// NoSchedule for hostNetwork pods. A toleration of the same key, operator
// and effect is replaced.
func daemonTolerations(spec *api.PodSpec) []api.Toleration {
	tols := append([]api.Toleration(nil), spec.Tolerations...)
	add := func(key, effect string) {
		t := api.Toleration{Key: key, Operator: "Exists", Effect: effect}
		for i := range tols {
			if tols[i].Key == key && tols[i].Effect == effect && (tols[i].Operator == "Exists" || tols[i].Operator == "") {
				tols[i] = t
				return
			}
		}
		tols = append(tols, t)
	}
	add(TaintNodeNotReady, api.TaintEffectNoExecute)
	add(TaintNodeUnreachable, api.TaintEffectNoExecute)
	add(TaintNodeDiskPressure, api.TaintEffectNoSchedule)
	add(TaintNodeMemoryPressure, api.TaintEffectNoSchedule)
	add(TaintNodePIDPressure, api.TaintEffectNoSchedule)
	add(TaintNodeUnschedulable, api.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(TaintNodeNetworkUnavailable, api.TaintEffectNoSchedule)
	}
	return tols
}

// safeAlphabet is Kubernetes' rand.SafeEncodeString alphabet.
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// TemplateHash is the controller-revision-hash of ds's template: the
// FNV-32a of the template's JSON and the collision count, safe encoded, as
// Kubernetes' controller.ComputeHash (over JSON instead of a Go dump, so
// the values differ from Kubernetes' own).
func TemplateHash(ds *api.DaemonSet) (string, error) {
	data, err := json.Marshal(ds.Spec.Template)
	if err != nil {
		return "", fmt.Errorf("daemonset: hash template of %s/%s: %w", ds.Namespace, ds.Name, err)
	}
	h := fnv.New32a()
	h.Write(data)
	if c := ds.Status.CollisionCount; c != nil {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(*c))
		h.Write(b[:])
	}
	b := []byte(strconv.FormatUint(uint64(h.Sum32()), 10))
	for i, c := range b {
		b[i] = safeAlphabet[int(c)%len(safeAlphabet)]
	}
	return string(b), nil
}

// controllerRef is the ownerReference of ds's pods.
func controllerRef(ds *api.DaemonSet) api.OwnerReference {
	yes := true
	return api.OwnerReference{
		APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID,
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

// NewPod is the daemon pod of node: generateName <ds>-, the template's
// labels plus controller-revision-hash, its annotations, a controller
// ownerReference, the default daemon tolerations, and spec.nodeName set to
// node (doc.go, Placement).
func NewPod(ds *api.DaemonSet, node, hash string) *api.Pod {
	tmpl := &ds.Spec.Template
	labels := maps.Clone(tmpl.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[api.DefaultDaemonSetUniqueLabelKey] = hash
	spec := api.DeepCopy(&api.Pod{Spec: tmpl.Spec}).Spec
	spec.Tolerations = daemonTolerations(&spec)
	spec.NodeName = node
	return &api.Pod{
		TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: api.ObjectMeta{
			GenerateName:    ds.Name + "-",
			Namespace:       ds.Namespace,
			Labels:          labels,
			Annotations:     maps.Clone(tmpl.Annotations),
			OwnerReferences: []api.OwnerReference{controllerRef(ds)},
		},
		Spec: spec,
	}
}
