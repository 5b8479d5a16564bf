package deployment

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

func testDeployment(replicas int32) *api.Deployment {
	deadline := int32(600)
	return &api.Deployment{
		ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default", Generation: 3},
		Spec: api.DeploymentSpec{Replicas: &replicas, ProgressDeadlineSeconds: &deadline,
			Strategy: api.DeploymentStrategy{Type: api.RollingUpdateDeploymentStrategyType}},
	}
}

func cond(st *api.DeploymentStatus, t string) api.DeploymentCondition {
	if c := getCondition(st, t); c != nil {
		return *c
	}
	return api.DeploymentCondition{}
}

func TestComputeStatusCounters(t *testing.T) {
	d := testDeployment(4)
	now := t0.Add(time.Minute)
	pods := []podState{
		pod("a"), pod("b", notAvailable), pod("c", notReady),
		pod("o", old(1)), pod("gone", terminating), pod("gone-old", old(1), terminating),
	}
	st, _ := computeStatus(statusInput{d: d, hash: "new", bounds: bounds{unavailable: 1}, pods: pods, now: now})
	want := api.DeploymentStatus{ObservedGeneration: 3, Replicas: 4, UpdatedReplicas: 3, ReadyReplicas: 3,
		AvailableReplicas: 2, UnavailableReplicas: 2}
	st.Conditions = nil
	if a, b := mustJSON(t, st), mustJSON(t, want); a != b {
		t.Errorf("status = %s\nwant %s", a, b)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestComputeStatusConditions(t *testing.T) {
	now := t0.Add(time.Hour)
	earlier := api.NewTime(t0)
	cases := []struct {
		name           string
		mutate         func(d *api.Deployment)
		pods           []podState
		unavail        int32
		wantAvl        api.ConditionStatus
		wantProg       string // reason, "" = no Progressing condition
		wantProgStatus api.ConditionStatus
		wantLUT        time.Time // Progressing lastUpdateTime, zero = don't check
	}{
		{name: "new deployment starts a rollout", pods: nil, unavail: 1,
			wantAvl: api.ConditionFalse, wantProg: ReasonNewReplicaSetCreated, wantProgStatus: api.ConditionTrue, wantLUT: now},
		{name: "complete", pods: []podState{pod("a"), pod("b")}, unavail: 0,
			mutate: func(d *api.Deployment) {
				d.Status.Conditions = []api.DeploymentCondition{{Type: api.DeploymentProgressing, Status: api.ConditionTrue,
					Reason: ReasonReplicaSetUpdated, Message: `ReplicaSet "web-new" is progressing.`, LastUpdateTime: earlier, LastTransitionTime: earlier}}
			},
			wantAvl: api.ConditionTrue, wantProg: ReasonNewReplicaSetAvailable, wantProgStatus: api.ConditionTrue, wantLUT: now},
		{name: "progress refreshes lastUpdateTime",
			pods: []podState{pod("a"), pod("b", notReady), pod("o", old(1))}, unavail: 1,
			mutate: func(d *api.Deployment) {
				d.Status = api.DeploymentStatus{Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2,
					Conditions: []api.DeploymentCondition{{Type: api.DeploymentProgressing, Status: api.ConditionTrue,
						Reason: ReasonNewReplicaSetCreated, Message: `Created new replica set "web-new"`, LastUpdateTime: earlier, LastTransitionTime: earlier}}}
			},
			wantAvl: api.ConditionTrue, wantProg: ReasonReplicaSetUpdated, wantProgStatus: api.ConditionTrue, wantLUT: now},
		{name: "no progress within the deadline keeps the condition",
			pods: []podState{pod("b", notReady), pod("o", old(1))}, unavail: 1,
			mutate: func(d *api.Deployment) {
				recent := api.NewTime(now.Add(-time.Minute))
				d.Status = api.DeploymentStatus{Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
					Conditions: []api.DeploymentCondition{{Type: api.DeploymentProgressing, Status: api.ConditionTrue,
						Reason: ReasonNewReplicaSetCreated, Message: `Created new replica set "web-new"`, LastUpdateTime: recent, LastTransitionTime: recent}}}
			},
			wantAvl: api.ConditionTrue, wantProg: ReasonNewReplicaSetCreated, wantProgStatus: api.ConditionTrue, wantLUT: now.Add(-time.Minute)},
		{name: "no progress past the deadline times out",
			pods: []podState{pod("b", notReady), pod("o", old(1))}, unavail: 1,
			mutate: func(d *api.Deployment) {
				d.Status = api.DeploymentStatus{Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
					Conditions: []api.DeploymentCondition{{Type: api.DeploymentProgressing, Status: api.ConditionTrue,
						Reason: ReasonNewReplicaSetCreated, Message: `Created new replica set "web-new"`, LastUpdateTime: earlier, LastTransitionTime: earlier}}}
			},
			wantAvl: api.ConditionTrue, wantProg: ReasonProgressDeadlineExceeded, wantProgStatus: api.ConditionFalse, wantLUT: now},
		{name: "a new template restarts the clock after a timeout",
			pods: []podState{pod("o", old(1))}, unavail: 1,
			mutate: func(d *api.Deployment) {
				d.Status.Conditions = []api.DeploymentCondition{{Type: api.DeploymentProgressing, Status: api.ConditionFalse,
					Reason: ReasonProgressDeadlineExceeded, Message: `ReplicaSet "web-old1" has timed out progressing.`, LastUpdateTime: earlier, LastTransitionTime: earlier}}
			},
			wantAvl: api.ConditionTrue, wantProg: ReasonNewReplicaSetCreated, wantProgStatus: api.ConditionTrue, wantLUT: now},
		{name: "paused", pods: []podState{pod("o", old(1))}, unavail: 0,
			mutate:  func(d *api.Deployment) { d.Spec.Paused = true },
			wantAvl: api.ConditionFalse, wantProg: ReasonDeploymentPaused, wantProgStatus: api.ConditionUnknown},
		{name: "resumed", pods: []podState{pod("a", notReady)}, unavail: 0,
			mutate: func(d *api.Deployment) {
				d.Status = api.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1}
				d.Status.Conditions = []api.DeploymentCondition{{Type: api.DeploymentProgressing, Status: api.ConditionUnknown,
					Reason: ReasonDeploymentPaused, Message: "Deployment is paused", LastUpdateTime: earlier, LastTransitionTime: earlier}}
			},
			wantAvl: api.ConditionFalse, wantProg: ReasonDeploymentResumed, wantProgStatus: api.ConditionUnknown, wantLUT: now},
		{name: "no deadline, no Progressing condition", pods: []podState{pod("a"), pod("b")}, unavail: 0,
			mutate: func(d *api.Deployment) {
				v := int32(math.MaxInt32)
				d.Spec.ProgressDeadlineSeconds = &v
				d.Status.Conditions = []api.DeploymentCondition{{Type: api.DeploymentProgressing, Status: api.ConditionTrue, Reason: ReasonReplicaSetUpdated}}
			},
			wantAvl: api.ConditionTrue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := testDeployment(2)
			if tc.mutate != nil {
				tc.mutate(d)
			}
			st, _ := computeStatus(statusInput{d: d, hash: "new", bounds: bounds{unavailable: tc.unavail}, pods: tc.pods, now: now})
			if got := cond(&st, api.DeploymentAvailable).Status; got != tc.wantAvl {
				t.Errorf("Available = %q, want %q", got, tc.wantAvl)
			}
			p := getCondition(&st, api.DeploymentProgressing)
			if tc.wantProg == "" {
				if p != nil {
					t.Fatalf("Progressing = %+v, want none", *p)
				}
				return
			}
			if p == nil {
				t.Fatalf("no Progressing condition, want %s", tc.wantProg)
			}
			if p.Reason != tc.wantProg || p.Status != tc.wantProgStatus {
				t.Errorf("Progressing = %s/%s (%s), want %s/%s", p.Status, p.Reason, p.Message, tc.wantProgStatus, tc.wantProg)
			}
			if !tc.wantLUT.IsZero() && !p.LastUpdateTime.Equal(tc.wantLUT) {
				t.Errorf("lastUpdateTime = %v, want %v", p.LastUpdateTime, tc.wantLUT)
			}
		})
	}
}

