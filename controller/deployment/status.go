package deployment

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Condition reasons, as Kubernetes' deployment controller writes them.
const (
	ReasonMinimumReplicasAvailable   = "MinimumReplicasAvailable"
	ReasonMinimumReplicasUnavailable = "MinimumReplicasUnavailable"
	ReasonNewReplicaSetCreated       = "NewReplicaSetCreated"
	ReasonReplicaSetUpdated          = "ReplicaSetUpdated"
	ReasonNewReplicaSetAvailable     = "NewReplicaSetAvailable"
	ReasonProgressDeadlineExceeded   = "ProgressDeadlineExceeded"
	ReasonDeploymentPaused           = "DeploymentPaused"
	ReasonDeploymentResumed          = "DeploymentResumed"
)

// statusInput is what status computation looks at.
type statusInput struct {
	d      *api.Deployment // the Deployment as stored (its status is the old one)
	hash   string          // hash of spec.template
	bounds bounds
	pods   []podState // active pods, terminating ones marked
	now    time.Time
}

// computeStatus is the Deployment's next status and, when a later check is
// due (a pod becoming available after minReadySeconds, the progress
// deadline), how long until then (0: none). Counters count non-terminating
// active pods: replicas all of them, updatedReplicas those of the current
// template, readyReplicas the Ready ones, availableReplicas those Ready
// for minReadySeconds; unavailableReplicas is spec.replicas minus
// available (not below 0). Conditions follow Kubernetes' calculateStatus
// and syncRolloutStatus; "ReplicaSet" in messages names the virtual
// replica set <deployment>-<hash>.
func computeStatus(in statusInput) (api.DeploymentStatus, time.Duration) {
	d := in.d
	replicas := replicasOf(d)
	minReady := time.Duration(d.Spec.MinReadySeconds) * time.Second
	st := api.DeploymentStatus{
		ObservedGeneration: d.Generation,
		Conditions:         append([]api.DeploymentCondition(nil), d.Status.Conditions...),
		CollisionCount:     d.Status.CollisionCount,
	}
	var next time.Time
	for i := range in.pods {
		p := &in.pods[i]
		if p.terminating {
			continue
		}
		st.Replicas++
		if p.hash == in.hash {
			st.UpdatedReplicas++
		}
		if p.ready {
			st.ReadyReplicas++
		}
		if p.available {
			st.AvailableReplicas++
		}
		if at := availableAt(p, minReady); !at.IsZero() && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	st.UnavailableReplicas = max(replicas-st.AvailableReplicas, 0)

	now := api.NewTime(in.now)
	if st.AvailableReplicas >= replicas-in.bounds.unavailable {
		setCondition(&st, api.DeploymentCondition{Type: api.DeploymentAvailable, Status: api.ConditionTrue,
			Reason: ReasonMinimumReplicasAvailable, Message: "Deployment has minimum availability."}, now)
	} else {
		setCondition(&st, api.DeploymentCondition{Type: api.DeploymentAvailable, Status: api.ConditionFalse,
			Reason: ReasonMinimumReplicasUnavailable, Message: "Deployment does not have minimum availability."}, now)
	}

	var wait time.Duration
	if !next.IsZero() {
		// Available means strictly after readySince+minReady: check just after.
		wait = next.Sub(in.now) + 10*time.Millisecond
	}
	if dl := progressCheck(d, &st, in.hash, now); dl > 0 && (wait == 0 || dl < wait) {
		wait = dl
	}
	return st, max(wait, 0)
}

// hasProgressDeadline is false when progressDeadlineSeconds is unset or
// MaxInt32 (Kubernetes' "no deadline").
func hasProgressDeadline(d *api.Deployment) bool {
	p := d.Spec.ProgressDeadlineSeconds
	return p != nil && *p != math.MaxInt32
}

// progressCheck updates the Progressing condition and returns how long
// until the deadline should be checked again (0: no check due).
func progressCheck(d *api.Deployment, st *api.DeploymentStatus, hash string, now api.Time) time.Duration {
	cur := getCondition(st, api.DeploymentProgressing)
	if d.Spec.Paused {
		if cur == nil || cur.Reason != ReasonDeploymentPaused {
			setProgressing(st, api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionUnknown,
				Reason: ReasonDeploymentPaused, Message: "Deployment is paused"}, now)
		}
		return 0
	}
	if cur != nil && cur.Reason == ReasonDeploymentPaused {
		setProgressing(st, api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionUnknown,
			Reason: ReasonDeploymentResumed, Message: "Deployment is resumed"}, now)
		cur = getCondition(st, api.DeploymentProgressing)
	}
	if !hasProgressDeadline(d) {
		removeCondition(st, api.DeploymentProgressing)
		return 0
	}
	rs := fmt.Sprintf("%q", replicaSetName(d.Name, hash))
	replicas := replicasOf(d)
	complete := st.UpdatedReplicas == replicas && st.Replicas == replicas &&
		st.AvailableReplicas == replicas && st.ObservedGeneration >= d.Generation
	switch {
	case complete:
		setCondition(st, api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionTrue,
			Reason: ReasonNewReplicaSetAvailable, Message: "ReplicaSet " + rs + " has successfully progressed."}, now)
		return 0
	case cur == nil || cur.Reason != ReasonDeploymentResumed && !strings.Contains(cur.Message, rs):
		// A rollout of this template starts: the deadline counts from now.
		setProgressing(st, api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionTrue,
			Reason: ReasonNewReplicaSetCreated, Message: "Created new replica set " + rs}, now)
	case progressed(&d.Status, st):
		setProgressing(st, api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionTrue,
			Reason: ReasonReplicaSetUpdated, Message: "ReplicaSet " + rs + " is progressing."}, now)
	case timedOut(d, cur, now):
		setCondition(st, api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionFalse,
			Reason: ReasonProgressDeadlineExceeded, Message: "ReplicaSet " + rs + " has timed out progressing."}, now)
		return 0
	}
	cur = getCondition(st, api.DeploymentProgressing)
	if cur.Reason == ReasonNewReplicaSetAvailable {
		return 0 // scaled after completion: Kubernetes never times this out
	}
	deadline := cur.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second)
	// Timed out means strictly after the deadline: check a second later
	// (condition times have second precision).
	return deadline.Sub(now.Time) + time.Second
}

