package api

import (
	"testing"
)

func validHPA() *HorizontalPodAutoscaler {
	return &HorizontalPodAutoscaler{
		ObjectMeta: ObjectMeta{Name: "php-apache", Namespace: "default"},
		Spec: HorizontalPodAutoscalerSpec{
			ScaleTargetRef: CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "php-apache"},
			MinReplicas:    ptrTo[int32](1), MaxReplicas: 10,
			Metrics: []MetricSpec{{Type: ResourceMetricSourceType, Resource: &ResourceMetricSource{
				Name: "cpu", Target: MetricTarget{Type: UtilizationMetricType, AverageUtilization: ptrTo[int32](50)},
			}}},
		},
	}
}

func TestValidateHorizontalPodAutoscaler(t *testing.T) {
	q := func(s string) *Quantity { v := Quantity(s); return &v }
	tests := []struct {
		name   string
		mutate func(*HorizontalPodAutoscaler)
		want   []string
	}{
		{name: "valid", mutate: func(*HorizontalPodAutoscaler) {}},
		{name: "minReplicas 0", mutate: func(h *HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptrTo[int32](0) },
			want: []string{"FieldValueInvalid spec.minReplicas"}},
		{name: "maxReplicas 0", mutate: func(h *HorizontalPodAutoscaler) { h.Spec.MaxReplicas = 0 },
			want: []string{"FieldValueInvalid spec.maxReplicas", "FieldValueInvalid spec.maxReplicas"}},
		{name: "max below min", mutate: func(h *HorizontalPodAutoscaler) { h.Spec.MinReplicas = ptrTo[int32](5); h.Spec.MaxReplicas = 4 },
			want: []string{"FieldValueInvalid spec.maxReplicas"}},
		{name: "no target kind or name", mutate: func(h *HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef = CrossVersionObjectReference{} },
			want: []string{"FieldValueRequired spec.scaleTargetRef.kind", "FieldValueRequired spec.scaleTargetRef.name"}},
		{name: "target name with a slash", mutate: func(h *HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.Name = "a/b" },
			want: []string{"FieldValueInvalid spec.scaleTargetRef.name"}},
		{name: "metric without type", mutate: func(h *HorizontalPodAutoscaler) { h.Spec.Metrics[0].Type = "" },
			want: []string{"FieldValueRequired spec.metrics[0].type"}},
		{name: "unknown metric type", mutate: func(h *HorizontalPodAutoscaler) { h.Spec.Metrics[0].Type = "Cpu" },
			want: []string{"FieldValueNotSupported spec.metrics[0].type"}},
		{name: "type without its source", mutate: func(h *HorizontalPodAutoscaler) { h.Spec.Metrics[0].Type = PodsMetricSourceType },
			want: []string{"FieldValueRequired spec.metrics[0]"}},
		{name: "two sources", mutate: func(h *HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Pods = &PodsMetricSource{Metric: MetricIdentifier{Name: "qps"}, Target: MetricTarget{Type: AverageValueMetricType, AverageValue: q("10")}}
		}, want: []string{"FieldValueForbidden spec.metrics[0]"}},
		{name: "resource without name", mutate: func(h *HorizontalPodAutoscaler) { h.Spec.Metrics[0].Resource.Name = "" },
			want: []string{"FieldValueRequired spec.metrics[0].resource.name"}},
		{name: "utilisation 0", mutate: func(h *HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target.AverageUtilization = ptrTo[int32](0)
		},
			want: []string{"FieldValueInvalid spec.metrics[0].resource.target.averageUtilization"}},
		{name: "resource without a target value", mutate: func(h *HorizontalPodAutoscaler) { h.Spec.Metrics[0].Resource.Target.AverageUtilization = nil },
			want: []string{"FieldValueRequired spec.metrics[0].resource.target.averageUtilization"}},
		{name: "resource with both targets", mutate: func(h *HorizontalPodAutoscaler) { h.Spec.Metrics[0].Resource.Target.AverageValue = q("100m") },
			want: []string{"FieldValueForbidden spec.metrics[0].resource.target.averageValue"}},
		{name: "unknown target type", mutate: func(h *HorizontalPodAutoscaler) { h.Spec.Metrics[0].Resource.Target.Type = "Percent" },
			want: []string{"FieldValueNotSupported spec.metrics[0].resource.target.type"}},
		{name: "negative averageValue", mutate: func(h *HorizontalPodAutoscaler) {
			h.Spec.Metrics[0].Resource.Target = MetricTarget{Type: AverageValueMetricType, AverageValue: q("-1")}
		}, want: []string{"FieldValueInvalid spec.metrics[0].resource.target.averageValue"}},
		{name: "memory average value", mutate: func(h *HorizontalPodAutoscaler) {
			h.Spec.Metrics = append(h.Spec.Metrics, MetricSpec{Type: ResourceMetricSourceType, Resource: &ResourceMetricSource{
				Name: "memory", Target: MetricTarget{Type: AverageValueMetricType, AverageValue: q("100Mi")}}})
		}},
		{name: "container resource without container", mutate: func(h *HorizontalPodAutoscaler) {
			h.Spec.Metrics[0] = MetricSpec{Type: ContainerResourceMetricSourceType, ContainerResource: &ContainerResourceMetricSource{
				Name: "cpu", Target: MetricTarget{Type: UtilizationMetricType, AverageUtilization: ptrTo[int32](60)}}}
		}, want: []string{"FieldValueRequired spec.metrics[0].containerResource.container"}},
		{name: "pods metric without averageValue", mutate: func(h *HorizontalPodAutoscaler) {
			h.Spec.Metrics[0] = MetricSpec{Type: PodsMetricSourceType, Pods: &PodsMetricSource{Metric: MetricIdentifier{Name: "qps"}, Target: MetricTarget{Type: ValueMetricType, Value: q("3")}}}
		}, want: []string{"FieldValueRequired spec.metrics[0].pods.target.averageValue"}},
		{name: "object metric", mutate: func(h *HorizontalPodAutoscaler) {
			h.Spec.Metrics[0] = MetricSpec{Type: ObjectMetricSourceType, Object: &ObjectMetricSource{
				DescribedObject: CrossVersionObjectReference{Kind: "Service", Name: "web"}, Metric: MetricIdentifier{Name: "requests"},
				Target: MetricTarget{Type: ValueMetricType, Value: q("10k")}}}
		}},
		{name: "behavior: window too long, bad policy", mutate: func(h *HorizontalPodAutoscaler) {
			h.Spec.Behavior = &HorizontalPodAutoscalerBehavior{ScaleDown: &HPAScalingRules{
				StabilizationWindowSeconds: ptrTo[int32](3601), SelectPolicy: ptrTo("Fastest"),
				Policies: []HPAScalingPolicy{{Type: "Nodes", Value: 0, PeriodSeconds: 1801}},
			}}
		}, want: []string{"FieldValueInvalid spec.behavior.scaleDown.stabilizationWindowSeconds", "FieldValueNotSupported spec.behavior.scaleDown.selectPolicy",
			"FieldValueNotSupported spec.behavior.scaleDown.policies[0].type", "FieldValueInvalid spec.behavior.scaleDown.policies[0].value",
			"FieldValueInvalid spec.behavior.scaleDown.policies[0].periodSeconds"}},
		{name: "behavior rules without policies", mutate: func(h *HorizontalPodAutoscaler) {
			h.Spec.Behavior = &HorizontalPodAutoscalerBehavior{ScaleUp: &HPAScalingRules{Policies: []HPAScalingPolicy{}}}
		}, want: []string{"FieldValueRequired spec.behavior.scaleUp.policies"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := validHPA()
			tc.mutate(h)
			checkErrs(t, ValidateHorizontalPodAutoscaler(h), tc.want...)
		})
	}
}

