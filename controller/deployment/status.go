package deployment

import (
	"fmt"
	"math"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Condition reasons, as upstream's deployment util names them.
const (
	ReasonMinimumReplicasAvailable   = "MinimumReplicasAvailable"
	ReasonMinimumReplicasUnavailable = "MinimumReplicasUnavailable"
	ReasonNewReplicaSetCreated       = "NewReplicaSetCreated"
	ReasonFoundNewReplicaSet         = "FoundNewReplicaSet"
	ReasonReplicaSetUpdated          = "ReplicaSetUpdated"
	ReasonNewReplicaSetAvailable     = "NewReplicaSetAvailable"
	ReasonProgressDeadlineExceeded   = "ProgressDeadlineExceeded"
	ReasonDeploymentPaused           = "DeploymentPaused"
	ReasonDeploymentResumed          = "DeploymentResumed"
)

// StatusInput is what status computation looks at.
type StatusInput struct {
	// Deployment as stored (its status is the old one).
	Deployment *api.Deployment
	Bounds     bounds
	// Plan is the round's plan (its New and Old ReplicaSets, Rollout,
	// FoundNew); Created says the plan's Create was carried out.
	Plan    Plan
	Created bool
	Now     time.Time
}

// ComputeStatus is the Deployment's next status and, when the progress
// deadline needs a later look, how long until then (0: none). It follows
// upstream: checkPausedConditions first; the NewReplicaSetCreated or
// FoundNewReplicaSet condition of getNewReplicaSet; calculateStatus
// (counters summed over the ReplicaSets, the Available condition); and
// for a rollout syncRolloutStatus (Progressing, ReplicaFailure) with
// requeueStuckDeployment.
func ComputeStatus(in StatusInput) (api.DeploymentStatus, time.Duration) {
	d, p := in.Deployment, in.Plan
	now := api.NewTime(in.Now)
	base := d.Status
	base.Conditions = append([]api.DeploymentCondition(nil), d.Status.Conditions...)
	pausedConditions(d, &base, now)
	if hasProgressDeadline(d) && p.New != nil {
		switch {
		case in.Created:
			setCondition(&base, api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionTrue,
				Reason: ReasonNewReplicaSetCreated, Message: fmt.Sprintf("Created new replica set %q", p.New.Name)}, now)
		case p.FoundNew && getCondition(&base, api.DeploymentProgressing) == nil:
			setCondition(&base, api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionTrue,
				Reason: ReasonFoundNewReplicaSet, Message: fmt.Sprintf("Found new replica set %q", p.New.Name)}, now)
		}
	}
	st := calculateStatus(d, in.Bounds, p, base, now)
	if !p.Rollout {
		return st, 0
	}
	if !hasProgressDeadline(d) {
		removeCondition(&st, api.DeploymentProgressing)
	}
	cur := getCondition(&base, api.DeploymentProgressing)
	complete := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == ReasonNewReplicaSetAvailable
	if hasProgressDeadline(d) && !complete {
		subject := fmt.Sprintf("Deployment %q", d.Name)
		if p.New != nil {
			subject = fmt.Sprintf("ReplicaSet %q", p.New.Name)
		}
		switch {
		case deploymentComplete(d, &st):
			setCondition(&st, api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionTrue,
				Reason: ReasonNewReplicaSetAvailable, Message: subject + " has successfully progressed."}, now)
		case progressed(&base, &st):
			c := api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionTrue,
				Reason: ReasonReplicaSetUpdated, Message: subject + " is progressing.", LastUpdateTime: now, LastTransitionTime: now}
			if cur != nil {
				if cur.Status == api.ConditionTrue {
					c.LastTransitionTime = cur.LastTransitionTime
				}
				removeCondition(&st, api.DeploymentProgressing)
			}
			st.Conditions = append(st.Conditions, c)
		case timedOut(d, &st, now):
			setCondition(&st, api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionFalse,
				Reason: ReasonProgressDeadlineExceeded, Message: subject + " has timed out progressing."}, now)
		}
	}
	if f := replicaFailure(p); f != nil {
		setCondition(&st, *f, now)
	} else {
		removeCondition(&st, api.DeploymentReplicaFailure)
	}
	return st, stuckRequeue(d, &st, in.Now)
}

