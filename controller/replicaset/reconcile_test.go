package replicaset

import (
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

var t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

const setUID = "rs-uid"

func testSet(replicas int32) *Set {
	return &Set{
		Namespace: "default", Name: "web", UID: setUID, Generation: 2, Replicas: replicas,
		Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: &api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "fe"}}},
	}
}

// pod builders: a pending, unscheduled pod created at t0-age, then options.
type podOpt func(*api.Pod)

func mkPod(name string, age time.Duration, opts ...podOpt) *api.Pod {
	p := &api.Pod{ObjectMeta: api.ObjectMeta{
		Name: name, Namespace: "default", UID: "uid-" + name, ResourceVersion: "1",
		Labels: map[string]string{"app": "web", "tier": "fe"}, CreationTimestamp: api.NewTime(t0.Add(-age)),
	}, Status: api.PodStatus{Phase: api.PodPending}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func ownedBy(uid string, kind string) podOpt {
	return func(p *api.Pod) {
		t := true
		p.OwnerReferences = append(p.OwnerReferences, api.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: "x", UID: uid, Controller: &t})
	}
}

var ours = ownedBy(setUID, "ReplicaSet")

func labels(l map[string]string) podOpt { return func(p *api.Pod) { p.Labels = l } }
func onNode(n string) podOpt            { return func(p *api.Pod) { p.Spec.NodeName = n } }
func phase(ph string) podOpt            { return func(p *api.Pod) { p.Status.Phase = ph } }
func deleting() podOpt {
	return func(p *api.Pod) { ts := api.NewTime(t0); p.DeletionTimestamp = &ts }
}
func restarts(n int32) podOpt {
	return func(p *api.Pod) { p.Status.ContainerStatuses = []api.ContainerStatus{{Name: "c", RestartCount: n}} }
}
func cost(v string) podOpt {
	return func(p *api.Pod) { p.Annotations = map[string]string{AnnotationPodDeletionCost: v} }
}

// readyFor makes the pod scheduled, Running and Ready since t0-d.
func readyFor(d time.Duration) podOpt {
	return func(p *api.Pod) {
		if p.Spec.NodeName == "" {
			p.Spec.NodeName = "n1"
		}
		p.Status.Phase = api.PodRunning
		p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: api.NewTime(t0.Add(-d))}}
	}
}

func names(ps []*api.Pod) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

