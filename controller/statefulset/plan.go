package statefulset

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Op is the kind of write an Action makes.
type Op string

const (
	// OpCreate creates the pod of an ordinal.
	OpCreate Op = "create"
	// OpDelete deletes a pod (guarded by its uid).
	OpDelete Op = "delete"
)

// Why an action is taken.
const (
	ReasonMissing   = "missing"   // the ordinal has no pod
	ReasonFailed    = "failed"    // the pod's phase is Failed or Succeeded: replaced
	ReasonCondemned = "condemned" // the ordinal is beyond spec.replicas
	ReasonUpdate    = "update"    // the pod is not at the update revision
)

// Action is one write of a plan.
type Action struct {
	Op      Op
	Ordinal int
	// Pod is the pod to delete (OpDelete).
	Pod *api.Pod
	// Revision is the revision to create the pod at (OpCreate).
	Revision string
	Reason   string
}

// String is "create 0" or "delete 2" (tests compare these).
func (a Action) String() string { return fmt.Sprintf("%s %d", a.Op, a.Ordinal) }

// Plan is what one sync does: the actions, in order, and, when it stops
// short, why and when to look again.
type Plan struct {
	Actions []Action
	// Wait says what the plan waits for ("" when nothing blocks).
	Wait string
	// RequeueAfter > 0 asks for another sync after that long (a pod that
	// becomes available only once minReadySeconds have passed).
	RequeueAfter time.Duration
}

// revisions are the set's current revision (of the pods before the update
// started) and update revision (of spec.template).
type revisions struct {
	current, update string
}

// slot is one pod position: an ordinal, its pod (nil when missing), and
// what this plan already does to it.
type slot struct {
	ordinal  int
	pod      *api.Pod
	creating string // revision the plan creates the pod at ("" = no create)
	deleting bool   // the plan deletes the pod
}

func (s *slot) name(set string) string { return podName(set, s.ordinal) }

func (s *slot) revision() string {
	if s.creating != "" {
		return s.creating
	}
	if s.pod == nil {
		return ""
	}
	return s.pod.Labels[RevisionLabel]
}

func (s *slot) terminating() bool {
	return s.deleting || (s.pod != nil && s.pod.DeletionTimestamp != nil)
}

// healthy: the pod exists, runs, is Ready and is not going away.
func (s *slot) healthy() bool {
	return s.pod != nil && s.creating == "" && !s.terminating() && runningAndReady(s.pod)
}

// podName is <set>-<ordinal>.
func podName(set string, ordinal int) string { return set + "-" + strconv.Itoa(ordinal) }

// ordinalOf parses a pod name of set: <set>-<ordinal> with the ordinal in
// canonical decimal form; ok is false for any other name.
func ordinalOf(set, pod string) (int, bool) {
	rest, found := strings.CutPrefix(pod, set+"-")
	if !found || rest == "" {
		return 0, false
	}
	if rest[0] < '0' || rest[0] > '9' || (rest[0] == '0' && len(rest) > 1) {
		return 0, false // not canonical decimal: a sign or a leading zero
	}
	n, err := strconv.Atoi(rest)
	if err != nil {
		return 0, false
	}
	return n, true
}

// runningAndReady: phase Running and Ready=True.
func runningAndReady(p *api.Pod) bool {
	return p.Status.Phase == api.PodRunning && api.IsPodReady(p)
}

// terminal: the pod's containers will not run again (Failed or Succeeded);
// a StatefulSet replaces it.
func terminal(p *api.Pod) bool {
	return p.Status.Phase == api.PodFailed || p.Status.Phase == api.PodSucceeded
}

// availableIn is how long until a running and ready pod has been Ready for
// minReady: 0 when it is available now, < 0 when it is not ready at all.
func availableIn(p *api.Pod, minReady time.Duration, now time.Time) time.Duration {
	if !runningAndReady(p) {
		return -1
	}
	if minReady <= 0 {
		return 0
	}
	c := api.GetPodCondition(&p.Status, api.PodReady)
	if c.LastTransitionTime.IsZero() {
		return 0
	}
	return max(0, c.LastTransitionTime.Add(minReady).Sub(now))
}

// replicasOf is spec.replicas (1 when unset, as defaulting does).
func replicasOf(set *api.StatefulSet) int {
	if set.Spec.Replicas == nil {
		return 1
	}
	return int(*set.Spec.Replicas)
}

// startOrdinal is spec.ordinals.start (0 when unset).
func startOrdinal(set *api.StatefulSet) int {
	if set.Spec.Ordinals == nil {
		return 0
	}
	return int(set.Spec.Ordinals.Start)
}

// partitionOf is the rolling update's partition (0 when unset or OnDelete).
func partitionOf(set *api.StatefulSet) int {
	ru := set.Spec.UpdateStrategy.RollingUpdate
	if set.Spec.UpdateStrategy.Type == api.OnDeleteStatefulSetStrategyType || ru == nil || ru.Partition == nil {
		return 0
	}
	return int(*ru.Partition)
}

func rollingUpdate(set *api.StatefulSet) bool {
	return set.Spec.UpdateStrategy.Type != api.OnDeleteStatefulSetStrategyType
}

// createRevision is the revision a new pod of ordinal gets: the current
// one below the partition of a rolling update, else the update revision.
func createRevision(set *api.StatefulSet, ordinal int, rev revisions) string {
	if rollingUpdate(set) && ordinal < startOrdinal(set)+partitionOf(set) {
		return rev.current
	}
	return rev.update
}

