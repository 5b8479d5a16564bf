package replicaset

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// DefaultBurst is how many pods one round creates or deletes at most, as
// upstream's BurstReplicas.
const DefaultBurst = 500

// AnnotationPodDeletionCost ranks a set's pods for deletion: lower cost
// first (an int32; anything else counts as 0).
const AnnotationPodDeletionCost = "controller.kubernetes.io/pod-deletion-cost"

// Input is what one Reconcile looks at. Pods are read, never changed.
type Input struct {
	Set *Set
	// Pods are the candidate pods of the set's namespace: those whose
	// controller ownerReference has the set's uid, and those without a
	// controller. Others are ignored.
	Pods []*api.Pod
	// Related are the active pods of every set controlled by the same
	// owner as Set (Set's own included), for the co-location rank of
	// deletion; empty for a set without a controller, as upstream.
	Related []*api.Pod
	// NeedsSync is true when the set's expectations are satisfied: only
	// then are pods created or deleted.
	NeedsSync bool
	// Burst caps the creations or deletions of one round; 0 means
	// DefaultBurst.
	Burst int
	Now   time.Time
}

// Plan is what Reconcile decides; Apply carries it out in this order.
type Plan struct {
	// Adopt are orphans that match the selector: they get the set's
	// controller ownerReference.
	Adopt []*api.Pod
	// Release are pods the set controls whose labels no longer match:
	// the set's ownerReference is removed.
	Release []*api.Pod
	// Owned are the set's active pods once Adopt and Release are done;
	// the status counts them.
	Owned []*api.Pod
	// Create is how many pods to create from the template.
	Create int
	// Delete are the pods to delete, most deletable first.
	Delete []*api.Pod
}

// Empty reports whether the plan writes nothing.
func (p *Plan) Empty() bool {
	return len(p.Adopt) == 0 && len(p.Release) == 0 && p.Create == 0 && len(p.Delete) == 0
}

// IsActive is upstream's IsPodActive: not Succeeded, not Failed, not being
// deleted. Only active pods are claimed and counted.
func IsActive(p *api.Pod) bool {
	return p.Status.Phase != api.PodSucceeded && p.Status.Phase != api.PodFailed && p.DeletionTimestamp == nil
}

// Reconcile claims the set's pods (ControllerRef rules) and, when
// in.NeedsSync and the set is not being deleted, decides how many pods to
// create or which to delete. It is pure.
func Reconcile(in Input) Plan {
	s := in.Set
	var p Plan
	for _, pod := range in.Pods {
		if !IsActive(pod) || pod.Namespace != s.Namespace {
			continue
		}
		match := api.SelectorMatches(s.Selector, pod.Labels)
		ref := api.ControllerRef(&pod.ObjectMeta)
		switch {
		case ref != nil && ref.UID != s.UID:
			// Another controller's pod (a Deployment's, another set's):
			// never touched.
		case ref != nil && match:
			p.Owned = append(p.Owned, pod)
		case ref != nil:
			// Ours but no longer matching: released, unless the set is
			// being deleted.
			if !s.Deleting {
				p.Release = append(p.Release, pod)
			}
		case !s.Deleting && match:
			// An orphan that matches: adopted, unless the set is being
			// deleted.
			p.Adopt = append(p.Adopt, pod)
			p.Owned = append(p.Owned, pod)
		}
	}
	if !in.NeedsSync || s.Deleting || s.Template == nil {
		return p
	}
	burst := in.Burst
	if burst <= 0 {
		burst = DefaultBurst
	}
	switch diff := len(p.Owned) - int(s.Replicas); {
	case diff < 0:
		p.Create = min(-diff, burst)
	case diff > 0:
		p.Delete = PodsToDelete(p.Owned, in.Related, min(diff, burst), in.Now)
	}
	return p
}

// PodsToDelete returns the n most deletable of pods, as upstream's
// getPodsToDelete: ranked by the number of related active pods on the
// same node, then ordered by CompareForDeletion.
func PodsToDelete(pods, related []*api.Pod, n int, now time.Time) []*api.Pod {
	onNode := map[string]int{}
	for _, r := range related {
		if IsActive(r) {
			onNode[r.Spec.NodeName]++
		}
	}
	ranked := make([]rankedPod, len(pods))
	for i, p := range pods {
		ranked[i] = rankedPod{pod: p, rank: onNode[p.Spec.NodeName]}
	}
	slices.SortStableFunc(ranked, func(a, b rankedPod) int { return compareRanked(a, b, now) })
	out := make([]*api.Pod, 0, min(n, len(ranked)))
	for _, r := range ranked[:min(n, len(ranked))] {
		out = append(out, r.pod)
	}
	return out
}

type rankedPod struct {
	pod  *api.Pod
	rank int
}

// CompareForDeletion orders two pods of the same rank for deletion (-1:
// a goes first); see compareRanked.
func CompareForDeletion(a, b *api.Pod, now time.Time) int {
	return compareRanked(rankedPod{pod: a}, rankedPod{pod: b}, now)
}