// progressed is Kubernetes' DeploymentProgressing: more updated, ready or
// available pods, or fewer old ones, than the stored status says.
func progressed(old, cur *api.DeploymentStatus) bool {
	oldOld := old.Replicas - old.UpdatedReplicas
	curOld := cur.Replicas - cur.UpdatedReplicas
	return cur.UpdatedReplicas > old.UpdatedReplicas || curOld < oldOld ||
		cur.ReadyReplicas > old.ReadyReplicas || cur.AvailableReplicas > old.AvailableReplicas
}

// timedOut is Kubernetes' DeploymentTimedOut.
func timedOut(d *api.Deployment, cur *api.DeploymentCondition, now api.Time) bool {
	if cur == nil {
		return false
	}
	switch cur.Reason {
	case ReasonProgressDeadlineExceeded:
		return true
	case ReasonNewReplicaSetAvailable:
		return false
	}
	deadline := cur.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second)
	return deadline.Before(now.Time)
}

func getCondition(st *api.DeploymentStatus, t string) *api.DeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

func removeCondition(st *api.DeploymentStatus, t string) {
	out := st.Conditions[:0]
	for _, c := range st.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	st.Conditions = out
	if len(out) == 0 {
		st.Conditions = nil
	}
}

// setCondition is Kubernetes' SetDeploymentCondition: nothing changes when
// the condition already has this status, reason and message; a condition
// whose status stays keeps its lastTransitionTime. The condition keeps its
// place in the list.
func setCondition(st *api.DeploymentStatus, c api.DeploymentCondition, now api.Time) {
	cur := getCondition(st, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason && cur.Message == c.Message {
		return
	}
	c.LastUpdateTime, c.LastTransitionTime = now, now
	if cur != nil {
		if cur.Status == c.Status {
			c.LastTransitionTime = cur.LastTransitionTime
		}
		*cur = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}

// setProgressing always refreshes lastUpdateTime (progress was seen), and
// keeps lastTransitionTime while the status stays, as Kubernetes does for
// the Progressing condition.
func setProgressing(st *api.DeploymentStatus, c api.DeploymentCondition, now api.Time) {
	c.LastUpdateTime, c.LastTransitionTime = now, now
	if cur := getCondition(st, c.Type); cur != nil {
		if cur.Status == c.Status {
			c.LastTransitionTime = cur.LastTransitionTime
		}
		*cur = c
		return
	}
	st.Conditions = append(st.Conditions, c)
}
