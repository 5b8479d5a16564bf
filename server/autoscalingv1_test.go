package server_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/server/servertest"
)

var resHPAs = api.Lookup(resources, "autoscaling/v2", "horizontalpodautoscalers")

// TestAutoscalingV1 serves autoscaling/v1 HorizontalPodAutoscalers from
// the stored autoscaling/v2 objects: targetCPUUtilizationPercentage is the
// CPU utilisation metric, everything else rides in the round-trip
// annotations on the way out and is taken back out on the way in, for
// create, get, list, watch, update, patch and bad input.
func TestAutoscalingV1(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	c := ts.Client()
	ctx := ctxT(t, 30*time.Second)
	hc := httpClient(t, ts.Bundle().CACertPEM)
	token := ts.Bundle().AdminToken
	base := ts.URL() + "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"

	// Discovery: v2 preferred, v1 served.
	var group struct {
		Versions         []struct{ Version string }
		PreferredVersion struct{ Version string }
	}
	if r := raw(t, hc, http.MethodGet, ts.URL()+"/apis/autoscaling", token, nil); r.code != 200 || json.Unmarshal(r.body, &group) != nil ||
		group.PreferredVersion.Version != "v2" || len(group.Versions) != 2 || group.Versions[0].Version != "v2" || group.Versions[1].Version != "v1" {
		t.Fatalf("autoscaling group: %d %s", r.code, r.body)
	}
	if r := raw(t, hc, http.MethodGet, ts.URL()+"/apis/autoscaling/v1", token, nil); r.code != 200 || !strings.Contains(string(r.body), `"name":"horizontalpodautoscalers"`) {
		t.Fatalf("autoscaling/v1 resources: %d %s", r.code, r.body)
	}

	rv0 := listRV(t, hc, base, token)
	body := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web","annotations":{"team":"a"}},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,"targetCPUUtilizationPercentage":50}}`
	r := raw(t, hc, http.MethodPost, base, token, []byte(body))
	if r.code != http.StatusCreated {
		t.Fatalf("create v1: %d %s", r.code, r.body)
	}
	created := decodeV1(t, r.body)
	if created.APIVersion != "autoscaling/v1" || created.Spec.TargetCPUUtilizationPercentage == nil ||
		*created.Spec.TargetCPUUtilizationPercentage != 50 || *created.Spec.MinReplicas != 1 ||
		len(created.Annotations) != 1 || created.Annotations["team"] != "a" {
		t.Fatalf("created: %s", r.body)
	}

	// Stored as v2: the CPU metric.
	var h api.HorizontalPodAutoscaler
	if err := c.Get(ctx, resHPAs, "default", "web", &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Spec.Metrics) != 1 || !cpuTarget(h.Spec.Metrics[0], 50) {
		t.Fatalf("v2 metrics %+v", h.Spec.Metrics)
	}

	// What v1 cannot hold: a memory metric, behavior, current metrics, conditions.
	mem := api.Quantity("200Mi")
	h.Spec.Metrics = append(h.Spec.Metrics, api.MetricSpec{Type: api.ResourceMetricSourceType,
		Resource: &api.ResourceMetricSource{Name: "memory", Target: api.MetricTarget{Type: api.AverageValueMetricType, AverageValue: &mem}}})
	window := int32(60)
	h.Spec.Behavior = &api.HorizontalPodAutoscalerBehavior{ScaleDown: &api.HPAScalingRules{StabilizationWindowSeconds: &window}}
	if err := c.Update(ctx, resHPAs, "default", &h); err != nil {
		t.Fatal(err)
	}
	used := api.Quantity("150Mi")
	h.Status = api.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 3,
		CurrentMetrics: []api.MetricStatus{
			{Type: api.ResourceMetricSourceType, Resource: &api.ResourceMetricStatus{Name: "cpu", Current: api.MetricValueStatus{AverageUtilization: ptr(int32(77))}}},
			{Type: api.ResourceMetricSourceType, Resource: &api.ResourceMetricStatus{Name: "memory", Current: api.MetricValueStatus{AverageValue: &used}}},
		},
		Conditions: []api.HorizontalPodAutoscalerCondition{{Type: api.HPAAbleToScale, Status: api.ConditionTrue, Reason: "ReadyForNewScale"}}}
	if err := c.UpdateStatus(ctx, resHPAs, "default", &h); err != nil {
		t.Fatal(err)
	}

	r = raw(t, hc, http.MethodGet, base+"/web", token, nil)
	got := decodeV1(t, r.body)
	if r.code != 200 || *got.Spec.TargetCPUUtilizationPercentage != 50 || got.Status.CurrentCPUUtilizationPercentage == nil ||
		*got.Status.CurrentCPUUtilizationPercentage != 77 || got.Status.DesiredReplicas != 3 {
		t.Fatalf("get v1: %d %s", r.code, r.body)
	}
	for key, want := range map[string]string{
		api.AnnotationHPAMetrics:        `"name":"memory","targetAverageValue":"200Mi"`,
		api.AnnotationHPACurrentMetrics: `"currentAverageValue":"150Mi"`,
		api.AnnotationHPAConditions:     `"reason":"ReadyForNewScale"`,
		api.AnnotationHPABehavior:       `"stabilizationWindowSeconds":60`,
	} {
		if !strings.Contains(got.Annotations[key], want) {
			t.Errorf("annotation %s = %q, want it to hold %s", key, got.Annotations[key], want)
		}
	}

	// A v1 client writes back what it read (annotations and all): nothing
	// is lost and the round-trip annotations are not stored.
	got.Spec.MaxReplicas = 8
	b, _ := json.Marshal(got)
	if r = raw(t, hc, http.MethodPut, base+"/web", token, b); r.code != 200 {
		t.Fatalf("update v1: %d %s", r.code, r.body)
	}
	h = api.HorizontalPodAutoscaler{}
	if err := c.Get(ctx, resHPAs, "default", "web", &h); err != nil {
		t.Fatal(err)
	}
	if h.Spec.MaxReplicas != 8 || len(h.Spec.Metrics) != 2 || !cpuTarget(h.Spec.Metrics[0], 50) ||
		h.Spec.Metrics[1].Resource == nil || h.Spec.Metrics[1].Resource.Name != "memory" ||
		h.Spec.Behavior == nil || h.Spec.Behavior.ScaleDown == nil || *h.Spec.Behavior.ScaleDown.StabilizationWindowSeconds != 60 ||
		len(h.Status.Conditions) != 1 || len(h.Annotations) != 1 {
		t.Fatalf("v2 after a v1 update: %+v", h)
	}

	// A merge patch of v1's field.
	if r = raw(t, hc, http.MethodPatch, base+"/web", token, []byte(`{"spec":{"targetCPUUtilizationPercentage":70}}`),
		"Content-Type: application/merge-patch+json"); r.code != 200 || *decodeV1(t, r.body).Spec.TargetCPUUtilizationPercentage != 70 {
		t.Fatalf("patch v1: %d %s", r.code, r.body)
	}
	h = api.HorizontalPodAutoscaler{}
	if err := c.Get(ctx, resHPAs, "default", "web", &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Spec.Metrics) != 2 || !cpuTarget(h.Spec.Metrics[0], 70) || h.Spec.Metrics[1].Resource.Name != "memory" {
		t.Fatalf("v2 metrics after the patch: %+v", h.Spec.Metrics)
	}

	// List and watch answer v1.
	r = raw(t, hc, http.MethodGet, base, token, nil)
	var list struct {
		APIVersion, Kind string
		Items            []api.HorizontalPodAutoscalerV1
	}
	if err := json.Unmarshal(r.body, &list); err != nil || list.APIVersion != "autoscaling/v1" || list.Kind != "HorizontalPodAutoscalerList" ||
		len(list.Items) != 1 || list.Items[0].APIVersion != "autoscaling/v1" || *list.Items[0].Spec.TargetCPUUtilizationPercentage != 70 {
		t.Fatalf("list v1: %d %s", r.code, r.body)
	}
	watchFirstV1(t, hc, base+"?watch=1&resourceVersion="+rv0, token)

	// Bad input: 422 naming the field, 400 for an unknown field, nothing stored.
	bad := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"bad"},
		"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":0}}`
	if r = raw(t, hc, http.MethodPost, base, token, []byte(bad)); r.code != http.StatusUnprocessableEntity || !strings.Contains(string(r.body), "spec.maxReplicas") {
		t.Errorf("maxReplicas 0: %d %s", r.code, r.body)
	}
	unknown := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"bad"},
		"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web"},"maxReplicas":2,"metrics":[]}}`
	if r = raw(t, hc, http.MethodPost, base+"?fieldValidation=Strict", token, []byte(unknown)); r.code != http.StatusBadRequest || !strings.Contains(string(r.body), "metrics") {
		t.Errorf("a v2 field in v1: %d %s", r.code, r.body)
	}
	if r = raw(t, hc, http.MethodGet, base+"/bad", token, nil); r.code != http.StatusNotFound {
		t.Errorf("bad HPA stored: %d %s", r.code, r.body)
	}
}

