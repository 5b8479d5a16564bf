package statefulset

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// Revisions of the test sets.
const (
	revA = "web-aaa"
	revB = "web-bbb"
)

// setOpt adjusts a test StatefulSet.
type setOpt func(*api.StatefulSet)

func parallel(s *api.StatefulSet) { s.Spec.PodManagementPolicy = api.ParallelPodManagement }

func onDelete(s *api.StatefulSet) {
	s.Spec.UpdateStrategy = api.StatefulSetUpdateStrategy{Type: api.OnDeleteStatefulSetStrategyType}
}

func partition(n int32) setOpt {
	return func(s *api.StatefulSet) {
		s.Spec.UpdateStrategy.RollingUpdate = &api.RollingUpdateStatefulSetStrategy{Partition: &n}
	}
}

func minReady(sec int32) setOpt { return func(s *api.StatefulSet) { s.Spec.MinReadySeconds = sec } }

func startAt(n int32) setOpt {
	return func(s *api.StatefulSet) { s.Spec.Ordinals = &api.StatefulSetOrdinals{Start: n} }
}

func testSet(replicas int32, opts ...setOpt) *api.StatefulSet {
	s := &api.StatefulSet{
		TypeMeta:   api.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "ns", UID: "set-uid", Generation: 1},
		Spec: api.StatefulSetSpec{
			Replicas:            &replicas,
			Selector:            &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			ServiceName:         "nginx",
			PodManagementPolicy: api.OrderedReadyPodManagement,
			UpdateStrategy:      api.StatefulSetUpdateStrategy{Type: api.RollingUpdateStatefulSetStrategyType},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "nginx", Image: "nginx:1"}}},
			},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// pod states in the tables: "ready" (Running + Ready), "running" (not
// Ready), "pending", "failed", "succeeded", "terminating" (ready, with a
// deletionTimestamp), "readyfor:<seconds>" (Ready since then).
func mkPod(ordinal int, rev, state string) *api.Pod {
	name := podName("web", ordinal)
	yes := true
	p := &api.Pod{
		ObjectMeta: api.ObjectMeta{
			Name: name, Namespace: "ns", UID: "uid-" + name,
			Labels: map[string]string{"app": "web", RevisionLabel: rev},
			OwnerReferences: []api.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web",
				UID: "set-uid", Controller: &yes}},
		},
		Status: api.PodStatus{Phase: api.PodPending},
	}
	ready := func(since time.Time) {
		p.Status.Phase = api.PodRunning
		p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: api.NewTime(since)}}
	}
	switch {
	case state == "ready":
		ready(testNow.Add(-time.Hour))
	case state == "running":
		p.Status.Phase = api.PodRunning
		p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionFalse}}
	case state == "pending":
	case state == "failed":
		p.Status.Phase = api.PodFailed
	case state == "succeeded":
		p.Status.Phase = api.PodSucceeded
	case state == "terminating":
		ready(testNow.Add(-time.Hour))
		t := api.NewTime(testNow)
		p.DeletionTimestamp = &t
	case strings.HasPrefix(state, "readyfor:"):
		var sec int
		fmt.Sscanf(strings.TrimPrefix(state, "readyfor:"), "%d", &sec)
		ready(testNow.Add(-time.Duration(sec) * time.Second))
	default:
		panic("unknown state " + state)
	}
	return p
}

// pods builds pods from "ordinal:rev:state" specs ("0:A:ready").
func pods(specs ...string) []*api.Pod {
	var out []*api.Pod
	for _, s := range specs {
		parts := strings.SplitN(s, ":", 3)
		var ord int
		fmt.Sscanf(parts[0], "%d", &ord)
		rev := map[string]string{"A": revA, "B": revB}[parts[1]]
		out = append(out, mkPod(ord, rev, parts[2]))
	}
	return out
}