// compareRanked is upstream's ActivePodsWithRanks.Less, as a three-way
// comparison (most deletable first):
//  1. unscheduled before scheduled;
//  2. Pending before Unknown before Running;
//  3. not ready before ready;
//  4. lower pod-deletion-cost first;
//  5. higher rank (more related pods on its node) first;
//  6. both ready: ready for less time first, compared on a log2 scale of
//     the time since (LogarithmicScaleDown), equal buckets by uid;
//  7. more container restarts first;
//  8. newer first, on the same log2 scale, equal buckets by uid;
//  9. by name, so that the order is total.
func compareRanked(x, y rankedPod, now time.Time) int {
	a, b := x.pod, y.pod
	if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
		return first(a.Spec.NodeName == "")
	}
	if pa, pb := phaseOrdinal(a.Status.Phase), phaseOrdinal(b.Status.Phase); pa != pb {
		return cmp.Compare(pa, pb)
	}
	ra, rb := api.IsPodReady(a), api.IsPodReady(b)
	if ra != rb {
		return first(!ra)
	}
	if ca, cb := deletionCost(a), deletionCost(b); ca != cb {
		return cmp.Compare(ca, cb)
	}
	if x.rank != y.rank {
		return first(x.rank > y.rank)
	}
	if ra && rb {
		ta, tb := readyTime(a), readyTime(b)
		if !ta.Equal(tb) {
			if c := compareLog(a, b, ta, tb, now); c != 0 {
				return c
			}
		}
	}
	if na, nb := maxRestarts(a), maxRestarts(b); na != nb {
		return first(na > nb)
	}
	if ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time; !ta.Equal(tb) {
		if c := compareLog(a, b, ta, tb, now); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Name, b.Name)
}

// compareLog puts the later of two times first: a zero time counts as the
// latest; with now set and both times set, times whose age falls in the
// same power-of-two bucket tie and the lower uid goes first.
func compareLog(a, b *api.Pod, ta, tb, now time.Time) int {
	if now.IsZero() || ta.IsZero() || tb.IsZero() {
		return first(afterOrZero(ta, tb))
	}
	if d := logBucket(now.Sub(ta)) - logBucket(now.Sub(tb)); d != 0 {
		return first(d < 0)
	}
	return cmp.Compare(a.UID, b.UID)
}

// logBucket is upstream's int64(math.Log2(age in ns)), -1 for an age <= 0.
func logBucket(d time.Duration) int64 {
	if d <= 0 {
		return -1
	}
	return int64(math.Log2(float64(d)))
}

func afterOrZero(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero()
	}
	return a.After(b)
}

// first is -1 when the first pod goes first, else 1.
func first(yes bool) int {
	if yes {
		return -1
	}
	return 1
}

func phaseOrdinal(phase string) int {
	switch phase {
	case api.PodUnknown:
		return 1
	case api.PodRunning:
		return 2
	}
	return 0 // Pending (and anything else, as upstream's map lookup)
}

func deletionCost(p *api.Pod) int32 {
	v, ok := p.Annotations[AnnotationPodDeletionCost]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

// readyTime is the Ready condition's lastTransitionTime (zero when not
// ready or unknown).
func readyTime(p *api.Pod) time.Time {
	if c := api.GetPodCondition(&p.Status, api.PodReady); c != nil && c.Status == api.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

func maxRestarts(p *api.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n = max(n, cs.RestartCount)
	}
	return n
}

// IsAvailable is upstream's IsPodAvailable: ready, and with minReady > 0
// ready since strictly more than minReady before now.
func IsAvailable(p *api.Pod, minReady time.Duration, now time.Time) bool {
	if !api.IsPodReady(p) {
		return false
	}
	t := readyTime(p)
	return minReady <= 0 || (!t.IsZero() && t.Add(minReady).Before(now))
}

// Reasons of the ReplicaFailure condition.
const (
	ReasonFailedCreate = "FailedCreate"
	ReasonFailedDelete = "FailedDelete"
)

// ComputeStatus is upstream's calculateStatus over the set's owned pods:
// replicas, fullyLabeledReplicas (pods carrying every template label),
// readyReplicas, availableReplicas (ready for more than minReadySeconds),
// observedGeneration, and the ReplicaFailure condition: added (True,
// FailedCreate when pods were missing, FailedDelete when there were too
// many, the error as message) when manageErr is set and it is absent,
// removed when manageErr is nil. It also returns how long until a ready
// pod becomes available (0: none is waiting), so the set is looked at
// again then.
func ComputeStatus(s *Set, owned []*api.Pod, manageErr error, now time.Time) (api.ReplicaSetStatus, time.Duration) {
	st := s.Status
	st.Conditions = slices.Clone(st.Conditions)
	var tmplLabels map[string]string
	if s.Template != nil {
		tmplLabels = s.Template.Labels
	}
	minReady := time.Duration(s.MinReadySeconds) * time.Second
	var full, ready, avail int32
	var wait time.Duration
	for _, p := range owned {
		if api.MapSelectorMatches(tmplLabels, p.Labels) {
			full++
		}
		if !api.IsPodReady(p) {
			continue
		}
		ready++
		if IsAvailable(p, minReady, now) {
			avail++
		} else if t := readyTime(p); !t.IsZero() {
			if d := t.Add(minReady).Sub(now) + time.Second; wait == 0 || d < wait {
				wait = max(d, time.Second)
			}
		}
	}
	i := slices.IndexFunc(st.Conditions, func(c api.ReplicaSetCondition) bool { return c.Type == api.ReplicaSetReplicaFailure })
	switch {
	case manageErr != nil && i < 0:
		reason := ""
		if diff := len(owned) - int(s.Replicas); diff < 0 {
			reason = ReasonFailedCreate
		} else if diff > 0 {
			reason = ReasonFailedDelete
		}
		st.Conditions = append(st.Conditions, api.ReplicaSetCondition{
			Type: api.ReplicaSetReplicaFailure, Status: api.ConditionTrue,
			LastTransitionTime: api.NewTime(now), Reason: reason, Message: manageErr.Error(),
		})
	case manageErr == nil && i >= 0:
		st.Conditions = slices.Delete(st.Conditions, i, i+1)
	}
	if len(st.Conditions) == 0 {
		st.Conditions = nil
	}
	st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = int32(len(owned)), full, ready, avail
	st.ObservedGeneration = s.Generation
	return st, wait
}
