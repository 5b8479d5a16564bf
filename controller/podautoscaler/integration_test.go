package podautoscaler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver/apiextensions"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/podautoscaler"
	"github.com/skiff-dev/skiff/internal/fakeapi"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	res       = api.Resources()
	resPod    = api.Lookup(res, "v1", "pods")
	resDeploy = api.Lookup(res, "apps/v1", "deployments")
	resHPA    = api.Lookup(res, "autoscaling/v2", "horizontalpodautoscalers")
)

// fakeMetrics is a resource metrics API stand-in the test sets: every
// pod it is asked about reads cpu millicores (per container "app").
type fakeMetrics struct {
	mu  sync.Mutex
	cpu int64
}

func (f *fakeMetrics) set(v int64) { f.mu.Lock(); f.cpu = v; f.mu.Unlock() }

// podsMetrics answers for the pods of a live list.
type podsMetrics struct {
	*fakeMetrics
	c *client.Client
}

func (p podsMetrics) PodUsage(ctx context.Context, ns, selector string) (map[string]podautoscaler.PodUsage, error) {
	var l api.PodList
	if err := p.c.List(ctx, resPod, ns, client.ListOptions{LabelSelector: selector}, &l); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]podautoscaler.PodUsage{}
	for _, pod := range l.Items {
		out[pod.Name] = podautoscaler.PodUsage{Timestamp: time.Now(), Window: 15 * time.Second,
			Containers: map[string]map[string]int64{"app": {"cpu": p.cpu}}}
	}
	return out, nil
}

func deployment(replicas int32) *api.Deployment {
	return &api.Deployment{
		ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: api.DeploymentSpec{
			Replicas: &replicas,
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Image: "netexec",
					Resources: api.ResourceRequirements{Requests: api.ResourceList{"cpu": "100m"}}}}},
			},
		},
	}
}

func hpa(minR, maxR, target int32, behavior *api.HorizontalPodAutoscalerBehavior) *api.HorizontalPodAutoscaler {
	return &api.HorizontalPodAutoscaler{
		ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: api.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: api.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    &minR, MaxReplicas: maxR, Behavior: behavior,
			Metrics: []api.MetricSpec{{Type: api.ResourceMetricSourceType, Resource: &api.ResourceMetricSource{
				Name: "cpu", Target: api.MetricTarget{Type: api.UtilizationMetricType, AverageUtilization: &target}}}},
		},
	}
}

func replicas(t *testing.T, c *client.Client) int32 {
	t.Helper()
	var d api.Deployment
	if err := c.Get(t.Context(), resDeploy, "default", "web", &d); err != nil {
		t.Fatal(err)
	}
	return *d.Spec.Replicas
}

func getHPA(t *testing.T, c *client.Client) *api.HorizontalPodAutoscaler {
	t.Helper()
	var h api.HorizontalPodAutoscaler
	if err := c.Get(t.Context(), resHPA, "default", "web", &h); err != nil {
		t.Fatal(err)
	}
	return &h
}

func condition(h *api.HorizontalPodAutoscaler, typ string) api.HorizontalPodAutoscalerCondition {
	for _, c := range h.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return api.HorizontalPodAutoscalerCondition{}
}

// markRunning makes every pod of the Deployment Running and Ready, started
// ten minutes ago (a trusted cpu reading), through pods/status.
func markRunning(t *testing.T, c *client.Client) {
	t.Helper()
	var l api.PodList
	if err := c.List(t.Context(), resPod, "default", client.ListOptions{LabelSelector: "app=web"}, &l); err != nil {
		t.Fatal(err)
	}
	start := api.NewTime(time.Now().Add(-10 * time.Minute))
	for i := range l.Items {
		p := &l.Items[i]
		if p.Status.Phase == api.PodRunning {
			continue
		}
		p.Status.Phase, p.Status.StartTime = api.PodRunning, &start
		p.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: api.NewTime(start.Add(time.Minute))}}
		if err := c.UpdateStatus(t.Context(), resPod, "default", p); err != nil && !client.IsConflict(err) && !client.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}

// TestBuiltInControllerWithoutMetrics runs the server's own controller:
// below minReplicas the target is scaled up without metrics; within the
// bounds, the missing resource metrics API is reported as upstream does.
func TestBuiltInControllerWithoutMetrics(t *testing.T) {
	srv := servertest.Start(t, servertest.Options{})
	c := srv.Client()
	if err := c.Create(t.Context(), resDeploy, "default", deployment(1)); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(t.Context(), resHPA, "default", hpa(2, 4, 50, nil)); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "the Deployment scaled to minReplicas", func() bool {
		if replicas(t, c) == 2 {
			return true
		}
		t.Logf("status %+v", getHPA(t, c).Status)
		return false
	})
	fakeapi.Wait(t, "AbleToScale SucceededRescale", func() bool {
		h := getHPA(t, c)
		return condition(h, api.HPAAbleToScale).Reason == "SucceededRescale" && h.Status.LastScaleTime != nil && h.Status.DesiredReplicas == 2
	})
	// The next sync (15 s later) reads metrics, which no one serves.
	deadline := time.Now().Add(45 * time.Second)
	for {
		h := getHPA(t, c)
		sa := condition(h, api.HPAScalingActive)
		if sa.Reason == "FailedGetResourceMetric" && sa.Status == api.ConditionFalse {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ScalingActive = %+v, want False/FailedGetResourceMetric", sa)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := replicas(t, c); got != 2 {
		t.Fatalf("replicas %d after a metrics failure, want 2 kept", got)
	}
}

