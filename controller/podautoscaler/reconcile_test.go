package podautoscaler

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func i32(v int32) *int32 { return &v }

func hpa(minR, maxR int32, target int32) *api.HorizontalPodAutoscaler {
	return &api.HorizontalPodAutoscaler{
		ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default", Generation: 1},
		Spec: api.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: api.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    i32(minR), MaxReplicas: maxR,
			Metrics: []api.MetricSpec{{Type: api.ResourceMetricSourceType, Resource: &api.ResourceMetricSource{
				Name: "cpu", Target: api.MetricTarget{Type: api.UtilizationMetricType, AverageUtilization: i32(target)}}}},
		},
	}
}

// pod is a Running, Ready pod started 10 minutes ago with one container
// requesting 100m cpu.
func pod(name string) *api.Pod {
	start := api.NewTime(now.Add(-10 * time.Minute))
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Resources: api.ResourceRequirements{
			Requests: api.ResourceList{"cpu": "100m"}}}}},
		Status: api.PodStatus{Phase: api.PodRunning, StartTime: &start, Conditions: []api.PodCondition{{
			Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: api.NewTime(now.Add(-9 * time.Minute))}}},
	}
}

func pending(name string) *api.Pod {
	p := pod(name)
	p.Status = api.PodStatus{Phase: api.PodPending}
	return p
}

// usage gives each named pod a cpu reading in millicores.
func usage(m map[string]int64) map[string]PodUsage {
	out := map[string]PodUsage{}
	for name, v := range m {
		out[name] = PodUsage{Timestamp: now.Add(-5 * time.Second), Window: 15 * time.Second,
			Containers: map[string]map[string]int64{"app": {"cpu": v}}}
	}
	return out
}

func cond(p Plan, typ string) api.HorizontalPodAutoscalerCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return api.HorizontalPodAutoscalerCondition{}
}

