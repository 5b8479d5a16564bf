package deployment

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func cond(st *api.DeploymentStatus, t string) api.DeploymentCondition {
	if c := getCondition(st, t); c != nil {
		return *c
	}
	return api.DeploymentCondition{}
}

// status runs Reconcile and ComputeStatus on d and its replica sets.
func status(d *api.Deployment, created bool, now time.Time, rss ...*api.ReplicaSet) (api.DeploymentStatus, time.Duration) {
	b := mustBounds(d)
	p := Reconcile(Input{Deployment: d, ReplicaSets: rss}, b)
	return ComputeStatus(StatusInput{Deployment: d, Bounds: b, Plan: p, Created: created, Now: now})
}

func TestComputeStatusCounters(t *testing.T) {
	d := annotated(dep(4, "v2", "1", "1"), "2")
	d.Generation = 3
	o, n := rsOf(d, "v1", 1, 2, 2), rsOf(d, "v2", 2, 3, 1)
	n.Status.ReadyReplicas = 2
	st, _ := status(d, false, t0, o, n)
	want := api.DeploymentStatus{ObservedGeneration: 3, Replicas: 5, UpdatedReplicas: 3, ReadyReplicas: 4,
		AvailableReplicas: 3, UnavailableReplicas: 2}
	if got := cond(&st, api.DeploymentAvailable); got.Status != api.ConditionTrue || got.Reason != ReasonMinimumReplicasAvailable {
		t.Errorf("Available = %+v (3 available >= 4-1)", got)
	}
	st.Conditions = nil
	if a, b := mustJSON(t, st), mustJSON(t, want); a != b {
		t.Errorf("status = %s\nwant %s", a, b)
	}
	o.Status.AvailableReplicas = 0
	st, _ = status(d, false, t0, o, n)
	if got := cond(&st, api.DeploymentAvailable); got.Status != api.ConditionFalse || got.Reason != ReasonMinimumReplicasUnavailable {
		t.Errorf("Available = %+v (1 available < 3)", got)
	}
}

func TestComputeStatusProgressing(t *testing.T) {
	now := t0.Add(time.Hour)
	d := annotated(dep(2, "v2", "1", "0"), "2")
	o, n := rsOf(d, "v1", 1, 2, 2), rsOf(d, "v2", 2, 1, 0)
	n.Name = "web-new"
	n.Status = api.ReplicaSetStatus{} // just created
	d.Status = api.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}

	st, wait := status(d, true, now, o, n)
	c := cond(&st, api.DeploymentProgressing)
	if c.Reason != ReasonNewReplicaSetCreated || c.Message != `Created new replica set "web-new"` || c.Status != api.ConditionTrue {
		t.Errorf("after create: %+v", c)
	}
	if wait <= 0 || wait > 601*time.Second {
		t.Errorf("requeue after %v, want the deadline", wait)
	}

	// Progress (more updated pods than stored) refreshes lastUpdateTime.
	d.Status = st
	n.Status.Replicas, n.Status.AvailableReplicas = 1, 1
	later := now.Add(time.Minute)
	st, _ = status(d, false, later, o, n)
	c = cond(&st, api.DeploymentProgressing)
	if c.Reason != ReasonReplicaSetUpdated || c.Message != `ReplicaSet "web-new" is progressing.` ||
		!c.LastUpdateTime.Equal(api.NewTime(later).Time) || !c.LastTransitionTime.Equal(api.NewTime(now).Time) {
		t.Errorf("on progress: %+v", c)
	}

	// No progress past the deadline: timed out.
	d.Status = st
	st, wait = status(d, false, later.Add(11*time.Minute), o, n)
	c = cond(&st, api.DeploymentProgressing)
	if c.Reason != ReasonProgressDeadlineExceeded || c.Status != api.ConditionFalse || wait != 0 {
		t.Errorf("past the deadline: %+v, wait %v", c, wait)
	}

	// Complete: NewReplicaSetAvailable.
	d.Status = st
	o.Spec.Replicas, o.Status = ptr(int32(0)), api.ReplicaSetStatus{}
	n.Status = api.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}
	st, _ = status(d, false, later.Add(12*time.Minute), o, n)
	c = cond(&st, api.DeploymentProgressing)
	if c.Reason != ReasonNewReplicaSetAvailable || c.Status != api.ConditionTrue || c.Message != `ReplicaSet "web-new" has successfully progressed.` {
		t.Errorf("complete: %+v", c)
	}

	// Without a deadline there is no Progressing condition.
	d.Spec.ProgressDeadlineSeconds = nil
	st, _ = status(d, false, now, o, n)
	if getCondition(&st, api.DeploymentProgressing) != nil {
		t.Errorf("no deadline, yet %+v", st.Conditions)
	}
}

