package kubectl

import (
	"testing"

	"github.com/skiff-dev/skiff/api"
)

func TestDaemonSetStatus(t *testing.T) {
	ds := func(gen, observed int64, desired, updated, available int32) *api.DaemonSet {
		return &api.DaemonSet{
			ObjectMeta: api.ObjectMeta{Name: "agent", Generation: gen},
			Spec:       api.DaemonSetSpec{UpdateStrategy: api.DaemonSetUpdateStrategy{Type: api.RollingUpdateDaemonSetStrategyType}},
			Status: api.DaemonSetStatus{ObservedGeneration: observed, DesiredNumberScheduled: desired,
				UpdatedNumberScheduled: updated, NumberAvailable: available},
		}
	}
	tests := []struct {
		d    *api.DaemonSet
		msg  string
		done bool
	}{
		{ds(2, 1, 3, 3, 3), "Waiting for daemon set spec update to be observed...\n", false},
		{ds(2, 2, 3, 1, 1), "Waiting for daemon set \"agent\" rollout to finish: 1 out of 3 new pods have been updated...\n", false},
		{ds(2, 2, 3, 3, 2), "Waiting for daemon set \"agent\" rollout to finish: 2 of 3 updated pods are available...\n", false},
		{ds(2, 2, 3, 3, 3), "daemon set \"agent\" successfully rolled out\n", true},
	}
	for _, tt := range tests {
		msg, done, err := daemonSetStatus(tt.d)
		if err != nil || msg != tt.msg || done != tt.done {
			t.Errorf("got %q %v %v, want %q %v", msg, done, err, tt.msg, tt.done)
		}
	}
	od := ds(1, 1, 1, 1, 1)
	od.Spec.UpdateStrategy.Type = api.OnDeleteDaemonSetStrategyType
	if _, _, err := daemonSetStatus(od); err == nil || err.Error() != "rollout status is only available for RollingUpdate strategy type" {
		t.Errorf("OnDelete: %v", err)
	}
}