// calculateStatus is upstream's: counters over every ReplicaSet
// (updatedReplicas the new one's status.replicas; unavailableReplicas the
// sum of spec.replicas minus available, not below 0) and the Available
// condition against replicas - maxUnavailable.
func calculateStatus(d *api.Deployment, b bounds, p Plan, base api.DeploymentStatus, now api.Time) api.DeploymentStatus {
	all := append([]*api.ReplicaSet(nil), p.Old...)
	if p.New != nil {
		all = append(all, p.New)
	}
	st := api.DeploymentStatus{
		ObservedGeneration: d.Generation,
		CollisionCount:     d.Status.CollisionCount,
		Conditions:         base.Conditions,
	}
	var total int32
	for _, rs := range all {
		total += rsReplicas(rs)
		st.Replicas += rs.Status.Replicas
		st.ReadyReplicas += rs.Status.ReadyReplicas
		st.AvailableReplicas += rs.Status.AvailableReplicas
	}
	if p.New != nil {
		st.UpdatedReplicas = p.New.Status.Replicas
	}
	st.UnavailableReplicas = max(total-st.AvailableReplicas, 0)
	if st.AvailableReplicas >= replicasOf(d)-b.unavailable {
		setCondition(&st, api.DeploymentCondition{Type: api.DeploymentAvailable, Status: api.ConditionTrue,
			Reason: ReasonMinimumReplicasAvailable, Message: "Deployment has minimum availability."}, now)
	} else {
		setCondition(&st, api.DeploymentCondition{Type: api.DeploymentAvailable, Status: api.ConditionFalse,
			Reason: ReasonMinimumReplicasUnavailable, Message: "Deployment does not have minimum availability."}, now)
	}
	if len(st.Conditions) == 0 {
		st.Conditions = nil
	}
	return st
}

// pausedConditions is upstream's checkPausedConditions: with a progress
// deadline and not timed out, pausing sets Progressing
// Unknown/DeploymentPaused and resuming Unknown/DeploymentResumed.
func pausedConditions(d *api.Deployment, st *api.DeploymentStatus, now api.Time) {
	if !hasProgressDeadline(d) {
		return
	}
	cur := getCondition(st, api.DeploymentProgressing)
	if cur != nil && cur.Reason == ReasonProgressDeadlineExceeded {
		return
	}
	pausedExists := cur != nil && cur.Reason == ReasonDeploymentPaused
	switch {
	case d.Spec.Paused && !pausedExists:
		setCondition(st, api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionUnknown,
			Reason: ReasonDeploymentPaused, Message: "Deployment is paused"}, now)
	case !d.Spec.Paused && pausedExists:
		setCondition(st, api.DeploymentCondition{Type: api.DeploymentProgressing, Status: api.ConditionUnknown,
			Reason: ReasonDeploymentResumed, Message: "Deployment is resumed"}, now)
	}
}

// replicaFailure is upstream's getReplicaFailures: the new ReplicaSet's
// ReplicaFailure condition, else the first old one's.
func replicaFailure(p Plan) *api.DeploymentCondition {
	all := []*api.ReplicaSet{}
	if p.New != nil {
		all = append(all, p.New)
	}
	all = append(all, p.Old...)
	for _, rs := range all {
		for _, c := range rs.Status.Conditions {
			if c.Type == "ReplicaFailure" {
				return &api.DeploymentCondition{Type: api.DeploymentReplicaFailure, Status: c.Status, Reason: c.Reason,
					Message: c.Message, LastUpdateTime: c.LastTransitionTime, LastTransitionTime: c.LastTransitionTime}
			}
		}
	}
	return nil
}

// hasProgressDeadline is false when progressDeadlineSeconds is unset or
// MaxInt32 (upstream's "no deadline").
func hasProgressDeadline(d *api.Deployment) bool {
	p := d.Spec.ProgressDeadlineSeconds
	return p != nil && *p != math.MaxInt32
}

// progressed is upstream's DeploymentProgressing: more updated, ready or
// available pods, or fewer old ones, than the stored status says.
func progressed(old, cur *api.DeploymentStatus) bool {
	oldOld := old.Replicas - old.UpdatedReplicas
	curOld := cur.Replicas - cur.UpdatedReplicas
	return cur.UpdatedReplicas > old.UpdatedReplicas || curOld < oldOld ||
		cur.ReadyReplicas > old.ReadyReplicas || cur.AvailableReplicas > old.AvailableReplicas
}

// timedOut is upstream's DeploymentTimedOut: the Progressing condition
// was last updated more than progressDeadlineSeconds ago.
func timedOut(d *api.Deployment, st *api.DeploymentStatus, now api.Time) bool {
	cur := getCondition(st, api.DeploymentProgressing)
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

// stuckRequeue is upstream's requeueStuckDeployment: when a rollout
// might time out, how long until the deadline check (a second after it,
// condition times having second precision); 0 when none is due.
func stuckRequeue(d *api.Deployment, st *api.DeploymentStatus, now time.Time) time.Duration {
	cur := getCondition(st, api.DeploymentProgressing)
	if !hasProgressDeadline(d) || cur == nil || deploymentComplete(d, st) || cur.Reason == ReasonProgressDeadlineExceeded {
		return 0
	}
	after := cur.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(now)
	return max(after, 0) + time.Second
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
	var out []api.DeploymentCondition
	for _, c := range st.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	st.Conditions = out
}

// setCondition is upstream's SetDeploymentCondition: nothing changes when
// the condition has this status and reason already; a condition whose
// status stays keeps its lastTransitionTime; the new condition goes last.
func setCondition(st *api.DeploymentStatus, c api.DeploymentCondition, now api.Time) {
	cur := getCondition(st, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	c.LastUpdateTime, c.LastTransitionTime = now, now
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	removeCondition(st, c.Type)
	st.Conditions = append(st.Conditions, c)
}
