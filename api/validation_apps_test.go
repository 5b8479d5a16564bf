package api

import "testing"

func TestValidateDeployment(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Deployment)
		want   []string
	}{
		{name: "valid", mutate: func(*Deployment) {}},
		{name: "valid recreate", mutate: func(d *Deployment) {
			d.Spec.Strategy = DeploymentStrategy{Type: RecreateDeploymentStrategyType}
		}},
		{name: "valid numeric surge", mutate: func(d *Deployment) {
			d.Spec.Strategy.RollingUpdate = &RollingUpdateDeployment{MaxSurge: ptrTo(FromInt32(1)), MaxUnavailable: ptrTo(FromInt32(0))}
		}},
		{name: "valid matchExpressions", mutate: func(d *Deployment) {
			d.Spec.Selector = &LabelSelector{MatchExpressions: []LabelSelectorRequirement{
				{Key: "app", Operator: LabelSelectorOpIn, Values: []string{"web", "api"}},
				{Key: "canary", Operator: LabelSelectorOpDoesNotExist},
			}}
		}},
		{name: "valid zero replicas", mutate: func(d *Deployment) { d.Spec.Replicas = ptrTo[int32](0) }},

		{name: "negative replicas", mutate: func(d *Deployment) { d.Spec.Replicas = ptrTo[int32](-1) },
			want: []string{"FieldValueInvalid spec.replicas"}},
		{name: "missing selector", mutate: func(d *Deployment) { d.Spec.Selector = nil },
			want: []string{"FieldValueRequired spec.selector"}},
		{name: "empty selector", mutate: func(d *Deployment) { d.Spec.Selector = &LabelSelector{} },
			want: []string{"FieldValueInvalid spec.selector"}},
		{name: "selector does not match template", mutate: func(d *Deployment) {
			d.Spec.Selector = &LabelSelector{MatchLabels: map[string]string{"app": "api"}}
		}, want: []string{"FieldValueInvalid spec.template.metadata.labels"}},
		{name: "bad selector operator", mutate: func(d *Deployment) {
			d.Spec.Selector = &LabelSelector{MatchLabels: map[string]string{"app": "web"},
				MatchExpressions: []LabelSelectorRequirement{{Key: "tier", Operator: "Like", Values: []string{"x"}}}}
		}, want: []string{"FieldValueInvalid spec.selector.matchExpressions[0].operator", "FieldValueInvalid spec.template.metadata.labels"}},
		{name: "In without values", mutate: func(d *Deployment) {
			d.Spec.Selector.MatchExpressions = []LabelSelectorRequirement{{Key: "tier", Operator: LabelSelectorOpIn}}
		}, want: []string{"FieldValueRequired spec.selector.matchExpressions[0].values", "FieldValueInvalid spec.template.metadata.labels"}},
		{name: "Exists with values", mutate: func(d *Deployment) {
			d.Spec.Selector.MatchExpressions = []LabelSelectorRequirement{{Key: "app", Operator: LabelSelectorOpExists, Values: []string{"x"}}}
		}, want: []string{"FieldValueForbidden spec.selector.matchExpressions[0].values"}},
		{name: "bad template label", mutate: func(d *Deployment) { d.Spec.Template.Labels["tier"] = "-x" },
			want: []string{"FieldValueInvalid spec.template.metadata.labels[tier]"}},
		{name: "bad template container", mutate: func(d *Deployment) { d.Spec.Template.Spec.Containers[0].Image = "" },
			want: []string{"FieldValueRequired spec.template.spec.containers[0].image"}},
		{name: "template restartPolicy Never", mutate: func(d *Deployment) { d.Spec.Template.Spec.RestartPolicy = RestartPolicyNever },
			want: []string{"FieldValueNotSupported spec.template.spec.restartPolicy"}},
		{name: "template activeDeadlineSeconds", mutate: func(d *Deployment) { d.Spec.Template.Spec.ActiveDeadlineSeconds = ptrTo[int64](10) },
			want: []string{"FieldValueForbidden spec.template.spec.activeDeadlineSeconds"}},
		{name: "bad strategy type", mutate: func(d *Deployment) { d.Spec.Strategy.Type = "BlueGreen" },
			want: []string{"FieldValueNotSupported spec.strategy.type"}},
		{name: "recreate with rollingUpdate", mutate: func(d *Deployment) { d.Spec.Strategy.Type = RecreateDeploymentStrategyType },
			want: []string{"FieldValueForbidden spec.strategy.rollingUpdate"}},
		{name: "bad maxSurge percent", mutate: func(d *Deployment) { d.Spec.Strategy.RollingUpdate.MaxSurge = ptrTo(FromString("25")) },
			want: []string{"FieldValueInvalid spec.strategy.rollingUpdate.maxSurge"}},
		{name: "negative maxUnavailable", mutate: func(d *Deployment) { d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptrTo(FromInt32(-1)) },
			want: []string{"FieldValueInvalid spec.strategy.rollingUpdate.maxUnavailable"}},
		{name: "maxUnavailable over 100%", mutate: func(d *Deployment) { d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptrTo(FromString("150%")) },
			want: []string{"FieldValueInvalid spec.strategy.rollingUpdate.maxUnavailable"}},
		{name: "both zero", mutate: func(d *Deployment) {
			d.Spec.Strategy.RollingUpdate = &RollingUpdateDeployment{MaxSurge: ptrTo(FromInt32(0)), MaxUnavailable: ptrTo(FromString("0%"))}
		}, want: []string{"FieldValueInvalid spec.strategy.rollingUpdate.maxUnavailable"}},
		{name: "negative minReadySeconds", mutate: func(d *Deployment) { d.Spec.MinReadySeconds = -1 },
			want: []string{"FieldValueInvalid spec.minReadySeconds"}},
		{name: "negative revisionHistoryLimit", mutate: func(d *Deployment) { d.Spec.RevisionHistoryLimit = ptrTo[int32](-1) },
			want: []string{"FieldValueInvalid spec.revisionHistoryLimit"}},
		{name: "progress deadline not above minReady", mutate: func(d *Deployment) {
			d.Spec.MinReadySeconds = 600
		}, want: []string{"FieldValueInvalid spec.progressDeadlineSeconds"}},
		{name: "zero progress deadline", mutate: func(d *Deployment) { d.Spec.ProgressDeadlineSeconds = ptrTo[int32](0) },
			want: []string{"FieldValueInvalid spec.progressDeadlineSeconds", "FieldValueInvalid spec.progressDeadlineSeconds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := validDeployment()
			tt.mutate(d)
			checkErrs(t, ValidateDeployment(d), tt.want...)
		})
	}
}

func TestValidateDeploymentUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Deployment)
		want   []string
	}{
		{name: "scale and new image", mutate: func(d *Deployment) {
			d.Spec.Replicas = ptrTo[int32](5)
			d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
		}},
		{name: "selector is immutable", mutate: func(d *Deployment) {
			d.Spec.Selector = &LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "x"}}
			d.Spec.Template.Labels["tier"] = "x"
		}, want: []string{"FieldValueInvalid spec.selector"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validDeployment()
			d := validDeployment()
			tt.mutate(d)
			checkErrs(t, ValidateDeploymentUpdate(d, old), tt.want...)
		})
	}
}

func TestValidateDeploymentStatusUpdate(t *testing.T) {
	old := validDeployment()
	d := validDeployment()
	d.Status = DeploymentStatus{Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 3, ObservedGeneration: 1}
	checkErrs(t, ValidateDeploymentStatusUpdate(d, old))
	d.Status.AvailableReplicas = 4
	d.Status.UnavailableReplicas = -1
	checkErrs(t, ValidateDeploymentStatusUpdate(d, old),
		"FieldValueInvalid status.unavailableReplicas", "FieldValueInvalid status.availableReplicas", "FieldValueInvalid status.availableReplicas")
}

func TestValidateStatefulSet(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*StatefulSet)
		want   []string
	}{
		{name: "valid", mutate: func(*StatefulSet) {}},
		{name: "valid parallel ondelete", mutate: func(s *StatefulSet) {
			s.Spec.PodManagementPolicy = ParallelPodManagement
			s.Spec.UpdateStrategy = StatefulSetUpdateStrategy{Type: OnDeleteStatefulSetStrategyType}
		}},
		{name: "name must be a label", mutate: func(s *StatefulSet) { s.Name = "db.main" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "bad serviceName", mutate: func(s *StatefulSet) { s.Spec.ServiceName = "DB" },
			want: []string{"FieldValueInvalid spec.serviceName"}},
		{name: "bad podManagementPolicy", mutate: func(s *StatefulSet) { s.Spec.PodManagementPolicy = "Random" },
			want: []string{"FieldValueInvalid spec.podManagementPolicy"}},
		{name: "missing podManagementPolicy", mutate: func(s *StatefulSet) { s.Spec.PodManagementPolicy = "" },
			want: []string{"FieldValueRequired spec.podManagementPolicy"}},
		{name: "bad update strategy", mutate: func(s *StatefulSet) { s.Spec.UpdateStrategy.Type = "Blue" },
			want: []string{"FieldValueInvalid spec.updateStrategy"}},
		{name: "OnDelete with rollingUpdate", mutate: func(s *StatefulSet) { s.Spec.UpdateStrategy.Type = OnDeleteStatefulSetStrategyType },
			want: []string{"FieldValueInvalid spec.updateStrategy.rollingUpdate"}},
		{name: "negative partition", mutate: func(s *StatefulSet) { s.Spec.UpdateStrategy.RollingUpdate.Partition = ptrTo[int32](-1) },
			want: []string{"FieldValueInvalid spec.updateStrategy.rollingUpdate.partition"}},
		{name: "negative replicas", mutate: func(s *StatefulSet) { s.Spec.Replicas = ptrTo[int32](-2) },
			want: []string{"FieldValueInvalid spec.replicas"}},
		{name: "missing selector", mutate: func(s *StatefulSet) { s.Spec.Selector = nil },
			want: []string{"FieldValueRequired spec.selector"}},
		{name: "selector mismatch", mutate: func(s *StatefulSet) { s.Spec.Template.Labels = map[string]string{"app": "x"} },
			want: []string{"FieldValueInvalid spec.template.metadata.labels"}},
		{name: "restartPolicy OnFailure", mutate: func(s *StatefulSet) { s.Spec.Template.Spec.RestartPolicy = RestartPolicyOnFailure },
			want: []string{"FieldValueNotSupported spec.template.spec.restartPolicy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validStatefulSet()
			tt.mutate(s)
			checkErrs(t, ValidateStatefulSet(s), tt.want...)
		})
	}
}

func TestValidateStatefulSetUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*StatefulSet)
		want   []string
	}{
		{name: "scale and template", mutate: func(s *StatefulSet) {
			s.Spec.Replicas = ptrTo[int32](3)
			s.Spec.Template.Spec.Containers[0].Image = "postgres:17"
			s.Spec.MinReadySeconds = 5
		}},
		{name: "serviceName immutable", mutate: func(s *StatefulSet) { s.Spec.ServiceName = "db2" },
			want: []string{"FieldValueForbidden spec"}},
		{name: "selector immutable", mutate: func(s *StatefulSet) {
			s.Spec.Selector = &LabelSelector{MatchLabels: map[string]string{"app": "db", "x": "y"}}
			s.Spec.Template.Labels["x"] = "y"
		}, want: []string{"FieldValueForbidden spec"}},
		{name: "podManagementPolicy immutable", mutate: func(s *StatefulSet) { s.Spec.PodManagementPolicy = ParallelPodManagement },
			want: []string{"FieldValueForbidden spec"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validStatefulSet()
			s := validStatefulSet()
			tt.mutate(s)
			checkErrs(t, ValidateStatefulSetUpdate(s, old), tt.want...)
		})
	}
}

func TestValidateStatefulSetStatusUpdate(t *testing.T) {
	old := validStatefulSet()
	s := validStatefulSet()
	s.Status = StatefulSetStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, CurrentReplicas: 2, UpdatedReplicas: 2}
	checkErrs(t, ValidateStatefulSetStatusUpdate(s, old))
	s.Status.ReadyReplicas = 3
	checkErrs(t, ValidateStatefulSetStatusUpdate(s, old), "FieldValueInvalid status.readyReplicas")
}

func TestValidateScale(t *testing.T) {
	checkErrs(t, ValidateScale(&Scale{Spec: ScaleSpec{Replicas: 3}}))
	checkErrs(t, ValidateScale(&Scale{Spec: ScaleSpec{Replicas: -1}}), "FieldValueInvalid spec.replicas")
}