func TestReconcile(t *testing.T) {
	type want struct {
		adopt, release, owned, del []string
		create                     int
	}
	tests := []struct {
		name      string
		set       func() *Set
		pods      []*api.Pod
		needsSync bool
		burst     int
		want      want
	}{
		{name: "new set creates all replicas", set: func() *Set { return testSet(3) }, needsSync: true,
			want: want{create: 3}},
		{name: "steady state writes nothing", set: func() *Set { return testSet(2) }, needsSync: true,
			pods: []*api.Pod{mkPod("a", time.Minute, ours), mkPod("b", time.Minute, ours)},
			want: want{owned: []string{"a", "b"}}},
		{name: "one missing is recreated", set: func() *Set { return testSet(3) }, needsSync: true,
			pods: []*api.Pod{mkPod("a", time.Minute, ours), mkPod("b", time.Minute, ours)},
			want: want{owned: []string{"a", "b"}, create: 1}},
		{name: "burst caps creations", set: func() *Set { return testSet(1000) }, needsSync: true, burst: 500,
			want: want{create: 500}},
		{name: "matching orphan adopted and counted", set: func() *Set { return testSet(2) }, needsSync: true,
			pods: []*api.Pod{mkPod("a", time.Minute, ours), mkPod("orphan", time.Minute)},
			want: want{adopt: []string{"orphan"}, owned: []string{"a", "orphan"}}},
		{name: "orphan not matching ignored", set: func() *Set { return testSet(1) }, needsSync: true,
			pods: []*api.Pod{mkPod("other", time.Minute, labels(map[string]string{"app": "api"}))},
			want: want{create: 1}},
		{name: "terminating orphan not adopted", set: func() *Set { return testSet(1) }, needsSync: true,
			pods: []*api.Pod{mkPod("gone", time.Minute, deleting())},
			want: want{create: 1}},
		{name: "pod of a Deployment never adopted", set: func() *Set { return testSet(1) }, needsSync: true,
			pods: []*api.Pod{mkPod("deploy-pod", time.Minute, ownedBy("deploy-uid", "Deployment"))},
			want: want{create: 1}},
		{name: "pod of another ReplicaSet never adopted", set: func() *Set { return testSet(1) }, needsSync: true,
			pods: []*api.Pod{mkPod("theirs", time.Minute, ownedBy("other-rs", "ReplicaSet"))},
			want: want{create: 1}},
		{name: "relabelled pod released and replaced", set: func() *Set { return testSet(1) }, needsSync: true,
			pods: []*api.Pod{mkPod("a", time.Minute, ours, labels(map[string]string{"app": "debug"}))},
			want: want{release: []string{"a"}, create: 1}},
		{name: "finished and terminating pods do not count", set: func() *Set { return testSet(2) }, needsSync: true,
			pods: []*api.Pod{mkPod("ok", time.Minute, ours), mkPod("done", time.Minute, ours, phase(api.PodSucceeded)),
				mkPod("failed", time.Minute, ours, phase(api.PodFailed)), mkPod("term", time.Minute, ours, deleting())},
			want: want{owned: []string{"ok"}, create: 1}},
		{name: "surplus deleted in rank order", set: func() *Set { return testSet(1) }, needsSync: true,
			pods: []*api.Pod{mkPod("ready", time.Hour, ours, readyFor(time.Hour)), mkPod("pending", time.Minute, ours),
				mkPod("scheduled", time.Minute, ours, onNode("n1"))},
			want: want{owned: []string{"ready", "pending", "scheduled"}, del: []string{"pending", "scheduled"}}},
		{name: "expectations pending: claims only", set: func() *Set { return testSet(3) }, needsSync: false,
			pods: []*api.Pod{mkPod("orphan", time.Minute)},
			want: want{adopt: []string{"orphan"}, owned: []string{"orphan"}}},
		{name: "set being deleted neither adopts, releases nor manages", set: func() *Set {
			s := testSet(3)
			s.Deleting = true
			return s
		}, needsSync: true,
			pods: []*api.Pod{mkPod("orphan", time.Minute), mkPod("a", time.Minute, ours),
				mkPod("relabelled", time.Minute, ours, labels(map[string]string{"app": "x"}))},
			want: want{owned: []string{"a"}}},
		{name: "scale to zero deletes all", set: func() *Set { return testSet(0) }, needsSync: true,
			pods: []*api.Pod{mkPod("a", time.Minute, ours), mkPod("b", 2*time.Minute, ours)},
			want: want{owned: []string{"a", "b"}, del: []string{"a", "b"}}},
		{name: "nil selector matches nothing", set: func() *Set {
			s := testSet(1)
			s.Selector = nil
			return s
		}, needsSync: true, pods: []*api.Pod{mkPod("orphan", time.Minute)},
			want: want{create: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Reconcile(Input{Set: tt.set(), Pods: tt.pods, NeedsSync: tt.needsSync, Burst: tt.burst, Now: t0})
			got := want{adopt: names(p.Adopt), release: names(p.Release), owned: names(p.Owned), del: names(p.Delete), create: p.Create}
			for _, c := range []struct {
				what      string
				got, want []string
			}{{"adopt", got.adopt, tt.want.adopt}, {"release", got.release, tt.want.release},
				{"owned", got.owned, tt.want.owned}, {"delete", got.del, tt.want.del}} {
				if len(c.got) != 0 || len(c.want) != 0 {
					if !slices.Equal(c.got, c.want) {
						t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
					}
				}
			}
			if got.create != tt.want.create {
				t.Errorf("create = %d, want %d", got.create, tt.want.create)
			}
		})
	}
}