func TestComputeStatusPaused(t *testing.T) {
	d := annotated(dep(2, "v1", "1", "0"), "1")
	d.Spec.Paused = true
	rs := rsOf(d, "v1", 1, 2, 2)
	st, _ := status(d, false, t0, rs)
	if c := cond(&st, api.DeploymentProgressing); c.Status != api.ConditionUnknown || c.Reason != ReasonDeploymentPaused {
		t.Errorf("paused: %+v", c)
	}
	d.Status, d.Spec.Paused = st, false
	st, _ = status(d, false, t0, rs)
	if c := cond(&st, api.DeploymentProgressing); c.Reason != ReasonDeploymentResumed && c.Reason != ReasonNewReplicaSetAvailable {
		t.Errorf("resumed: %+v", c)
	}
}

func TestComputeStatusReplicaFailure(t *testing.T) {
	d := annotated(dep(2, "v1", "1", "0"), "1")
	rs := rsOf(d, "v1", 1, 2, 0)
	rs.Status.Conditions = []api.ReplicaSetCondition{{Type: "ReplicaFailure", Status: api.ConditionTrue,
		Reason: "FailedCreate", Message: "quota"}}
	st, _ := status(d, false, t0, rs)
	if c := cond(&st, api.DeploymentReplicaFailure); c.Reason != "FailedCreate" || c.Message != "quota" {
		t.Errorf("ReplicaFailure = %+v", c)
	}
	rs.Status.Conditions = nil
	d.Status = st
	st, _ = status(d, false, t0, rs)
	if getCondition(&st, api.DeploymentReplicaFailure) != nil {
		t.Error("ReplicaFailure kept after the replica set recovered")
	}
}

// TestComputeStatusIsStable: the same input twice gives the same status,
// so a sync without change writes nothing.
func TestComputeStatusIsStable(t *testing.T) {
	d := annotated(dep(2, "v1", "1", "0"), "1")
	rs := rsOf(d, "v1", 1, 2, 2)
	st, _ := status(d, false, t0, rs)
	d.Status = st
	st2, _ := status(d, false, t0.Add(time.Hour), rs)
	if a, b := mustJSON(t, st), mustJSON(t, st2); a != b {
		t.Errorf("status changed without a change:\n%s\n%s", a, b)
	}
}

func TestComputeHash(t *testing.T) {
	a, b := tmpl("v1"), tmpl("v1")
	if TemplateHash(&a) != TemplateHash(&b) {
		t.Error("equal templates hash differently")
	}
	c := tmpl("v2")
	if TemplateHash(&a) == TemplateHash(&c) {
		t.Error("different templates hash alike")
	}
	for _, r := range TemplateHash(&a) {
		if !containsRune(safeAlphabet, r) {
			t.Errorf("hash %q has %q, outside the safe alphabet", TemplateHash(&a), r)
		}
	}
	one, two := int32(1), int32(2)
	if ComputeHash(&a, &one) == ComputeHash(&a, &two) || ComputeHash(&a, nil) != TemplateHash(&a) {
		t.Error("collisionCount not part of the hash")
	}
}

func containsRune(s string, r rune) bool {
	for _, c := range s {
		if c == r {
			return true
		}
	}
	return false
}
