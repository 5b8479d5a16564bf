package daemonset

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func testDS(mut ...func(*api.DaemonSet)) *api.DaemonSet {
	ds := &api.DaemonSet{
		ObjectMeta: api.ObjectMeta{Name: "agent", Namespace: "kube-system", UID: "ds-uid", Generation: 2},
		Spec: api.DaemonSetSpec{
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "a", Image: "agent:1"}}},
			},
		},
	}
	api.DefaultDaemonSet(ds)
	for _, m := range mut {
		m(ds)
	}
	return ds
}

func node(name string, mut ...func(*api.Node)) *api.Node {
	n := &api.Node{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
	for _, m := range mut {
		m(n)
	}
	return n
}

func tainted(key, effect string) func(*api.Node) {
	return func(n *api.Node) { n.Spec.Taints = append(n.Spec.Taints, api.Taint{Key: key, Effect: effect}) }
}

// pod is a daemon pod named name on node with template hash; state is
// "ready", "ready-new" (ready just now), "pending", "failed", "succeeded",
// "deleting"; age orders pods (older first).
func pod(name, nodeName, hash, state string, age time.Duration) *api.Pod {
	p := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "kube-system", UID: "uid-" + name,
			CreationTimestamp: api.Time{Time: t0.Add(-age)},
			Labels:            map[string]string{"app": "agent", api.DefaultDaemonSetUniqueLabelKey: hash}},
		Spec: api.PodSpec{NodeName: nodeName},
	}
	ready := func(at time.Time) {
		p.Status.Phase = api.PodRunning
		p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: api.Time{Time: at}}}
	}
	switch state {
	case "ready":
		ready(t0.Add(-time.Hour))
	case "ready-new":
		ready(t0)
	case "pending":
		p.Status.Phase = api.PodPending
	case "failed":
		p.Status.Phase = api.PodFailed
	case "succeeded":
		p.Status.Phase = api.PodSucceeded
	case "deleting":
		ready(t0.Add(-time.Hour))
		p.DeletionTimestamp = &api.Time{Time: t0}
	}
	return p
}

func summary(p Plan) (creates, deletes string) {
	var d []string
	for _, x := range p.Delete {
		d = append(d, fmt.Sprintf("%s:%s", x.Pod.Name, x.Reason))
	}
	slices.Sort(d)
	return strings.Join(p.Create, ","), strings.Join(d, ",")
}

const cur, old = "h-new", "h-old"

