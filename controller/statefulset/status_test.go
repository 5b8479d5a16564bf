package statefulset

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

func TestComputeStatus(t *testing.T) {
	same := revisions{current: revA, update: revA}
	update := revisions{current: revA, update: revB}
	tests := []struct {
		name    string
		set     *api.StatefulSet
		pods    []*api.Pod
		rev     revisions
		want    api.StatefulSetStatus
		requeue time.Duration
	}{
		{name: "no pods", set: testSet(3), rev: same,
			want: api.StatefulSetStatus{ObservedGeneration: 1, CurrentRevision: revA, UpdateRevision: revA}},
		{name: "coming up", set: testSet(3), rev: same, pods: pods("0:A:ready", "1:A:pending"),
			want: api.StatefulSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1,
				CurrentReplicas: 2, UpdatedReplicas: 2, CurrentRevision: revA, UpdateRevision: revA}},
		{name: "terminating pods count as replicas, not as current", set: testSet(1), rev: same, pods: pods("0:A:ready", "1:A:terminating"),
			want: api.StatefulSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
				CurrentReplicas: 1, UpdatedReplicas: 1, CurrentRevision: revA, UpdateRevision: revA}},
		{name: "mid rolling update", set: testSet(3), rev: update, pods: pods("0:A:ready", "1:A:ready", "2:B:running"),
			want: api.StatefulSetStatus{ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2,
				CurrentReplicas: 2, UpdatedReplicas: 1, CurrentRevision: revA, UpdateRevision: revB}},
		{name: "rolling update complete: current revision moves", set: testSet(2), rev: update, pods: pods("0:B:ready", "1:B:ready"),
			want: api.StatefulSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
				CurrentReplicas: 2, UpdatedReplicas: 2, CurrentRevision: revB, UpdateRevision: revB}},
		{name: "all updated but one not ready: not complete", set: testSet(2), rev: update, pods: pods("0:B:ready", "1:B:running"),
			want: api.StatefulSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1,
				CurrentReplicas: 0, UpdatedReplicas: 2, CurrentRevision: revA, UpdateRevision: revB}},
		{name: "minReadySeconds: ready but not yet available", set: testSet(2, minReady(60)), rev: same, pods: pods("0:A:readyfor:100", "1:A:readyfor:15"),
			want: api.StatefulSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 1,
				CurrentReplicas: 2, UpdatedReplicas: 2, CurrentRevision: revA, UpdateRevision: revA},
			requeue: 45 * time.Second},
		{name: "foreign names are not counted", set: testSet(1), rev: same,
			pods: append(pods("0:A:ready"), &api.Pod{ObjectMeta: api.ObjectMeta{Name: "other"}}),
			want: api.StatefulSetStatus{ObservedGeneration: 1, Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
				CurrentReplicas: 1, UpdatedReplicas: 1, CurrentRevision: revA, UpdateRevision: revA}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, requeue := computeStatus(tt.set, tt.pods, tt.rev, testNow)
			if !statusEqual(&got, &tt.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tt.want)
				t.Errorf("status\n got %s\nwant %s", g, w)
			}
			if requeue != tt.requeue {
				t.Errorf("requeue %v, want %v", requeue, tt.requeue)
			}
			// What the controller writes must pass the server's status validation.
			s := *tt.set
			s.Status = got
			if errs := api.ValidateStatefulSetStatusUpdate(&s, tt.set); len(errs) > 0 {
				t.Errorf("status does not validate: %v", errs)
			}
		})
	}
}

func TestStatusEqualSeesEveryField(t *testing.T) {
	base := api.StatefulSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 1}
	changed := base
	changed.ReadyReplicas = 0 // omitempty zero value must still differ
	if statusEqual(&base, &changed) {
		t.Fatal("statuses differing in readyReplicas compare equal")
	}
	same := base
	if !statusEqual(&base, &same) {
		t.Fatal("equal statuses compare different")
	}
}
