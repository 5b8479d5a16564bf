package deployment

import (
	"slices"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// podState is what planning and status need to know about one pod.
type podState struct {
	name        string
	uid         string
	hash        string // pod-template-hash label
	revision    int64  // revision of hash in the history; 0 when unknown
	created     time.Time
	scheduled   bool // spec.nodeName is set
	phase       string
	ready       bool
	readySince  time.Time // the Ready condition's lastTransitionTime
	available   bool      // ready for at least minReadySeconds
	restarts    int32
	terminating bool // deletionTimestamp is set
}

// isActive reports whether a pod counts at all: Succeeded and Failed pods
// do not (Kubernetes' FilterActivePods also drops terminating pods; here
// they are kept, marked, so that Recreate can wait for them).
func isActive(p *api.Pod) bool {
	return p.Status.Phase != api.PodSucceeded && p.Status.Phase != api.PodFailed
}

// stateOf digests a pod at time now.
func stateOf(p *api.Pod, revisions map[string]int64, minReady time.Duration, now time.Time) podState {
	s := podState{
		name:        p.Name,
		uid:         p.UID,
		hash:        p.Labels[LabelPodTemplateHash],
		created:     p.CreationTimestamp.Time,
		scheduled:   p.Spec.NodeName != "",
		phase:       p.Status.Phase,
		terminating: p.DeletionTimestamp != nil,
	}
	s.revision = revisions[s.hash]
	if c := api.GetPodCondition(&p.Status, api.PodReady); c != nil && c.Status == api.ConditionTrue {
		s.ready = true
		s.readySince = c.LastTransitionTime.Time
	}
	s.available = !s.terminating && isAvailable(s.ready, s.readySince, minReady, now)
	for _, cs := range p.Status.ContainerStatuses {
		s.restarts = max(s.restarts, cs.RestartCount)
	}
	return s
}

// isAvailable is Kubernetes' IsPodAvailable: ready, and with minReady > 0
// ready since strictly more than minReady ago.
func isAvailable(ready bool, since time.Time, minReady time.Duration, now time.Time) bool {
	if !ready {
		return false
	}
	return minReady <= 0 || (!since.IsZero() && since.Add(minReady).Before(now))
}

// availableAt is when a ready but not yet available pod becomes available
// (zero when it never will by waiting: not ready, or no ready time).
func availableAt(s *podState, minReady time.Duration) time.Time {
	if !s.ready || s.available || s.readySince.IsZero() || minReady <= 0 {
		return time.Time{}
	}
	return s.readySince.Add(minReady)
}

// phaseRank orders phases for deletion: Pending, Unknown, Running.
func phaseRank(phase string) int {
	switch phase {
	case api.PodUnknown:
		return 1
	case api.PodRunning:
		return 2
	}
	return 0
}

// cmpDelete orders pods for deletion, most deletable first: Kubernetes'
// ActivePods ordering, without pod-deletion-cost and co-location ranking.
//  1. unscheduled before scheduled;
//  2. Pending before Unknown before Running;
//  3. not ready before ready;
//  4. ready for less time before ready for longer (no ready time = newest);
//  5. more container restarts first;
//  6. newer before older;
//  7. by name, for a deterministic order.
func cmpDelete(a, b *podState) int {
	switch {
	case a.scheduled != b.scheduled:
		return boolFirst(!a.scheduled)
	case phaseRank(a.phase) != phaseRank(b.phase):
		return boolFirst(phaseRank(a.phase) < phaseRank(b.phase))
	case a.ready != b.ready:
		return boolFirst(!a.ready)
	case a.ready && !a.readySince.Equal(b.readySince):
		return boolFirst(afterOrZero(a.readySince, b.readySince))
	case a.restarts != b.restarts:
		return boolFirst(a.restarts > b.restarts)
	case !a.created.Equal(b.created):
		return boolFirst(afterOrZero(a.created, b.created))
	case a.name != b.name:
		return boolFirst(a.name > b.name)
	}
	return 0
}

// boolFirst is -1 when the first goes first, else 1.
func boolFirst(first bool) int {
	if first {
		return -1
	}
	return 1
}

// afterOrZero: a zero time counts as the latest.
func afterOrZero(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero()
	}
	return a.After(b)
}

// sortForDeletion orders pods by cmpDelete.
func sortForDeletion(pods []*podState) { slices.SortFunc(pods, cmpDelete) }

// sortOldForDeletion orders old pods oldest revision first (Kubernetes
// scales the oldest ReplicaSet down first), then by cmpDelete.
func sortOldForDeletion(pods []*podState) {
	slices.SortFunc(pods, func(a, b *podState) int {
		if a.revision != b.revision {
			return cmpInt64(a.revision, b.revision)
		}
		return cmpDelete(a, b)
	})
}
