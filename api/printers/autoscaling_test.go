package printers

import (
	"testing"

	"github.com/skiff-dev/skiff/api"
)

func TestHPAMetrics(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	q := func(s string) *api.Quantity { v := api.Quantity(s); return &v }
	cpu := api.MetricSpec{Type: api.ResourceMetricSourceType, Resource: &api.ResourceMetricSource{Name: "cpu",
		Target: api.MetricTarget{Type: api.UtilizationMetricType, AverageUtilization: i32(50)}}}
	mem := api.MetricSpec{Type: api.ResourceMetricSourceType, Resource: &api.ResourceMetricSource{Name: "memory",
		Target: api.MetricTarget{Type: api.AverageValueMetricType, AverageValue: q("100Mi")}}}
	pods := api.MetricSpec{Type: api.PodsMetricSourceType, Pods: &api.PodsMetricSource{Metric: api.MetricIdentifier{Name: "qps"},
		Target: api.MetricTarget{Type: api.AverageValueMetricType, AverageValue: q("10")}}}
	for _, tc := range []struct {
		name     string
		specs    []api.MetricSpec
		statuses []api.MetricStatus
		want     string
	}{
		{"none", nil, nil, "<none>"},
		{"cpu before a reading", []api.MetricSpec{cpu}, nil, "cpu: <unknown>/50%"},
		{"cpu read", []api.MetricSpec{cpu}, []api.MetricStatus{{Type: api.ResourceMetricSourceType,
			Resource: &api.ResourceMetricStatus{Name: "cpu", Current: api.MetricValueStatus{AverageUtilization: i32(12)}}}}, "cpu: 12%/50%"},
		{"memory value", []api.MetricSpec{cpu, mem}, nil, "cpu: <unknown>/50%, memory: <unknown>/100Mi"},
		{"three metrics", []api.MetricSpec{cpu, mem, pods}, nil, "cpu: <unknown>/50%, memory: <unknown>/100Mi + 1 more..."},
		{"pods", []api.MetricSpec{pods}, nil, "<unknown>/10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HPAMetrics(tc.specs, tc.statuses); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	h := &api.HorizontalPodAutoscaler{ObjectMeta: api.ObjectMeta{Name: "web"}, Spec: api.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: api.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}, MaxReplicas: 4, Metrics: []api.MetricSpec{cpu}},
		Status: api.HorizontalPodAutoscalerStatus{CurrentReplicas: 2}}
	cells := HorizontalPodAutoscalerCells(h, h.CreationTimestamp.Time)
	if cells[1] != "Deployment/web" || cells[3] != "<unset>" || cells[4] != int64(4) || cells[5] != int64(2) {
		t.Fatalf("cells = %v", cells)
	}
}