func TestReconcile(t *testing.T) {
	pods3 := []*api.Pod{pod("a"), pod("b"), pod("c")}
	tests := []struct {
		name        string
		in          Input
		wantDesired int32
		wantRescale bool
		// wantConds are "Type=Status/Reason".
		wantConds  []string
		wantEvent  string
		wantReason string
	}{
		{
			name: "twice the target doubles the pods",
			in: Input{HPA: hpa(1, 10, 50), Current: 2, Pods: []*api.Pod{pod("a"), pod("b")},
				Usage: usage(map[string]int64{"a": 100, "b": 100})},
			wantDesired: 4, wantRescale: true,
			wantConds:  []string{"AbleToScale=True/ReadyForNewScale", "ScalingActive=True/ValidMetricFound", "ScalingLimited=False/DesiredWithinRange"},
			wantReason: "cpu resource utilization (percentage of request) above target",
		},
		{
			name: "within the tolerance nothing changes",
			in: Input{HPA: hpa(1, 10, 50), Current: 2, Pods: []*api.Pod{pod("a"), pod("b")},
				Usage: usage(map[string]int64{"a": 52, "b": 53})},
			wantDesired: 2, wantConds: []string{"ScalingActive=True/ValidMetricFound", "ScalingLimited=False/DesiredWithinRange"},
		},
		{
			name: "the default scale-up limit is max(2 x current, 4)",
			in: Input{HPA: hpa(1, 100, 10), Current: 3, Pods: pods3,
				Usage: usage(map[string]int64{"a": 100, "b": 100, "c": 100})},
			wantDesired: 6, wantRescale: true, wantConds: []string{"ScalingLimited=True/ScaleUpLimit"},
		},
		{
			name: "maxReplicas caps",
			in: Input{HPA: hpa(1, 5, 10), Current: 3, Pods: pods3,
				Usage: usage(map[string]int64{"a": 100, "b": 100, "c": 100})},
			wantDesired: 5, wantRescale: true, wantConds: []string{"ScalingLimited=True/TooManyReplicas"},
		},
		{
			name: "a scale down waits for the 5-minute window's highest recommendation",
			in: Input{HPA: hpa(1, 10, 50), Current: 3, Pods: pods3, Usage: usage(map[string]int64{"a": 10, "b": 10, "c": 10}),
				History: History{Recommendations: []recommendation{{now.Add(-time.Minute), 3}}}},
			wantDesired: 3, wantConds: []string{"AbleToScale=True/ScaleDownStabilized"},
		},
		{
			name: "a scale down after the window",
			in: Input{HPA: hpa(1, 10, 50), Current: 3, Pods: pods3, Usage: usage(map[string]int64{"a": 10, "b": 10, "c": 10}),
				History: History{Recommendations: []recommendation{{now.Add(-6 * time.Minute), 3}}}},
			wantDesired: 1, wantRescale: true, wantReason: "All metrics below target",
		},
		{
			name:        "minReplicas floors",
			in:          Input{HPA: hpa(2, 10, 50), Current: 3, Pods: pods3, Usage: usage(map[string]int64{"a": 1, "b": 1, "c": 1})},
			wantDesired: 2, wantRescale: true, wantConds: []string{"ScalingLimited=True/TooFewReplicas"},
		},
		{
			name:        "no metrics API: nothing is scaled",
			in:          Input{HPA: hpa(1, 10, 50), Current: 2, Pods: []*api.Pod{pod("a"), pod("b")}, UsageErr: errors.New("the server could not find the requested resource (get pods.metrics.k8s.io)")},
			wantDesired: 2, wantConds: []string{"AbleToScale=True/SucceededGetScale", "ScalingActive=False/FailedGetResourceMetric"},
			wantEvent: "FailedComputeMetricsReplicas",
		},
		{
			name:        "below minReplicas scales up without metrics",
			in:          Input{HPA: hpa(3, 10, 50), Current: 1, UsageErr: errors.New("unavailable")},
			wantDesired: 3, wantRescale: true, wantReason: "Current number of replicas below Spec.MinReplicas",
		},
		{
			name:        "above maxReplicas scales down without metrics",
			in:          Input{HPA: hpa(1, 2, 50), Current: 5},
			wantDesired: 2, wantRescale: true, wantReason: "Current number of replicas above Spec.MaxReplicas",
		},
		{
			name:        "a target at zero is not scaled",
			in:          Input{HPA: hpa(1, 10, 50), Current: 0},
			wantDesired: 0, wantConds: []string{"ScalingActive=False/ScalingDisabled"},
		},
		{
			name: "a container without a cpu request makes the metric invalid",
			in: func() Input {
				p := pod("a")
				p.Spec.Containers[0].Resources.Requests = nil
				return Input{HPA: hpa(1, 10, 50), Current: 1, Pods: []*api.Pod{p}, Usage: usage(map[string]int64{"a": 100})}
			}(),
			wantDesired: 1, wantConds: []string{"ScalingActive=False/FailedGetResourceMetric"}, wantEvent: "FailedComputeMetricsReplicas",
		},
		{
			name: "missing readings count as the full request when scaling down",
			in:   Input{HPA: hpa(1, 10, 50), Current: 3, Pods: pods3, Usage: usage(map[string]int64{"a": 0, "b": 0})},
			// (0 + 0 + 100) / 300 = 33 % of 50 % → ceil(0.66 × 3) = 2.
			wantDesired: 2, wantRescale: true,
		},
		{
			name: "unready pods count as idle when scaling up",
			in: Input{HPA: hpa(1, 10, 50), Current: 3, Pods: []*api.Pod{pod("a"), pod("b"), pending("c")},
				Usage: usage(map[string]int64{"a": 100, "b": 100})},
			// (100 + 100 + 0) / 300 = 66 % of 50 % → ceil(1.33 × 3) = 4.
			wantDesired: 4, wantRescale: true,
		},
		{
			name: "a pods metric needs the custom metrics API",
			in: func() Input {
				h := hpa(1, 10, 50)
				v := api.Quantity("10")
				h.Spec.Metrics = []api.MetricSpec{{Type: api.PodsMetricSourceType, Pods: &api.PodsMetricSource{
					Metric: api.MetricIdentifier{Name: "qps"}, Target: api.MetricTarget{Type: api.AverageValueMetricType, AverageValue: &v}}}}
				return Input{HPA: h, Current: 2, Pods: []*api.Pod{pod("a")}}
			}(),
			wantDesired: 2, wantConds: []string{"ScalingActive=False/FailedGetPodsMetric"}, wantEvent: "FailedComputeMetricsReplicas",
		},
		{
			name: "an average value target",
			in: func() Input {
				h := hpa(1, 10, 50)
				v := api.Quantity("50m")
				h.Spec.Metrics[0].Resource.Target = api.MetricTarget{Type: api.AverageValueMetricType, AverageValue: &v}
				return Input{HPA: h, Current: 2, Pods: []*api.Pod{pod("a"), pod("b")}, Usage: usage(map[string]int64{"a": 150, "b": 150})}
			}(),
			wantDesired: 4, wantRescale: true, wantConds: []string{"ScalingLimited=True/ScaleUpLimit"},
		},
		{
			name: "behavior: one pod per minute, one already added",
			in: func() Input {
				h := hpa(1, 10, 50)
				h.Spec.Behavior = &api.HorizontalPodAutoscalerBehavior{ScaleUp: &api.HPAScalingRules{
					Policies: []api.HPAScalingPolicy{{Type: api.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}}}}
				return Input{HPA: h, Current: 2, Pods: []*api.Pod{pod("a"), pod("b")}, Usage: usage(map[string]int64{"a": 200, "b": 200}),
					History: History{ScaleUp: []scaleEvent{{now.Add(-30 * time.Second), 1}}}}
			}(),
			// The period started at 1 replica: at most 2, which is current.
			wantDesired: 2, wantConds: []string{"ScalingLimited=True/ScaleUpLimit"},
		},
		{
			name: "behavior: scale-down window of the highest recommendation",
			in: func() Input {
				h := hpa(1, 10, 50)
				h.Spec.Behavior = &api.HorizontalPodAutoscalerBehavior{ScaleDown: &api.HPAScalingRules{StabilizationWindowSeconds: i32(60)}}
				return Input{HPA: h, Current: 3, Pods: pods3, Usage: usage(map[string]int64{"a": 10, "b": 10, "c": 10}),
					History: History{Recommendations: []recommendation{{now.Add(-30 * time.Second), 2}, {now.Add(-2 * time.Minute), 3}}}}
			}(),
			wantDesired: 2, wantRescale: true, wantConds: []string{"AbleToScale=True/ScaleDownStabilized"},
		},
		{
			name: "behavior: scale down disabled",
			in: func() Input {
				h := hpa(1, 10, 50)
				h.Spec.Behavior = &api.HorizontalPodAutoscalerBehavior{ScaleDown: &api.HPAScalingRules{
					StabilizationWindowSeconds: i32(0), SelectPolicy: new(string)}}
				*h.Spec.Behavior.ScaleDown.SelectPolicy = api.DisabledPolicySelect
				return Input{HPA: h, Current: 3, Pods: pods3, Usage: usage(map[string]int64{"a": 10, "b": 10, "c": 10})}
			}(),
			wantDesired: 3, wantConds: []string{"ScalingLimited=True/ScaleDownLimit"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Now = now
			p := Reconcile(tc.in)
			if p.Desired != tc.wantDesired || p.Rescale != tc.wantRescale {
				t.Fatalf("desired %d rescale %v, want %d %v; conditions %+v", p.Desired, p.Rescale, tc.wantDesired, tc.wantRescale, p.Status.Conditions)
			}
			if p.Status.DesiredReplicas != tc.wantDesired || p.Status.CurrentReplicas != tc.in.Current {
				t.Fatalf("status %+v", p.Status)
			}
			for _, w := range tc.wantConds {
				typ, rest, _ := strings.Cut(w, "=")
				st, reason, _ := strings.Cut(rest, "/")
				c := cond(p, typ)
				if string(c.Status) != st || c.Reason != reason {
					t.Errorf("%s = %s/%s (%s), want %s/%s", typ, c.Status, c.Reason, c.Message, st, reason)
				}
			}
			if tc.wantEvent != "" && (len(p.Events) != 1 || p.Events[0].Reason != tc.wantEvent) {
				t.Errorf("events %+v, want %s", p.Events, tc.wantEvent)
			}
			if tc.wantEvent == "" && len(p.Events) != 0 {
				t.Errorf("unexpected events %+v", p.Events)
			}
			if tc.wantReason != "" && p.Reason != tc.wantReason {
				t.Errorf("reason %q, want %q", p.Reason, tc.wantReason)
			}
		})
	}
}

