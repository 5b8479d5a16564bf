package api

import "testing"

func validPodDisruptionBudget() *PodDisruptionBudget {
	return &PodDisruptionBudget{
		ObjectMeta: ObjectMeta{Name: "zk-pdb", Namespace: "default"},
		Spec: PodDisruptionBudgetSpec{
			Selector:       &LabelSelector{MatchLabels: map[string]string{"app": "zk"}},
			MaxUnavailable: ptrTo(FromInt32(1)),
		},
	}
}

func TestValidatePodDisruptionBudget(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*PodDisruptionBudget)
		want   []string
	}{
		{name: "valid", mutate: func(*PodDisruptionBudget) {}},
		{name: "valid minAvailable percent", mutate: func(p *PodDisruptionBudget) {
			p.Spec.MaxUnavailable, p.Spec.MinAvailable = nil, ptrTo(FromString("50%"))
		}},
		{name: "valid empty selector and policy", mutate: func(p *PodDisruptionBudget) {
			p.Spec.Selector = &LabelSelector{}
			p.Spec.UnhealthyPodEvictionPolicy = ptrTo(AlwaysAllowPolicy)
		}},
		{name: "valid nothing set", mutate: func(p *PodDisruptionBudget) { p.Spec = PodDisruptionBudgetSpec{} }},

		{name: "both set", mutate: func(p *PodDisruptionBudget) { p.Spec.MinAvailable = ptrTo(FromInt32(2)) },
			want: []string{"FieldValueInvalid spec"}},
		{name: "negative minAvailable", mutate: func(p *PodDisruptionBudget) {
			p.Spec.MaxUnavailable, p.Spec.MinAvailable = nil, ptrTo(FromInt32(-1))
		}, want: []string{"FieldValueInvalid spec.minAvailable"}},
		{name: "maxUnavailable over 100%", mutate: func(p *PodDisruptionBudget) { p.Spec.MaxUnavailable = ptrTo(FromString("101%")) },
			want: []string{"FieldValueInvalid spec.maxUnavailable"}},
		{name: "maxUnavailable not a percent", mutate: func(p *PodDisruptionBudget) { p.Spec.MaxUnavailable = ptrTo(FromString("one")) },
			want: []string{"FieldValueInvalid spec.maxUnavailable"}},
		{name: "bad selector", mutate: func(p *PodDisruptionBudget) {
			p.Spec.Selector.MatchExpressions = []LabelSelectorRequirement{{Key: "a", Operator: "Near"}}
		}, want: []string{"FieldValueInvalid spec.selector.matchExpressions[0].operator"}},
		{name: "bad policy", mutate: func(p *PodDisruptionBudget) { p.Spec.UnhealthyPodEvictionPolicy = ptrTo("Sometimes") },
			want: []string{"FieldValueNotSupported spec.unhealthyPodEvictionPolicy"}},
		{name: "bad name", mutate: func(p *PodDisruptionBudget) { p.Name = "ZK" },
			want: []string{"FieldValueInvalid metadata.name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPodDisruptionBudget()
			tt.mutate(p)
			checkErrs(t, ValidatePodDisruptionBudget(p), tt.want...)
		})
	}
}

func TestValidatePodDisruptionBudgetStatusUpdate(t *testing.T) {
	old := validPodDisruptionBudget()
	p := validPodDisruptionBudget()
	p.Status = PodDisruptionBudgetStatus{DisruptionsAllowed: -1, CurrentHealthy: 2, Conditions: []Condition{{
		Type: DisruptionAllowedCondition, Status: ConditionTrue, Reason: SufficientPodsReason, LastTransitionTime: Now()}}}
	checkErrs(t, ValidatePodDisruptionBudgetStatusUpdate(p, old), "FieldValueInvalid status.disruptionsAllowed")
	p.Status.DisruptionsAllowed = 0
	p.Status.Conditions[0].Status = "Maybe"
	checkErrs(t, ValidatePodDisruptionBudgetStatusUpdate(p, old), "FieldValueNotSupported status.conditions[0].status")
}
