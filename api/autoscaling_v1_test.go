package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestHPAV1RoundTrip: every metric kind v2 has survives v2 -> v1 (through
// JSON, as on the wire) -> v2, the CPU utilisation one as
// targetCPUUtilizationPercentage and the rest in the annotations, which
// the way back drops.
func TestHPAV1RoundTrip(t *testing.T) {
	q := func(s string) *Quantity { v := Quantity(s); return &v }
	sel := &LabelSelector{MatchLabels: map[string]string{"queue": "jobs"}}
	ref := CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: "front"}
	in := &HorizontalPodAutoscaler{
		ObjectMeta: ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{"team": "a"}},
		Spec: HorizontalPodAutoscalerSpec{
			ScaleTargetRef: CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptrTo[int32](2), MaxReplicas: 9,
			Metrics: []MetricSpec{
				{Type: ResourceMetricSourceType, Resource: &ResourceMetricSource{Name: "cpu", Target: MetricTarget{Type: UtilizationMetricType, AverageUtilization: ptrTo[int32](60)}}},
				{Type: ResourceMetricSourceType, Resource: &ResourceMetricSource{Name: "memory", Target: MetricTarget{Type: AverageValueMetricType, AverageValue: q("300Mi")}}},
				{Type: ContainerResourceMetricSourceType, ContainerResource: &ContainerResourceMetricSource{Name: "cpu", Container: "app", Target: MetricTarget{Type: UtilizationMetricType, AverageUtilization: ptrTo[int32](70)}}},
				{Type: PodsMetricSourceType, Pods: &PodsMetricSource{Metric: MetricIdentifier{Name: "rps"}, Target: MetricTarget{Type: AverageValueMetricType, AverageValue: q("10")}}},
				{Type: ObjectMetricSourceType, Object: &ObjectMetricSource{DescribedObject: ref, Metric: MetricIdentifier{Name: "hits"}, Target: MetricTarget{Type: ValueMetricType, Value: q("1k")}}},
				{Type: ExternalMetricSourceType, External: &ExternalMetricSource{Metric: MetricIdentifier{Name: "depth", Selector: sel}, Target: MetricTarget{Type: AverageValueMetricType, AverageValue: q("30")}}},
			},
			Behavior: &HorizontalPodAutoscalerBehavior{ScaleUp: &HPAScalingRules{Policies: []HPAScalingPolicy{{Type: PodsScalingPolicy, Value: 4, PeriodSeconds: 15}}}},
		},
		Status: HorizontalPodAutoscalerStatus{
			CurrentReplicas: 3, DesiredReplicas: 4,
			CurrentMetrics: []MetricStatus{{Type: ResourceMetricSourceType, Resource: &ResourceMetricStatus{Name: "cpu", Current: MetricValueStatus{AverageUtilization: ptrTo[int32](88), AverageValue: q("440m")}}}},
			Conditions:     []HorizontalPodAutoscalerCondition{{Type: HPAScalingActive, Status: ConditionTrue, Reason: "ValidMetricFound"}},
		},
	}
	v1, err := HPAToV1(in)
	if err != nil {
		t.Fatal(err)
	}
	if v1.APIVersion != "autoscaling/v1" || *v1.Spec.TargetCPUUtilizationPercentage != 60 || *v1.Status.CurrentCPUUtilizationPercentage != 88 {
		t.Fatalf("v1 = %+v", v1)
	}
	if len(in.Annotations) != 1 {
		t.Fatalf("HPAToV1 changed its input's annotations: %v", in.Annotations)
	}
	wire, err := json.Marshal(v1)
	if err != nil {
		t.Fatal(err)
	}
	var back HorizontalPodAutoscalerV1
	if err := json.Unmarshal(wire, &back); err != nil {
		t.Fatal(err)
	}
	out, err := HPAFromV1(&back)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, in.Spec), mustJSON(t, out.Spec); a != b {
		t.Errorf("spec after a v1 round trip:\n got %s\nwant %s", b, a)
	}
	if a, b := mustJSON(t, in.Status), mustJSON(t, out.Status); a != b {
		t.Errorf("status after a v1 round trip:\n got %s\nwant %s", b, a)
	}
	if len(out.Annotations) != 1 || out.Annotations["team"] != "a" {
		t.Errorf("annotations after the round trip: %v", out.Annotations)
	}

	// A broken round-trip annotation is an error naming it.
	back.Annotations[AnnotationHPAMetrics] = "{"
	if _, err := HPAFromV1(&back); err == nil || !strings.Contains(err.Error(), AnnotationHPAMetrics) {
		t.Errorf("broken annotation: %v", err)
	}
}