// computePlan is the pure reconcile step, Kubernetes' StatefulSet
// algorithm: from the set, the pods it owns (any ordinal), its revisions
// and the time, it computes the next writes.
//
//  1. Replicas, lowest ordinal first: a missing pod is created; a Failed
//     (or Succeeded) pod is deleted, to be recreated once it is gone.
//     OrderedReady stops at the first pod it creates or deletes and at the
//     first pod that is terminating, not Running and Ready, or not yet
//     available (minReadySeconds). Parallel goes on.
//  2. Condemned pods (ordinal beyond the replicas), highest first, are
//     deleted. OrderedReady deletes one at a time, waits for a
//     terminating one to be gone, and does not delete an unhealthy pod
//     unless it is the first unhealthy pod of the set. Parallel deletes
//     them all.
//  3. RollingUpdate only: from the highest ordinal down to the partition,
//     the first pod not at the update revision is deleted (it is recreated
//     at the update revision by step 1 of a later sync); the walk stops
//     there, or at the first pod that is not healthy. One pod at a time
//     under both policies. OnDelete stops after step 2.
func computePlan(set *api.StatefulSet, pods []*api.Pod, rev revisions, now time.Time) Plan {
	replicas, start := replicasOf(set), startOrdinal(set)
	monotonic := set.Spec.PodManagementPolicy != api.ParallelPodManagement
	minReady := time.Duration(set.Spec.MinReadySeconds) * time.Second

	all := make([]slot, replicas)
	slots := make([]*slot, replicas)
	for i := range slots {
		all[i].ordinal = start + i
		slots[i] = &all[i]
	}
	var condemned []*slot
	for _, p := range pods {
		ord, ok := ordinalOf(set.Name, p.Name)
		if !ok {
			continue
		}
		if ord >= start && ord < start+replicas {
			slots[ord-start].pod = p
		} else {
			condemned = append(condemned, &slot{ordinal: ord, pod: p})
		}
	}
	// Highest ordinal first.
	slices.SortFunc(condemned, func(a, b *slot) int { return b.ordinal - a.ordinal })

	// The first unhealthy pod: among the replicas by ordinal (a missing
	// one counts), else the lowest condemned one.
	var firstUnhealthy *slot
	for _, s := range slots {
		if !s.healthy() {
			firstUnhealthy = s
			break
		}
	}
	if firstUnhealthy == nil {
		for i := len(condemned) - 1; i >= 0; i-- {
			if !condemned[i].healthy() {
				firstUnhealthy = condemned[i]
				break
			}
		}
	}

	var plan Plan
	stop := func(format string, args ...any) Plan {
		plan.Wait = fmt.Sprintf(format, args...)
		return plan
	}

	// 1. Replicas.
	for _, s := range slots {
		if s.pod == nil {
			s.creating = createRevision(set, s.ordinal, rev)
			plan.Actions = append(plan.Actions, Action{Op: OpCreate, Ordinal: s.ordinal, Revision: s.creating, Reason: ReasonMissing})
			if monotonic {
				return stop("waiting for %s to be created, Running and Ready", s.name(set.Name))
			}
			continue
		}
		if terminal(s.pod) {
			if s.pod.DeletionTimestamp == nil {
				s.deleting = true
				plan.Actions = append(plan.Actions, Action{Op: OpDelete, Ordinal: s.ordinal, Pod: s.pod, Reason: ReasonFailed})
			}
			if monotonic {
				return stop("waiting for %s (%s) to be deleted and recreated", s.name(set.Name), s.pod.Status.Phase)
			}
			continue
		}
		if !monotonic {
			continue
		}
		if s.terminating() {
			return stop("waiting for %s to terminate", s.name(set.Name))
		}
		switch d := availableIn(s.pod, minReady, now); {
		case d < 0:
			return stop("waiting for %s to be Running and Ready", s.name(set.Name))
		case d > 0:
			plan.RequeueAfter = d
			return stop("waiting for %s to be available (minReadySeconds)", s.name(set.Name))
		}
	}

	// 2. Condemned pods, highest ordinal first.
	for _, s := range condemned {
		if s.terminating() {
			if monotonic {
				return stop("waiting for %s to terminate", s.name(set.Name))
			}
			continue
		}
		if monotonic && s != firstUnhealthy {
			switch d := availableIn(s.pod, minReady, now); {
			case d < 0:
				return stop("waiting for %s to be Running and Ready before scaling it down", s.name(set.Name))
			case d > 0:
				plan.RequeueAfter = d
				return stop("waiting for %s to be available before scaling it down", s.name(set.Name))
			}
		}
		s.deleting = true
		plan.Actions = append(plan.Actions, Action{Op: OpDelete, Ordinal: s.ordinal, Pod: s.pod, Reason: ReasonCondemned})
		if monotonic {
			return stop("waiting for %s to terminate", s.name(set.Name))
		}
	}

	// 3. Rolling update, highest ordinal first, down to the partition.
	if !rollingUpdate(set) {
		return plan
	}
	for i := len(slots) - 1; i >= partitionOf(set); i-- {
		s := slots[i]
		if s.revision() != rev.update && !s.terminating() {
			s.deleting = true
			plan.Actions = append(plan.Actions, Action{Op: OpDelete, Ordinal: s.ordinal, Pod: s.pod, Reason: ReasonUpdate})
			return stop("waiting for %s to be replaced at revision %s", s.name(set.Name), rev.update)
		}
		if !s.healthy() {
			return stop("waiting for %s to be Running and Ready during the update", s.name(set.Name))
		}
	}
	return plan
}