func TestReconcileRecordsTheReading(t *testing.T) {
	p := Reconcile(Input{HPA: hpa(1, 10, 50), Current: 2, Pods: []*api.Pod{pod("a"), pod("b")},
		Usage: usage(map[string]int64{"a": 30, "b": 20}), Now: now})
	if len(p.Status.CurrentMetrics) != 1 || p.Status.CurrentMetrics[0].Resource == nil {
		t.Fatalf("currentMetrics %+v", p.Status.CurrentMetrics)
	}
	cur := p.Status.CurrentMetrics[0].Resource.Current
	if *cur.AverageUtilization != 25 || *cur.AverageValue != "25m" {
		t.Fatalf("current %+v: want 25%% and 25m", cur)
	}
	if len(p.History.Recommendations) != 1 || p.History.Recommendations[0].Replicas != 1 {
		t.Fatalf("history %+v: the proposal (1) must be recorded", p.History)
	}
}

func TestRecordRescale(t *testing.T) {
	b := &api.HorizontalPodAutoscalerBehavior{}
	h := recordRescale(History{ScaleUp: []scaleEvent{{now.Add(-time.Hour), 3}}}, b, 2, 5, now)
	if len(h.ScaleUp) != 1 || h.ScaleUp[0].Change != 3 || !h.ScaleUp[0].At.Equal(now) {
		t.Fatalf("scaleUp %+v: the old event must go, the new one stay", h.ScaleUp)
	}
	h = recordRescale(h, b, 5, 1, now)
	if len(h.ScaleDown) != 1 || h.ScaleDown[0].Change != 4 {
		t.Fatalf("scaleDown %+v", h.ScaleDown)
	}
}