func TestDefaultHorizontalPodAutoscaler(t *testing.T) {
	h := &HorizontalPodAutoscaler{Spec: HorizontalPodAutoscalerSpec{
		ScaleTargetRef: CrossVersionObjectReference{Kind: "Deployment", Name: "web"}, MaxReplicas: 3,
		Behavior: &HorizontalPodAutoscalerBehavior{ScaleDown: &HPAScalingRules{StabilizationWindowSeconds: ptrTo[int32](60)}},
	}}
	DefaultHorizontalPodAutoscaler(h)
	if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas != 1 {
		t.Fatalf("minReplicas = %v, want 1", h.Spec.MinReplicas)
	}
	if len(h.Spec.Metrics) != 1 || h.Spec.Metrics[0].Resource == nil || h.Spec.Metrics[0].Resource.Name != "cpu" ||
		*h.Spec.Metrics[0].Resource.Target.AverageUtilization != 80 {
		t.Fatalf("metrics = %+v, want cpu at 80%%", h.Spec.Metrics)
	}
	up, down := h.Spec.Behavior.ScaleUp, h.Spec.Behavior.ScaleDown
	if *up.StabilizationWindowSeconds != 0 || *up.SelectPolicy != MaxChangePolicySelect || len(up.Policies) != 2 {
		t.Fatalf("scaleUp = %+v", up)
	}
	if *down.StabilizationWindowSeconds != 60 || len(down.Policies) != 1 || down.Policies[0].Type != PercentScalingPolicy {
		t.Fatalf("scaleDown = %+v (the set window must be kept)", down)
	}
	checkErrs(t, ValidateHorizontalPodAutoscaler(&HorizontalPodAutoscaler{ObjectMeta: ObjectMeta{Name: "a", Namespace: "default"}, Spec: h.Spec}))
}