func TestPodsToDeleteOrder(t *testing.T) {
	tests := []struct {
		name    string
		pods    []*api.Pod
		related []*api.Pod
		want    []string
	}{
		{name: "unscheduled before scheduled",
			pods: []*api.Pod{mkPod("scheduled", time.Minute, onNode("n1")), mkPod("unscheduled", time.Hour)},
			want: []string{"unscheduled", "scheduled"}},
		{name: "pending before unknown before running",
			pods: []*api.Pod{mkPod("running", time.Minute, onNode("n1"), phase(api.PodRunning)),
				mkPod("unknown", time.Minute, onNode("n1"), phase(api.PodUnknown)), mkPod("pending", time.Minute, onNode("n1"))},
			want: []string{"pending", "unknown", "running"}},
		{name: "not ready before ready",
			pods: []*api.Pod{mkPod("ready", time.Minute, readyFor(time.Second)), mkPod("notready", time.Hour, onNode("n1"), phase(api.PodRunning))},
			want: []string{"notready", "ready"}},
		{name: "lower deletion cost first",
			pods: []*api.Pod{mkPod("dear", time.Minute, cost("100")), mkPod("cheap", time.Minute, cost("-5")), mkPod("plain", time.Minute),
				mkPod("bad", time.Minute, cost("x"))},
			want: []string{"cheap", "bad", "plain", "dear"}},
		{name: "doubled up first",
			pods: []*api.Pod{mkPod("alone", time.Minute, onNode("n1")), mkPod("crowded", time.Minute, onNode("n2"))},
			related: []*api.Pod{mkPod("r1", 0, onNode("n2")), mkPod("r2", 0, onNode("n2")), mkPod("r3", 0, onNode("n1")),
				mkPod("r4", 0, onNode("n1"), deleting())},
			want: []string{"crowded", "alone"}},
		{name: "ready for shorter time first",
			pods: []*api.Pod{mkPod("long", time.Hour, readyFor(time.Hour)), mkPod("short", time.Hour, readyFor(time.Minute))},
			want: []string{"short", "long"}},
		{name: "more restarts first",
			pods: []*api.Pod{mkPod("calm", time.Minute, restarts(0)), mkPod("flappy", time.Minute, restarts(7))},
			want: []string{"flappy", "calm"}},
		{name: "newer first",
			pods: []*api.Pod{mkPod("old", 10*time.Hour), mkPod("new", time.Minute), mkPod("mid", time.Hour)},
			want: []string{"new", "mid", "old"}},
		{name: "same log2 bucket of age: by uid",
			pods: []*api.Pod{mkPod("b", 70*time.Second), mkPod("a", 69*time.Second)},
			want: []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := names(PodsToDelete(tt.pods, tt.related, len(tt.pods), t0))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("order %v, want %v", got, tt.want)
			}
			if n := len(PodsToDelete(tt.pods, tt.related, 1, t0)); n != 1 {
				t.Fatalf("n=1 gave %d pods", n)
			}
		})
	}
}

func TestComputeStatus(t *testing.T) {
	failure := api.ReplicaSetCondition{Type: api.ReplicaSetReplicaFailure, Status: api.ConditionTrue, Reason: ReasonFailedCreate, Message: "old"}
	tests := []struct {
		name     string
		set      func() *Set
		owned    []*api.Pod
		err      error
		want     api.ReplicaSetStatus
		wantWait time.Duration
	}{
		{name: "counts", set: func() *Set { return testSet(3) },
			owned: []*api.Pod{mkPod("a", time.Hour, readyFor(time.Hour)), mkPod("b", time.Hour, readyFor(time.Minute)),
				mkPod("c", time.Hour, labels(map[string]string{"app": "web"}))},
			want: api.ReplicaSetStatus{Replicas: 3, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, ObservedGeneration: 2}},
		{name: "minReadySeconds holds availability back and asks for a look", set: func() *Set {
			s := testSet(2)
			s.MinReadySeconds = 120
			return s
		}, owned: []*api.Pod{mkPod("a", time.Hour, readyFor(time.Hour)), mkPod("b", time.Hour, readyFor(time.Minute))},
			want:     api.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 1, ObservedGeneration: 2},
			wantWait: 61 * time.Second},
		{name: "create error adds FailedCreate", set: func() *Set { return testSet(3) },
			owned: []*api.Pod{mkPod("a", time.Hour)}, err: errors.New(`pods "web-x" is forbidden: exceeded quota`),
			want: api.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ObservedGeneration: 2, Conditions: []api.ReplicaSetCondition{{
				Type: api.ReplicaSetReplicaFailure, Status: api.ConditionTrue, LastTransitionTime: api.NewTime(t0),
				Reason: ReasonFailedCreate, Message: `pods "web-x" is forbidden: exceeded quota`}}}},
		{name: "delete error adds FailedDelete", set: func() *Set { return testSet(0) },
			owned: []*api.Pod{mkPod("a", time.Hour)}, err: errors.New("boom"),
			want: api.ReplicaSetStatus{Replicas: 1, FullyLabeledReplicas: 1, ObservedGeneration: 2, Conditions: []api.ReplicaSetCondition{{
				Type: api.ReplicaSetReplicaFailure, Status: api.ConditionTrue, LastTransitionTime: api.NewTime(t0),
				Reason: ReasonFailedDelete, Message: "boom"}}}},
		{name: "existing failure kept while errors go on", set: func() *Set {
			s := testSet(1)
			s.Status.Conditions = []api.ReplicaSetCondition{failure}
			return s
		}, err: errors.New("new"),
			want: api.ReplicaSetStatus{ObservedGeneration: 2, Conditions: []api.ReplicaSetCondition{failure}}},
		{name: "failure removed on success", set: func() *Set {
			s := testSet(0)
			s.Status.Conditions = []api.ReplicaSetCondition{failure}
			return s
		}, want: api.ReplicaSetStatus{ObservedGeneration: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, wait := ComputeStatus(tt.set(), tt.owned, tt.err, t0)
			if !sameJSON(t, got, tt.want) {
				t.Fatalf("status\n got %+v\nwant %+v", got, tt.want)
			}
			if wait != tt.wantWait {
				t.Fatalf("wait %v, want %v", wait, tt.wantWait)
			}
		})
	}
}