func TestComputeStatusKeepsTransitionTime(t *testing.T) {
	d := testDeployment(2)
	earlier := api.NewTime(t0)
	d.Status = api.DeploymentStatus{Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []api.DeploymentCondition{
			{Type: api.DeploymentAvailable, Status: api.ConditionTrue, Reason: ReasonMinimumReplicasAvailable,
				Message: "Deployment has minimum availability.", LastUpdateTime: earlier, LastTransitionTime: earlier},
			{Type: api.DeploymentProgressing, Status: api.ConditionTrue, Reason: ReasonNewReplicaSetCreated,
				Message: `Created new replica set "web-new"`, LastUpdateTime: earlier, LastTransitionTime: earlier}}}
	now := t0.Add(time.Minute)
	st, _ := computeStatus(statusInput{d: d, hash: "new", bounds: bounds{unavailable: 1},
		pods: []podState{pod("a"), pod("b"), pod("o", old(1), notReady)}, now: now})
	a, p := cond(&st, api.DeploymentAvailable), cond(&st, api.DeploymentProgressing)
	if !a.LastUpdateTime.Equal(t0) || !a.LastTransitionTime.Equal(t0) {
		t.Errorf("unchanged Available was touched: %+v", a)
	}
	if p.Reason != ReasonReplicaSetUpdated || !p.LastUpdateTime.Equal(now) || !p.LastTransitionTime.Equal(t0) {
		t.Errorf("Progressing = %+v, want ReplicaSetUpdated updated now, transition kept", p)
	}
	if st.Conditions[0].Type != api.DeploymentAvailable {
		t.Errorf("conditions reordered: %+v", st.Conditions)
	}
}