func TestComputePlan(t *testing.T) {
	same := revisions{current: revA, update: revA}
	update := revisions{current: revA, update: revB}
	tests := []struct {
		name     string
		set      *api.StatefulSet
		pods     []*api.Pod
		rev      revisions
		want     []string // actions as "create 0", "delete 2"
		wantRevs []string // create revisions, when checked
		wait     string   // substring of Plan.Wait; "" = nothing blocks
		requeue  time.Duration
	}{
		// OrderedReady scale-up.
		{name: "ordered: empty set creates web-0 only", set: testSet(3), rev: same,
			want: []string{"create 0"}, wait: "web-0 to be created"},
		{name: "ordered: waits for pending web-0", set: testSet(3), rev: same,
			pods: pods("0:A:pending"), wait: "web-0 to be Running and Ready"},
		{name: "ordered: waits for running but not ready web-0", set: testSet(3), rev: same,
			pods: pods("0:A:running"), wait: "web-0 to be Running and Ready"},
		{name: "ordered: web-0 ready creates web-1", set: testSet(3), rev: same,
			pods: pods("0:A:ready"), want: []string{"create 1"}, wait: "web-1 to be created"},
		{name: "ordered: all ready, nothing to do", set: testSet(3), rev: same,
			pods: pods("0:A:ready", "1:A:ready", "2:A:ready")},
		{name: "ordered: a gap is filled lowest first", set: testSet(3), rev: same,
			pods: pods("0:A:ready", "2:A:ready"), want: []string{"create 1"}, wait: "web-1"},
		{name: "ordered: deleted web-0 is recreated before anything else", set: testSet(3), rev: same,
			pods: pods("1:A:ready", "2:A:ready"), want: []string{"create 0"}},
		{name: "ordered: terminating web-1 blocks", set: testSet(3), rev: same,
			pods: pods("0:A:ready", "1:A:terminating", "2:A:ready"), wait: "web-1 to terminate"},
		{name: "ordered: start ordinal", set: testSet(2, startAt(5)), rev: same,
			pods: pods("5:A:ready"), want: []string{"create 6"}},
		{name: "ordered: minReadySeconds not yet passed waits and requeues", set: testSet(2, minReady(30)), rev: same,
			pods: pods("0:A:readyfor:10"), wait: "available", requeue: 20 * time.Second},
		{name: "ordered: minReadySeconds passed goes on", set: testSet(2, minReady(30)), rev: same,
			pods: pods("0:A:readyfor:31"), want: []string{"create 1"}},

		// Parallel scale-up.
		{name: "parallel: empty set creates all", set: testSet(3, parallel), rev: same,
			want: []string{"create 0", "create 1", "create 2"}},
		{name: "parallel: does not wait for readiness", set: testSet(3, parallel), rev: same,
			pods: pods("0:A:pending"), want: []string{"create 1", "create 2"}},

		// Failed pods.
		{name: "ordered: failed web-1 is deleted and waited for", set: testSet(3), rev: same,
			pods: pods("0:A:ready", "1:A:failed", "2:A:ready"), want: []string{"delete 1"}, wait: "web-1 (Failed) to be deleted"},
		{name: "ordered: succeeded web-0 is replaced too", set: testSet(1), rev: same,
			pods: pods("0:A:succeeded"), want: []string{"delete 0"}},
		{name: "ordered: failed pod below an unready one waits for the lower one", set: testSet(3), rev: same,
			pods: pods("0:A:pending", "1:A:failed"), wait: "web-0 to be Running and Ready"},
		{name: "parallel: failed pods deleted, missing created, together", set: testSet(3, parallel), rev: same,
			pods: pods("0:A:failed", "2:A:failed"), want: []string{"delete 0", "create 1", "delete 2"}},

		// Scale-down.
		{name: "ordered: scale 3 to 1 deletes web-2 first", set: testSet(1), rev: same,
			pods: pods("0:A:ready", "1:A:ready", "2:A:ready"), want: []string{"delete 2"}, wait: "web-2 to terminate"},
		{name: "ordered: scale-down waits for web-2 to go", set: testSet(1), rev: same,
			pods: pods("0:A:ready", "1:A:ready", "2:A:terminating"), wait: "web-2 to terminate"},
		{name: "ordered: then deletes web-1", set: testSet(1), rev: same,
			pods: pods("0:A:ready", "1:A:ready"), want: []string{"delete 1"}},
		{name: "ordered: scale-down waits for replicas to be ready", set: testSet(1), rev: same,
			pods: pods("0:A:running", "1:A:ready"), wait: "web-0 to be Running and Ready"},
		{name: "ordered: unhealthy highest condemned pod is the first unhealthy: deleted", set: testSet(1), rev: same,
			pods: pods("0:A:ready", "1:A:ready", "2:A:running"), want: []string{"delete 2"}},
		{name: "ordered: healthy condemned pod above an unhealthy one is deleted", set: testSet(1), rev: same,
			pods: pods("0:A:ready", "1:A:running", "2:A:ready"), want: []string{"delete 2"}},
		{name: "ordered: unhealthy condemned pod that is not the first unhealthy blocks", set: testSet(1), rev: same,
			pods: pods("0:A:ready", "1:A:running", "2:A:running"), wait: "web-2 to be Running and Ready before scaling it down"},
		{name: "ordered: scale to zero", set: testSet(0), rev: same,
			pods: pods("0:A:ready", "1:A:ready"), want: []string{"delete 1"}},
		{name: "parallel: scale-down deletes all condemned at once", set: testSet(1, parallel), rev: same,
			pods: pods("0:A:ready", "1:A:running", "2:A:ready", "3:A:terminating"), want: []string{"delete 2", "delete 1"}},
		{name: "ordered: scale-down before update", set: testSet(2), rev: update,
			pods: pods("0:A:ready", "1:A:ready", "2:A:ready"), want: []string{"delete 2"}},

		// Rolling update.
		{name: "rolling: highest ordinal replaced first", set: testSet(3), rev: update,
			pods: pods("0:A:ready", "1:A:ready", "2:A:ready"), want: []string{"delete 2"}, wait: "web-2 to be replaced"},
		{name: "rolling: waits for the replaced pod to terminate", set: testSet(3), rev: update,
			pods: pods("0:A:ready", "1:A:ready", "2:A:terminating"), wait: "web-2 to terminate"},
		{name: "rolling: recreates at the update revision", set: testSet(3), rev: update,
			pods: pods("0:A:ready", "1:A:ready"), want: []string{"create 2"}, wantRevs: []string{revB}},
		{name: "rolling: waits for the new pod to be ready", set: testSet(3), rev: update,
			pods: pods("0:A:ready", "1:A:ready", "2:B:running"), wait: "web-2 to be Running and Ready"},
		{name: "rolling: then the next one down", set: testSet(3), rev: update,
			pods: pods("0:A:ready", "1:A:ready", "2:B:ready"), want: []string{"delete 1"}},
		{name: "rolling: last one", set: testSet(3), rev: update,
			pods: pods("0:A:ready", "1:B:ready", "2:B:ready"), want: []string{"delete 0"}},
		{name: "rolling: done", set: testSet(3), rev: update,
			pods: pods("0:B:ready", "1:B:ready", "2:B:ready")},
		{name: "rolling: partition 2 updates web-2 only", set: testSet(3, partition(2)), rev: update,
			pods: pods("0:A:ready", "1:A:ready", "2:A:ready"), want: []string{"delete 2"}},
		{name: "rolling: partition 2 stops above it", set: testSet(3, partition(2)), rev: update,
			pods: pods("0:A:ready", "1:A:ready", "2:B:ready")},
		{name: "rolling: partition 1 goes on to web-1", set: testSet(3, partition(1)), rev: update,
			pods: pods("0:A:ready", "1:A:ready", "2:B:ready"), want: []string{"delete 1"}},
		{name: "rolling: below the partition a pod is recreated at the current revision", set: testSet(3, partition(2)), rev: update,
			pods: pods("1:A:ready", "2:B:ready"), want: []string{"create 0"}, wantRevs: []string{revA}},
		{name: "rolling: at the partition a pod is recreated at the update revision", set: testSet(3, partition(2)), rev: update,
			pods: pods("0:A:ready", "1:A:ready"), want: []string{"create 2"}, wantRevs: []string{revB}},
		{name: "rolling: partition beyond replicas updates nothing", set: testSet(3, partition(5)), rev: update,
			pods: pods("0:A:ready", "1:A:ready", "2:A:ready")},
		{name: "rolling: a pod of an older revision is replaced too", set: testSet(2), rev: update,
			pods: append(pods("0:B:ready"), mkPod(1, "web-old", "ready")), want: []string{"delete 1"}},
		{name: "rolling: unhealthy updated pod above blocks the update", set: testSet(3, parallel), rev: update,
			pods: pods("0:A:ready", "1:A:ready", "2:B:running"), wait: "web-2 to be Running and Ready"},
		{name: "rolling parallel: one at a time", set: testSet(3, parallel), rev: update,
			pods: pods("0:A:ready", "1:A:ready", "2:A:ready"), want: []string{"delete 2"}},
		{name: "rolling parallel: a pod being created blocks the update", set: testSet(3, parallel), rev: update,
			pods: pods("0:A:ready", "1:A:ready"), want: []string{"create 2"}, wait: "web-2 to be Running and Ready"},
		{name: "on delete: template change replaces nothing", set: testSet(3, onDelete), rev: update,
			pods: pods("0:A:ready", "1:A:ready", "2:A:ready")},
		{name: "on delete: a deleted pod comes back at the update revision", set: testSet(3, onDelete), rev: update,
			pods: pods("0:A:ready", "2:A:ready"), want: []string{"create 1"}, wantRevs: []string{revB}},

		// Pods that are not the set's members are ignored.
		{name: "pods with foreign names are ignored", set: testSet(1), rev: same,
			pods: append(pods("0:A:ready"), &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web-01"}}, &api.Pod{ObjectMeta: api.ObjectMeta{Name: "webx-1"}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := computePlan(tt.set, tt.pods, tt.rev, testNow)
			var got, gotRevs []string
			for _, a := range plan.Actions {
				got = append(got, a.String())
				if a.Op == OpCreate {
					gotRevs = append(gotRevs, a.Revision)
				}
				if a.Op == OpDelete && (a.Pod == nil || a.Pod.Name != podName("web", a.Ordinal)) {
					t.Errorf("%s: wrong pod %v", a, a.Pod)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("actions %v, want %v (wait %q)", got, tt.want, plan.Wait)
			}
			if tt.wantRevs != nil && strings.Join(gotRevs, ",") != strings.Join(tt.wantRevs, ",") {
				t.Errorf("create revisions %v, want %v", gotRevs, tt.wantRevs)
			}
			if tt.wait == "" && plan.Wait != "" && len(tt.want) == 0 {
				t.Errorf("waits for %q, want nothing to block", plan.Wait)
			}
			if tt.wait != "" && !strings.Contains(plan.Wait, tt.wait) {
				t.Errorf("wait %q, want it to mention %q", plan.Wait, tt.wait)
			}
			if plan.RequeueAfter != tt.requeue {
				t.Errorf("requeue after %v, want %v", plan.RequeueAfter, tt.requeue)
			}
		})
	}
}

func TestOrdinalOf(t *testing.T) {
	tests := []struct {
		pod  string
		want int
		ok   bool
	}{
		{"web-0", 0, true}, {"web-12", 12, true}, {"web-01", 0, false}, {"web-", 0, false},
		{"web", 0, false}, {"web-x", 0, false}, {"web--1", 0, false}, {"web-a-1", 0, false}, {"webs-1", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.pod, func(t *testing.T) {
			got, ok := ordinalOf("web", tt.pod)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ordinalOf(web, %q) = %d, %v; want %d, %v", tt.pod, got, ok, tt.want, tt.ok)
			}
		})
	}
}