func TestSlowStart(t *testing.T) {
	tests := []struct {
		name      string
		count     int
		failAt    int32 // the call number (1-based) that fails; 0 none
		wantDone  int
		wantCalls int32
	}{
		{name: "all succeed", count: 10, wantDone: 10, wantCalls: 10},
		{name: "first fails: nothing more", count: 10, failAt: 1, wantDone: 0, wantCalls: 1},
		// Batches 1, 2, 4: the 4th call is in the third batch, which runs
		// whole; no fourth batch.
		{name: "failure in third batch", count: 20, failAt: 4, wantDone: 6, wantCalls: 7},
		{name: "zero", count: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			done, err := SlowStart(tt.count, func() error {
				if n := calls.Add(1); n == tt.failAt {
					return errors.New("quota")
				}
				return nil
			})
			if done != tt.wantDone || calls.Load() != tt.wantCalls || (err != nil) != (tt.failAt != 0) {
				t.Fatalf("done %d calls %d err %v; want %d, %d", done, calls.Load(), err, tt.wantDone, tt.wantCalls)
			}
		})
	}
}

func TestKindAdapters(t *testing.T) {
	rc := &api.ReplicationController{
		ObjectMeta: api.ObjectMeta{Name: "nginx", Namespace: "default", UID: "rc-uid", Generation: 3},
		Spec: api.ReplicationControllerSpec{Replicas: ptr(int32(2)), Selector: map[string]string{"app": "nginx"},
			Template: &api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "nginx"}}}},
		Status: api.ReplicationControllerStatus{Replicas: 1, Conditions: []api.ReplicationControllerCondition{{Type: "ReplicaFailure", Status: api.ConditionTrue}}},
	}
	s, ok := ReplicationControllerKind.toSet(rc)
	if !ok || s.Replicas != 2 || s.UID != "rc-uid" || !api.SelectorMatches(s.Selector, map[string]string{"app": "nginx", "x": "y"}) ||
		s.Status.Replicas != 1 || len(s.Status.Conditions) != 1 {
		t.Fatalf("rc set %+v", s)
	}
	out, err := ReplicationControllerKind.withStatus(rc, api.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 1, ObservedGeneration: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*api.ReplicationController); got.Status.Replicas != 2 || got.Status.ReadyReplicas != 1 || got.Status.Conditions != nil || rc.Status.Replicas != 1 {
		t.Fatalf("rc status %+v (original %+v)", got.Status, rc.Status)
	}
	ref := ReplicationControllerKind.controllerRef(s)
	if ref.APIVersion != "v1" || ref.Kind != "ReplicationController" || !ReplicationControllerKind.owns(&ref) || ReplicaSetKind.owns(&ref) {
		t.Fatalf("rc ref %+v", ref)
	}
	pod, err := NewPod(&ReplicationControllerKind, s)
	if err != nil || pod.GenerateName != "nginx-" || pod.Labels["app"] != "nginx" || len(pod.OwnerReferences) != 1 {
		t.Fatalf("pod %+v %v", pod, err)
	}
	long := *s
	long.Name = string(make([]byte, 70))
	if pod, _ := NewPod(&ReplicationControllerKind, &long); len(pod.GenerateName) != maxGeneratedNameLength {
		t.Fatalf("generateName length %d", len(pod.GenerateName))
	}
	if _, ok := ReplicaSetKind.toSet(rc); ok {
		t.Fatal("ReplicaSetKind read an RC")
	}
}

func ptr[T any](v T) *T { return &v }

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return string(ja) == string(jb)
}