func TestReconcile(t *testing.T) {
	surge := func(s string) func(*api.DaemonSet) {
		return func(ds *api.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate = &api.RollingUpdateDaemonSet{
				MaxUnavailable: ptr(api.FromInt32(0)), MaxSurge: ptr(api.ParseIntOrString(s))}
		}
	}
	unavailable := func(s string) func(*api.DaemonSet) {
		return func(ds *api.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate = &api.RollingUpdateDaemonSet{
				MaxUnavailable: ptr(api.ParseIntOrString(s)), MaxSurge: ptr(api.FromInt32(0))}
		}
	}
	tests := []struct {
		name             string
		ds               *api.DaemonSet
		nodes            []*api.Node
		pods             []*api.Pod
		backoff          map[string]time.Time
		creates, deletes string
		rolling          bool
		requeue          time.Duration
	}{
		{name: "failed pod in back-off is left alone", ds: testDS(),
			nodes:   []*api.Node{node("a"), node("b")},
			pods:    []*api.Pod{pod("pa", "a", cur, "failed", time.Hour), pod("pb", "b", cur, "failed", time.Hour)},
			backoff: map[string]time.Time{"a": t0.Add(4 * time.Second), "b": t0.Add(-time.Second)},
			deletes: "pb:Failed", requeue: 4 * time.Second},
		{name: "a pod on every node", ds: testDS(),
			nodes: []*api.Node{node("a"), node("b"), node("c")}, creates: "a,b,c"},
		{name: "only missing nodes", ds: testDS(),
			nodes: []*api.Node{node("a"), node("b")}, pods: []*api.Pod{pod("p1", "a", cur, "ready", time.Hour)}, creates: "b"},
		{name: "converged", ds: testDS(),
			nodes: []*api.Node{node("a")}, pods: []*api.Pod{pod("p1", "a", cur, "ready", time.Hour)}},
		{name: "nodeSelector", ds: testDS(func(ds *api.DaemonSet) { ds.Spec.Template.Spec.NodeSelector = map[string]string{"disk": "ssd"} }),
			nodes: []*api.Node{node("a", func(n *api.Node) { n.Labels["disk"] = "ssd" }), node("b")},
			pods:  []*api.Pod{pod("pb", "b", cur, "ready", time.Hour)}, creates: "a", deletes: "pb:NotEligible"},
		{name: "template nodeName", ds: testDS(func(ds *api.DaemonSet) { ds.Spec.Template.Spec.NodeName = "b" }),
			nodes: []*api.Node{node("a"), node("b")}, creates: "b"},
		{name: "untolerated NoSchedule: no new pod, old one stays", ds: testDS(),
			nodes: []*api.Node{node("a", tainted("dedicated", api.TaintEffectNoSchedule)), node("b", tainted("dedicated", api.TaintEffectNoSchedule))},
			pods:  []*api.Pod{pod("pa", "a", cur, "ready", time.Hour)}},
		{name: "untolerated NoExecute evicts", ds: testDS(),
			nodes: []*api.Node{node("a", tainted("dedicated", api.TaintEffectNoExecute))},
			pods:  []*api.Pod{pod("pa", "a", cur, "ready", time.Hour)}, deletes: "pa:NotEligible"},
		{name: "template toleration", ds: testDS(func(ds *api.DaemonSet) {
			ds.Spec.Template.Spec.Tolerations = []api.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: "Exists", Effect: api.TaintEffectNoSchedule}}
		}), nodes: []*api.Node{node("cp", tainted("node-role.kubernetes.io/control-plane", api.TaintEffectNoSchedule))}, creates: "cp"},
		{name: "default tolerations: not-ready, unreachable, pressure, unschedulable", ds: testDS(),
			nodes: []*api.Node{
				node("nr", tainted(TaintNodeNotReady, api.TaintEffectNoExecute)),
				node("ur", tainted(TaintNodeUnreachable, api.TaintEffectNoExecute)),
				node("dp", tainted(TaintNodeDiskPressure, api.TaintEffectNoSchedule)),
				node("mp", tainted(TaintNodeMemoryPressure, api.TaintEffectNoSchedule)),
				node("pp", tainted(TaintNodePIDPressure, api.TaintEffectNoSchedule)),
				node("us", tainted(TaintNodeUnschedulable, api.TaintEffectNoSchedule)),
				node("cordoned", func(n *api.Node) { n.Spec.Unschedulable = true }),
			}, creates: "nr,ur,dp,mp,pp,us,cordoned"},
		{name: "not-ready NoSchedule is not a default toleration", ds: testDS(),
			nodes: []*api.Node{node("a", tainted(TaintNodeNotReady, api.TaintEffectNoSchedule))}},
		{name: "network-unavailable only for hostNetwork", ds: testDS(func(ds *api.DaemonSet) { ds.Spec.Template.Spec.HostNetwork = true }),
			nodes: []*api.Node{node("a", tainted(TaintNodeNetworkUnavailable, api.TaintEffectNoSchedule))}, creates: "a"},
		{name: "failed and succeeded pods replaced", ds: testDS(),
			nodes:   []*api.Node{node("a"), node("b")},
			pods:    []*api.Pod{pod("pa", "a", cur, "failed", time.Hour), pod("pb", "b", cur, "succeeded", time.Hour)},
			deletes: "pa:Failed,pb:Succeeded"},
		{name: "excess pods: the oldest stays", ds: testDS(),
			nodes:   []*api.Node{node("a")},
			pods:    []*api.Pod{pod("young", "a", cur, "ready", time.Minute), pod("oldest", "a", cur, "ready", time.Hour), pod("mid", "a", cur, "ready", 10*time.Minute)},
			deletes: "mid:Excess,young:Excess"},
		{name: "terminating pod: wait, no new pod", ds: testDS(),
			nodes: []*api.Node{node("a")}, pods: []*api.Pod{pod("pa", "a", cur, "deleting", time.Hour)}},
		{name: "node gone", ds: testDS(),
			nodes: []*api.Node{node("a")},
			pods:  []*api.Pod{pod("pa", "a", cur, "ready", time.Hour), pod("px", "x", cur, "ready", time.Hour)}, deletes: "px:NodeGone"},
		{name: "deleting DaemonSet does nothing", ds: testDS(func(ds *api.DaemonSet) { ds.DeletionTimestamp = &api.Time{Time: t0} }),
			nodes: []*api.Node{node("a")}},

		{name: "rolling: maxUnavailable 1", ds: testDS(),
			nodes: []*api.Node{node("a"), node("b"), node("c")},
			pods: []*api.Pod{pod("pa", "a", old, "ready", time.Hour), pod("pb", "b", old, "ready", time.Hour),
				pod("pc", "c", old, "ready", time.Hour)}, deletes: "pa:Update", rolling: true},
		{name: "rolling: a new pod not yet ready holds the update", ds: testDS(),
			nodes: []*api.Node{node("a"), node("b")},
			pods:  []*api.Pod{pod("pa", "a", cur, "pending", time.Minute), pod("pb", "b", old, "ready", time.Hour)}},
		{name: "rolling: unavailable old pods are always replaced", ds: testDS(),
			nodes: []*api.Node{node("a"), node("b"), node("c")},
			pods: []*api.Pod{pod("pa", "a", old, "pending", time.Hour), pod("pb", "b", old, "pending", time.Hour),
				pod("pc", "c", old, "ready", time.Hour)}, deletes: "pa:Update,pb:Update", rolling: true},
		{name: "rolling: maxUnavailable 50% of 4", ds: testDS(unavailable("50%")),
			nodes: []*api.Node{node("a"), node("b"), node("c"), node("d")},
			pods: []*api.Pod{pod("pa", "a", old, "ready", time.Hour), pod("pb", "b", old, "ready", time.Hour),
				pod("pc", "c", old, "ready", time.Hour), pod("pd", "d", old, "ready", time.Hour)},
			deletes: "pa:Update,pb:Update", rolling: true},
		{name: "rolling: minReadySeconds keeps a ready pod unavailable", ds: testDS(func(ds *api.DaemonSet) { ds.Spec.MinReadySeconds = 30 }),
			nodes:   []*api.Node{node("a"), node("b")},
			pods:    []*api.Pod{pod("pa", "a", cur, "ready-new", time.Minute), pod("pb", "b", old, "ready", time.Hour)},
			requeue: 30 * time.Second},
		{name: "OnDelete: no rolling", ds: testDS(func(ds *api.DaemonSet) {
			ds.Spec.UpdateStrategy = api.DaemonSetUpdateStrategy{Type: api.OnDeleteDaemonSetStrategyType}
		}), nodes: []*api.Node{node("a")}, pods: []*api.Pod{pod("pa", "a", old, "ready", time.Hour)}},
		{name: "surge: new pods next to old ones, up to maxSurge", ds: testDS(surge("1")),
			nodes:   []*api.Node{node("a"), node("b")},
			pods:    []*api.Pod{pod("pa", "a", old, "ready", time.Hour), pod("pb", "b", old, "ready", time.Hour)},
			creates: "a", rolling: true},
		{name: "surge: old pod goes once the new one is available", ds: testDS(surge("1")),
			nodes: []*api.Node{node("a"), node("b")},
			pods: []*api.Pod{pod("pa", "a", old, "ready", time.Hour), pod("na", "a", cur, "ready", time.Minute),
				pod("pb", "b", old, "ready", time.Hour)}, deletes: "pa:SurgeReplaced"},
		{name: "surge: a new pod still pending keeps both", ds: testDS(surge("1")),
			nodes: []*api.Node{node("a"), node("b")},
			pods: []*api.Pod{pod("pa", "a", old, "ready", time.Hour), pod("na", "a", cur, "pending", time.Minute),
				pod("pb", "b", old, "ready", time.Hour)}},
		{name: "surge: unavailable old pods get a new one beyond maxSurge", ds: testDS(surge("1")),
			nodes: []*api.Node{node("a"), node("b"), node("c")},
			pods: []*api.Pod{pod("pa", "a", old, "pending", time.Hour), pod("pb", "b", old, "pending", time.Hour),
				pod("pc", "c", old, "ready", time.Hour)}, creates: "a,b,c", rolling: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Reconcile(Input{DS: tt.ds, Nodes: tt.nodes, Pods: tt.pods, Hash: cur, Now: t0, FailedBackoff: tt.backoff})
			c, d := summary(p)
			if p.RequeueAfter != tt.requeue {
				t.Errorf("requeue %v, want %v", p.RequeueAfter, tt.requeue)
			}
			if c != tt.creates || d != tt.deletes || p.Rolling != tt.rolling {
				t.Fatalf("creates %q deletes %q rolling %v, want %q %q %v", c, d, p.Rolling, tt.creates, tt.deletes, tt.rolling)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestComputeStatus(t *testing.T) {
	ds := testDS(func(ds *api.DaemonSet) {
		ds.Spec.Template.Spec.NodeSelector = map[string]string{"role": "worker"}
		ds.Spec.MinReadySeconds = 10
	})
	worker := func(n *api.Node) { n.Labels["role"] = "worker" }
	nodes := []*api.Node{node("a", worker), node("b", worker), node("c", worker), node("d", worker), node("e")}
	pods := []*api.Pod{
		pod("pa", "a", cur, "ready", time.Hour),     // available, updated
		pod("pb", "b", old, "ready-new", time.Hour), // ready, not yet available, old
		pod("pc", "c", cur, "pending", time.Hour),   // current only
		pod("pe", "e", cur, "ready", time.Hour),     // misscheduled
		func() *api.Pod {
			p := pod("gone", "a", cur, "failed", time.Minute)
			p.DeletionTimestamp = &api.Time{Time: t0}
			return p
		}(),
	}
	st, requeue := ComputeStatus(Input{DS: ds, Nodes: nodes, Pods: pods, Hash: cur, Now: t0})
	want := api.DaemonSetStatus{DesiredNumberScheduled: 4, CurrentNumberScheduled: 3, NumberMisscheduled: 1, NumberReady: 2,
		NumberAvailable: 1, UpdatedNumberScheduled: 2, NumberUnavailable: 3, ObservedGeneration: 2}
	if fmt.Sprintf("%+v", st) != fmt.Sprintf("%+v", want) {
		t.Fatalf("status\n got %+v\nwant %+v", st, want)
	}
	if requeue != 10*time.Second {
		t.Fatalf("requeue %v, want 10s (pb becomes available)", requeue)
	}
}

func TestNewPod(t *testing.T) {
	ds := testDS(func(ds *api.DaemonSet) {
		ds.Spec.Template.Spec.Tolerations = []api.Toleration{{Key: TaintNodeNotReady, Operator: "Exists", Effect: api.TaintEffectNoExecute, TolerationSeconds: ptr[int64](30)}}
	})
	p := NewPod(ds, "node-1", cur)
	if p.GenerateName != "agent-" || p.Spec.NodeName != "node-1" || p.Labels[api.DefaultDaemonSetUniqueLabelKey] != cur || p.Labels["app"] != "agent" {
		t.Fatalf("pod %+v", p.ObjectMeta)
	}
	ref := api.ControllerRef(&p.ObjectMeta)
	if ref == nil || ref.UID != "ds-uid" || ref.Kind != "DaemonSet" {
		t.Fatalf("controller ref %+v", ref)
	}
	var keys []string
	for _, tol := range p.Spec.Tolerations {
		keys = append(keys, tol.Key+":"+tol.Effect)
		if tol.Key == TaintNodeNotReady && tol.TolerationSeconds != nil {
			t.Errorf("not-ready toleration keeps tolerationSeconds: upstream replaces it with an unlimited one")
		}
	}
	want := []string{TaintNodeNotReady + ":NoExecute", TaintNodeUnreachable + ":NoExecute", TaintNodeDiskPressure + ":NoSchedule",
		TaintNodeMemoryPressure + ":NoSchedule", TaintNodePIDPressure + ":NoSchedule", TaintNodeUnschedulable + ":NoSchedule"}
	if !slices.Equal(keys, want) {
		t.Fatalf("tolerations %v, want %v", keys, want)
	}
	if len(ds.Spec.Template.Spec.Tolerations) != 1 {
		t.Fatal("NewPod changed the template")
	}
	h1, _ := TemplateHash(ds)
	ds2 := testDS()
	ds2.Spec.Template.Spec.Containers[0].Image = "agent:2"
	h2, _ := TemplateHash(ds2)
	if h1 == h2 || h1 == "" {
		t.Fatalf("hashes %q %q", h1, h2)
	}
}
