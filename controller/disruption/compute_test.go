package disruption

import (
	"errors"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func pdb(mut func(*api.PodDisruptionBudget)) *api.PodDisruptionBudget {
	p := &api.PodDisruptionBudget{
		ObjectMeta: api.ObjectMeta{Name: "zk-pdb", Namespace: "default", Generation: 3},
		Spec:       api.PodDisruptionBudgetSpec{Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "zk"}}},
	}
	mut(p)
	return p
}

func pod(name, owner string, ready bool) *api.Pod {
	p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "zk"}}}
	if owner != "" {
		yes := true
		p.OwnerReferences = []api.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: owner, UID: "uid-" + owner, Controller: &yes}}
	}
	if ready {
		p.Status.Phase = api.PodRunning
		p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue}}
	}
	return p
}

func ptr[T any](v T) *T { return &v }

func TestCompute(t *testing.T) {
	zk := func(scale int32, names ...string) map[string]Owner {
		m := map[string]Owner{}
		for _, n := range names {
			m[n] = Owner{UID: "uid-zk", Scale: scale}
		}
		return m
	}
	three := []*api.Pod{pod("zk-0", "zk", true), pod("zk-1", "zk", true), pod("zk-2", "zk", true)}
	tests := []struct {
		name                                string
		pdb                                 *api.PodDisruptionBudget
		pods                                []*api.Pod
		owners                              map[string]Owner
		expected, desired, healthy, allowed int32
		cond                                string
		wantErr                             bool
	}{
		{name: "maxUnavailable 1 of 3", pdb: pdb(func(p *api.PodDisruptionBudget) { p.Spec.MaxUnavailable = ptr(api.FromInt32(1)) }),
			pods: three, owners: zk(3, "zk-0", "zk-1", "zk-2"), expected: 3, desired: 2, healthy: 3, allowed: 1, cond: "True/SufficientPods"},
		{name: "maxUnavailable 1, one not ready", pdb: pdb(func(p *api.PodDisruptionBudget) { p.Spec.MaxUnavailable = ptr(api.FromInt32(1)) }),
			pods:   []*api.Pod{pod("zk-0", "zk", true), pod("zk-1", "zk", true), pod("zk-2", "zk", false)},
			owners: zk(3, "zk-0", "zk-1", "zk-2"), expected: 3, desired: 2, healthy: 2, allowed: 0, cond: "False/InsufficientPods"},
		{name: "expected from the scale, not the pods", pdb: pdb(func(p *api.PodDisruptionBudget) { p.Spec.MaxUnavailable = ptr(api.FromInt32(1)) }),
			pods: three[:2], owners: zk(3, "zk-0", "zk-1"), expected: 3, desired: 2, healthy: 2, allowed: 0, cond: "False/InsufficientPods"},
		{name: "maxUnavailable 50% rounds up", pdb: pdb(func(p *api.PodDisruptionBudget) { p.Spec.MaxUnavailable = ptr(api.FromString("50%")) }),
			pods: three, owners: zk(3, "zk-0", "zk-1", "zk-2"), expected: 3, desired: 1, healthy: 3, allowed: 2, cond: "True/SufficientPods"},
		{name: "minAvailable number counts pods", pdb: pdb(func(p *api.PodDisruptionBudget) { p.Spec.MinAvailable = ptr(api.FromInt32(2)) }),
			pods: []*api.Pod{pod("a", "", true), pod("b", "", true), pod("c", "", true)}, expected: 3, desired: 2, healthy: 3, allowed: 1, cond: "True/SufficientPods"},
		{name: "minAvailable percent from the scale", pdb: pdb(func(p *api.PodDisruptionBudget) { p.Spec.MinAvailable = ptr(api.FromString("50%")) }),
			pods: three, owners: zk(4, "zk-0", "zk-1", "zk-2"), expected: 4, desired: 2, healthy: 3, allowed: 1, cond: "True/SufficientPods"},
		{name: "no pods: nothing allowed", pdb: pdb(func(p *api.PodDisruptionBudget) { p.Spec.MinAvailable = ptr(api.FromInt32(0)) }),
			expected: 0, desired: 0, healthy: 0, allowed: 0, cond: "False/InsufficientPods"},
		{name: "terminating and disrupted pods are not healthy", pdb: pdb(func(p *api.PodDisruptionBudget) {
			p.Spec.MinAvailable = ptr(api.FromInt32(1))
			p.Status.DisruptedPods = map[string]api.Time{"b": {Time: t0.Add(-time.Minute)}, "c": {Time: t0.Add(-3 * time.Minute)}}
		}), pods: []*api.Pod{func() *api.Pod { p := pod("a", "", true); p.DeletionTimestamp = &api.Time{Time: t0}; return p }(),
			pod("b", "", true), pod("c", "", true)}, expected: 3, desired: 1, healthy: 1, allowed: 0, cond: "False/InsufficientPods"},
		{name: "controller without a scale fails safe", pdb: pdb(func(p *api.PodDisruptionBudget) {
			p.Spec.MaxUnavailable = ptr(api.FromInt32(1))
			p.Status.DisruptionsAllowed = 2
		}), pods: three, owners: map[string]Owner{}, cond: "False/SyncFailed", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Compute(Input{PDB: tt.pdb, Pods: tt.pods, Owners: tt.owners, Now: t0})
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, errNoController)) {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			st := res.Status
			if st.ExpectedPods != tt.expected || st.DesiredHealthy != tt.desired || st.CurrentHealthy != tt.healthy || st.DisruptionsAllowed != tt.allowed {
				t.Fatalf("status %+v, want expected %d desired %d healthy %d allowed %d", st, tt.expected, tt.desired, tt.healthy, tt.allowed)
			}
			if len(st.Conditions) != 1 || string(st.Conditions[0].Status)+"/"+st.Conditions[0].Reason != tt.cond {
				t.Fatalf("conditions %+v, want %s", st.Conditions, tt.cond)
			}
			if !tt.wantErr && st.ObservedGeneration != 3 {
				t.Fatalf("observedGeneration %d", st.ObservedGeneration)
			}
		})
	}
}

func TestDisruptedPodsExpire(t *testing.T) {
	p := pdb(func(p *api.PodDisruptionBudget) {
		p.Spec.MinAvailable = ptr(api.FromInt32(1))
		p.Status.DisruptedPods = map[string]api.Time{"a": {Time: t0.Add(-90 * time.Second)}, "gone": {Time: t0}}
	})
	res, err := Compute(Input{PDB: p, Pods: []*api.Pod{pod("a", "", true), pod("b", "", true)}, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Status.DisruptedPods["a"]; !ok || len(res.Status.DisruptedPods) != 1 || res.Recheck != 30*time.Second {
		t.Fatalf("disruptedPods %v recheck %v: want only a, recheck in 30s", res.Status.DisruptedPods, res.Recheck)
	}
}
