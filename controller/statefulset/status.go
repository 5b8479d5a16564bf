package statefulset

import (
	"encoding/json"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// computeStatus is the set's status from its pods (those with an ordinal
// of the set), as Kubernetes counts it:
//   - replicas: every pod; readyReplicas: Running and Ready;
//     availableReplicas: ready for minReadySeconds;
//   - currentReplicas / updatedReplicas: pods not terminating at the
//     current / update revision;
//   - a rolling update is complete when every pod is updated and ready:
//     the current revision becomes the update revision.
//
// requeue > 0 is when a ready pod becomes available.
func computeStatus(set *api.StatefulSet, pods []*api.Pod, rev revisions, now time.Time) (st api.StatefulSetStatus, requeue time.Duration) {
	st = api.StatefulSetStatus{
		ObservedGeneration: set.Generation,
		CurrentRevision:    rev.current,
		UpdateRevision:     rev.update,
		CollisionCount:     set.Status.CollisionCount,
		Conditions:         set.Status.Conditions,
	}
	minReady := time.Duration(set.Spec.MinReadySeconds) * time.Second
	for _, p := range pods {
		if _, ok := ordinalOf(set.Name, p.Name); !ok {
			continue
		}
		st.Replicas++
		switch d := availableIn(p, minReady, now); {
		case d == 0:
			st.ReadyReplicas++
			st.AvailableReplicas++
		case d > 0:
			st.ReadyReplicas++
			if requeue == 0 || d < requeue {
				requeue = d
			}
		}
		if p.DeletionTimestamp == nil {
			switch p.Labels[RevisionLabel] {
			case rev.current:
				st.CurrentReplicas++
				if rev.current == rev.update {
					st.UpdatedReplicas++
				}
			case rev.update:
				st.UpdatedReplicas++
			}
		}
	}
	if st.UpdatedReplicas == st.Replicas && st.ReadyReplicas == st.Replicas {
		st.CurrentRevision = st.UpdateRevision
		st.CurrentReplicas = st.UpdatedReplicas
	}
	return st, requeue
}

// statusEqual compares two statuses as the API would store them.
func statusEqual(a, b *api.StatefulSetStatus) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