// A second computation over its own output changes nothing, so the
// controller writes status only when something happened.
func TestComputeStatusIsStable(t *testing.T) {
	pods := []podState{pod("a"), pod("b", notReady), pod("o", old(1))}
	d := testDeployment(2)
	now := t0.Add(time.Minute)
	st, _ := computeStatus(statusInput{d: d, hash: "new", bounds: bounds{unavailable: 1}, pods: pods, now: now})
	d.Status = st
	again, _ := computeStatus(statusInput{d: d, hash: "new", bounds: bounds{unavailable: 1}, pods: pods, now: now.Add(time.Minute)})
	if a, b := mustJSON(t, st), mustJSON(t, again); a != b {
		t.Errorf("status changed without a change:\n%s\n%s", a, b)
	}
}

func TestComputeStatusRequeue(t *testing.T) {
	d := testDeployment(2)
	d.Spec.MinReadySeconds = 10
	now := t0.Add(4 * time.Second)
	pods := []podState{pod("a", notAvailable, readyAt(0)), pod("b", notAvailable, readyAt(2))}
	_, wait := computeStatus(statusInput{d: d, hash: "new", bounds: bounds{unavailable: 1}, pods: pods, now: now})
	if wait < 6*time.Second || wait > 6*time.Second+time.Second {
		t.Errorf("requeue after %v, want just over 6s (a becomes available at t0+10s)", wait)
	}
	// A complete Deployment without minReadySeconds needs no re-check.
	d = testDeployment(1)
	st, _ := computeStatus(statusInput{d: d, hash: "new", pods: []podState{pod("a")}, now: now})
	d.Status = st
	if _, wait := computeStatus(statusInput{d: d, hash: "new", pods: []podState{pod("a")}, now: now}); wait != 0 {
		t.Errorf("complete deployment requeues after %v", wait)
	}
	// A rollout in progress is re-checked at its deadline.
	d = testDeployment(1)
	if _, wait := computeStatus(statusInput{d: d, hash: "new", pods: []podState{pod("a", notReady)}, now: now}); wait != 601*time.Second {
		t.Errorf("deadline check after %v, want 601s", wait)
	}
}

func TestAvailability(t *testing.T) {
	cases := []struct {
		name     string
		ready    bool
		since    time.Duration // before now
		minReady time.Duration
		want     bool
	}{
		{"not ready", false, time.Hour, 0, false},
		{"ready, no minReadySeconds", true, 0, 0, true},
		{"ready for less than minReadySeconds", true, 5 * time.Second, 10 * time.Second, false},
		{"ready for exactly minReadySeconds", true, 10 * time.Second, 10 * time.Second, false},
		{"ready for longer", true, 11 * time.Second, 10 * time.Second, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := isAvailable(tc.ready, t0.Add(-tc.since), tc.minReady, t0); got != tc.want {
				t.Errorf("available = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStateOf(t *testing.T) {
	now := t0.Add(time.Minute)
	p := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: "web-abc-x", UID: "u", Labels: map[string]string{LabelPodTemplateHash: "abc"},
			CreationTimestamp: api.NewTime(t0)},
		Spec: api.PodSpec{NodeName: "n1"},
		Status: api.PodStatus{Phase: api.PodRunning,
			Conditions:        []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: api.NewTime(now.Add(-5 * time.Second))}},
			ContainerStatuses: []api.ContainerStatus{{RestartCount: 1}, {RestartCount: 4}}},
	}
	s := stateOf(p, map[string]int64{"abc": 7}, 10*time.Second, now)
	if s.hash != "abc" || s.revision != 7 || !s.scheduled || !s.ready || s.available || s.restarts != 4 || s.terminating {
		t.Errorf("state = %+v", s)
	}
	if at := availableAt(&s, 10*time.Second); !at.Equal(now.Add(5 * time.Second)) {
		t.Errorf("availableAt = %v", at)
	}
	ts := api.NewTime(now)
	p.DeletionTimestamp = &ts
	if s := stateOf(p, nil, 0, now); !s.terminating || s.revision != 0 || s.available {
		t.Errorf("terminating state = %+v", s)
	}
	for phase, want := range map[string]bool{api.PodRunning: true, api.PodPending: true, api.PodFailed: false, api.PodSucceeded: false} {
		p.Status.Phase = phase
		if isActive(p) != want {
			t.Errorf("isActive(%s) = %v", phase, !want)
		}
	}
}