// TestScalesOnCPU runs a controller with a 100 ms period over a real
// server and a stand-in metrics API: twice the target doubles the pods,
// idle pods shrink them to minReplicas (no down-scale window).
func TestScalesOnCPU(t *testing.T) {
	srv := servertest.Start(t, servertest.Options{DisabledControllers: []string{podautoscaler.ControllerName}})
	c := srv.Client()
	m := podsMetrics{&fakeMetrics{cpu: 100}, c}
	hpas := client.NewInformerFor(c, resHPA, client.InformerOptions{})
	pods := client.NewInformerFor(c, resPod, client.InformerOptions{})
	ctl, err := podautoscaler.New(podautoscaler.Deps{Client: c, HPAs: hpas, Pods: pods, Metrics: m},
		podautoscaler.Options{SyncPeriod: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = hpas.Run(ctx) })
	wg.Go(func() { _ = pods.Run(ctx) })
	wg.Go(func() { _ = ctl.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	if err := c.Create(t.Context(), resDeploy, "default", deployment(2)); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "two pods", func() bool {
		var l api.PodList
		_ = c.List(t.Context(), resPod, "default", client.ListOptions{LabelSelector: "app=web"}, &l)
		return len(l.Items) == 2
	})
	markRunning(t, c)
	zero := int32(0)
	if err := c.Create(t.Context(), resHPA, "default", hpa(1, 6, 50, &api.HorizontalPodAutoscalerBehavior{
		ScaleDown: &api.HPAScalingRules{StabilizationWindowSeconds: &zero}})); err != nil {
		t.Fatal(err)
	}
	// 100m of 100m requested = 100 % against 50 %: 2 → 4.
	fakeapi.Wait(t, "scaled up to 4", func() bool { markRunning(t, c); return replicas(t, c) == 4 })
	fakeapi.Wait(t, "status reads 100 %", func() bool {
		h := getHPA(t, c)
		return len(h.Status.CurrentMetrics) == 1 && h.Status.CurrentMetrics[0].Resource != nil &&
			h.Status.CurrentMetrics[0].Resource.Current.AverageUtilization != nil && *h.Status.CurrentMetrics[0].Resource.Current.AverageUtilization == 100
	})
	// Within the tolerance (52 %/50 %) it stays.
	m.set(52)
	time.Sleep(500 * time.Millisecond)
	markRunning(t, c)
	if got := replicas(t, c); got != 4 {
		t.Fatalf("replicas %d within the tolerance, want 4", got)
	}
	m.set(5)
	fakeapi.Wait(t, "scaled down to minReplicas", func() bool { markRunning(t, c); return replicas(t, c) == 1 })
	h := getHPA(t, c)
	if sa := condition(h, api.HPAScalingActive); sa.Status != api.ConditionTrue || sa.Reason != "ValidMetricFound" {
		t.Fatalf("ScalingActive %+v", sa)
	}
}

// TestScalesCustomResource: the server's own controller resolves a
// custom kind through discovery and scales it through the /scale its
// definition declares; below minReplicas no metrics are needed.
func TestScalesCustomResource(t *testing.T) {
	srv := servertest.Start(t, servertest.Options{})
	c := srv.Client()
	var crd apiextensions.CustomResourceDefinition
	if err := json.Unmarshal([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"workers.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"workers","kind":"Worker"},
  "versions":[{"name":"v1","served":true,"storage":true,
   "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.selector"}},
   "schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`), &crd); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(t.Context(), apiextensions.CRDResource(apiextensions.Options{}), "", &crd); err != nil {
		t.Fatal(err)
	}
	info := apiextensions.ResourceInfos(&crd)[0]
	w := &apiextensions.Object{Content: map[string]any{"spec": map[string]any{"replicas": json.Number("1")}}}
	w.Name = "w"
	fakeapi.Wait(t, "the custom resource served", func() bool {
		return c.Create(t.Context(), info, "default", w) == nil
	})
	h := hpa(3, 5, 50, nil)
	h.Spec.ScaleTargetRef = api.CrossVersionObjectReference{APIVersion: "example.com/v1", Kind: "Worker", Name: "w"}
	if err := c.Create(t.Context(), resHPA, "default", h); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "the Worker scaled to minReplicas", func() bool {
		var got apiextensions.Object
		if err := c.Get(t.Context(), info, "default", "w", &got); err != nil {
			t.Fatal(err)
		}
		spec, _ := got.Content["spec"].(map[string]any)
		if fmt.Sprint(spec["replicas"]) == "3" {
			return true
		}
		t.Logf("worker spec %v, autoscaler status %+v", spec, getHPA(t, c).Status)
		return false
	})
	// A kind discovery does not list is reported, as upstream reports it.
	bad := hpa(1, 2, 50, nil)
	bad.Name = "bad"
	bad.Spec.ScaleTargetRef = api.CrossVersionObjectReference{APIVersion: "example.com/v1", Kind: "Missing", Name: "m"}
	if err := c.Create(t.Context(), resHPA, "default", bad); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "AbleToScale FailedGetScale on the unknown kind", func() bool {
		var got api.HorizontalPodAutoscaler
		if err := c.Get(t.Context(), resHPA, "default", "bad", &got); err != nil {
			t.Fatal(err)
		}
		a := condition(&got, api.HPAAbleToScale)
		return a.Status == api.ConditionFalse && a.Reason == "FailedGetScale" && strings.Contains(a.Message, `no matches for kind "Missing"`)
	})
}
