package api

import "testing"

func validDaemonSet() *DaemonSet {
	d := &DaemonSet{
		ObjectMeta: ObjectMeta{Name: "agent", Namespace: "default"},
		Spec: DaemonSetSpec{
			Selector: &LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: PodTemplateSpec{
				ObjectMeta: ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec:       validPodSpec(),
			},
		},
	}
	DefaultDaemonSet(d)
	return d
}

func TestDefaultDaemonSet(t *testing.T) {
	d := validDaemonSet()
	ru := d.Spec.UpdateStrategy.RollingUpdate
	if d.Spec.UpdateStrategy.Type != RollingUpdateDaemonSetStrategyType || ru == nil ||
		ru.MaxUnavailable.String() != "1" || ru.MaxSurge.String() != "0" || *d.Spec.RevisionHistoryLimit != 10 {
		t.Fatalf("defaults: %+v %+v", d.Spec.UpdateStrategy, ru)
	}
	od := &DaemonSet{Spec: DaemonSetSpec{UpdateStrategy: DaemonSetUpdateStrategy{Type: OnDeleteDaemonSetStrategyType}}}
	DefaultDaemonSet(od)
	if od.Spec.UpdateStrategy.RollingUpdate != nil {
		t.Fatal("OnDelete got a rollingUpdate")
	}
}

func TestValidateDaemonSet(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*DaemonSet)
		want   []string
	}{
		{name: "valid", mutate: func(*DaemonSet) {}},
		{name: "valid OnDelete", mutate: func(d *DaemonSet) {
			d.Spec.UpdateStrategy = DaemonSetUpdateStrategy{Type: OnDeleteDaemonSetStrategyType}
		}},
		{name: "valid surge", mutate: func(d *DaemonSet) {
			d.Spec.UpdateStrategy.RollingUpdate = &RollingUpdateDaemonSet{MaxUnavailable: ptrTo(FromInt32(0)), MaxSurge: ptrTo(FromString("10%"))}
		}},
		{name: "name may be a subdomain", mutate: func(d *DaemonSet) { d.Name = "agent.v2" }},

		{name: "bad name", mutate: func(d *DaemonSet) { d.Name = "Agent" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "missing selector", mutate: func(d *DaemonSet) { d.Spec.Selector = nil },
			want: []string{"FieldValueRequired spec.selector"}},
		{name: "empty selector", mutate: func(d *DaemonSet) { d.Spec.Selector = &LabelSelector{} },
			want: []string{"FieldValueInvalid spec.selector"}},
		{name: "selector mismatch", mutate: func(d *DaemonSet) { d.Spec.Template.Labels = map[string]string{"app": "x"} },
			want: []string{"FieldValueInvalid spec.template.metadata.labels"}},
		{name: "restartPolicy Never", mutate: func(d *DaemonSet) { d.Spec.Template.Spec.RestartPolicy = RestartPolicyNever },
			want: []string{"FieldValueNotSupported spec.template.spec.restartPolicy"}},
		{name: "activeDeadlineSeconds", mutate: func(d *DaemonSet) { d.Spec.Template.Spec.ActiveDeadlineSeconds = ptrTo[int64](5) },
			want: []string{"FieldValueInvalid spec.template.spec.activeDeadlineSeconds"}},
		{name: "negative minReadySeconds", mutate: func(d *DaemonSet) { d.Spec.MinReadySeconds = -1 },
			want: []string{"FieldValueInvalid spec.minReadySeconds"}},
		{name: "negative revisionHistoryLimit", mutate: func(d *DaemonSet) { d.Spec.RevisionHistoryLimit = ptrTo[int32](-1) },
			want: []string{"FieldValueInvalid spec.revisionHistoryLimit"}},
		{name: "bad strategy", mutate: func(d *DaemonSet) { d.Spec.UpdateStrategy.Type = "Blue" },
			want: []string{"FieldValueNotSupported spec.updateStrategy"}},
		{name: "RollingUpdate without rollingUpdate", mutate: func(d *DaemonSet) { d.Spec.UpdateStrategy.RollingUpdate = nil },
			want: []string{"FieldValueRequired spec.updateStrategy.rollingUpdate"}},
		{name: "both zero", mutate: func(d *DaemonSet) { d.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptrTo(FromString("0%")) },
			want: []string{"FieldValueRequired spec.updateStrategy.rollingUpdate.maxUnavailable"}},
		{name: "both non-zero", mutate: func(d *DaemonSet) { d.Spec.UpdateStrategy.RollingUpdate.MaxSurge = ptrTo(FromInt32(1)) },
			want: []string{"FieldValueInvalid spec.updateStrategy.rollingUpdate.maxSurge"}},
		{name: "over 100%", mutate: func(d *DaemonSet) { d.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptrTo(FromString("150%")) },
			want: []string{"FieldValueInvalid spec.updateStrategy.rollingUpdate.maxUnavailable"}},
		{name: "negative maxUnavailable", mutate: func(d *DaemonSet) { d.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptrTo(FromInt32(-1)) },
			want: []string{"FieldValueInvalid spec.updateStrategy.rollingUpdate.maxUnavailable"}},
		{name: "bad percent", mutate: func(d *DaemonSet) { d.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptrTo(FromString("ten")) },
			want: []string{"FieldValueInvalid spec.updateStrategy.rollingUpdate.maxUnavailable", "FieldValueRequired spec.updateStrategy.rollingUpdate.maxUnavailable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := validDaemonSet()
			tt.mutate(d)
			checkErrs(t, ValidateDaemonSet(d), tt.want...)
		})
	}
}

func TestValidateDaemonSetUpdate(t *testing.T) {
	old := validDaemonSet()
	old.ResourceVersion = "1"
	d := validDaemonSet()
	d.ResourceVersion = "1"
	d.Spec.Template.Spec.Containers[0].Image = "agent:v2"
	checkErrs(t, ValidateDaemonSetUpdate(d, old))
	d.Spec.Selector = &LabelSelector{MatchLabels: map[string]string{"app": "agent", "v": "2"}}
	d.Spec.Template.Labels["v"] = "2"
	checkErrs(t, ValidateDaemonSetUpdate(d, old), "FieldValueInvalid spec.selector")
}

func TestValidateDaemonSetStatusUpdate(t *testing.T) {
	old := validDaemonSet()
	old.Status.CollisionCount = ptrTo[int32](2)
	d := validDaemonSet()
	d.Status = DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: -1, CollisionCount: ptrTo[int32](1)}
	checkErrs(t, ValidateDaemonSetStatusUpdate(d, old), "FieldValueInvalid status.numberReady", "FieldValueInvalid status.collisionCount")
}