func decodeV1(t *testing.T, b []byte) *api.HorizontalPodAutoscalerV1 {
	t.Helper()
	var h api.HorizontalPodAutoscalerV1
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if h.Spec.MinReplicas == nil {
		h.Spec.MinReplicas = new(int32)
	}
	if h.Spec.TargetCPUUtilizationPercentage == nil {
		h.Spec.TargetCPUUtilizationPercentage = new(int32)
	}
	return &h
}

func cpuTarget(m api.MetricSpec, pct int32) bool {
	return m.Type == api.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == "cpu" &&
		m.Resource.Target.Type == api.UtilizationMetricType && m.Resource.Target.AverageUtilization != nil &&
		*m.Resource.Target.AverageUtilization == pct
}

func listRV(t *testing.T, hc *http.Client, url, token string) string {
	t.Helper()
	r := raw(t, hc, http.MethodGet, url, token, nil)
	var l struct {
		Metadata struct{ ResourceVersion string }
	}
	if err := json.Unmarshal(r.body, &l); err != nil || l.Metadata.ResourceVersion == "" {
		t.Fatalf("list: %d %s", r.code, r.body)
	}
	return l.Metadata.ResourceVersion
}

// watchFirstV1 reads the first event of a watch and checks it is the
// created HPA in autoscaling/v1.
func watchFirstV1(t *testing.T, hc *http.Client, url, token string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() {
		t.Fatalf("watch: %d, no event: %v", resp.StatusCode, sc.Err())
	}
	var ev struct {
		Type   string
		Object api.HorizontalPodAutoscalerV1
	}
	if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Type != "ADDED" || ev.Object.APIVersion != "autoscaling/v1" ||
		ev.Object.Spec.TargetCPUUtilizationPercentage == nil || *ev.Object.Spec.TargetCPUUtilizationPercentage != 50 {
		t.Fatalf("watch event: %v %s", err, sc.Bytes())
	}
}
