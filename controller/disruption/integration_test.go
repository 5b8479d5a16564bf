package disruption_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resources = api.Resources()
	podsRes   = api.Lookup(resources, "v1", "pods")
	nodesRes  = api.Lookup(resources, "v1", "nodes")
	pdbRes    = api.Lookup(resources, "policy/v1", "poddisruptionbudgets")
	deployRes = api.Lookup(resources, "apps/v1", "deployments")
)

const ns = "default"

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readyPod creates a pod of owner bound to node n1 and reports it
// Running and Ready (ready false: Running, not Ready), as a node would.
func readyPod(t *testing.T, c *client.Client, name string, owner *api.Deployment, ready bool) {
	t.Helper()
	yes := true
	p := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"app": "zk"},
			OwnerReferences: []api.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: owner.Name, UID: owner.UID, Controller: &yes}}},
		Spec: api.PodSpec{NodeName: "n1", Containers: []api.Container{{Name: "c", Image: "zk"}}},
	}
	ctx := context.Background()
	if err := c.Create(ctx, podsRes, ns, p); err != nil {
		t.Fatal(err)
	}
	status := api.ConditionFalse
	if ready {
		status = api.ConditionTrue
	}
	now := api.Now()
	p.Status = api.PodStatus{Phase: api.PodRunning, Conditions: []api.PodCondition{
		{Type: api.PodReady, Status: status, LastTransitionTime: now}}}
	if err := c.UpdateStatus(ctx, podsRes, ns, p); err != nil {
		t.Fatal(err)
	}
}

func evict(c *client.Client, name, apiVersion string) error {
	body := map[string]any{"apiVersion": apiVersion, "kind": "Eviction", "metadata": map[string]any{"name": name, "namespace": ns}}
	return c.Do(context.Background(), "POST", "/api/v1/namespaces/"+ns+"/pods/"+name+"/eviction", body, nil)
}

func getPDB(t *testing.T, c *client.Client) *api.PodDisruptionBudget {
	t.Helper()
	var p api.PodDisruptionBudget
	if err := c.Get(context.Background(), pdbRes, ns, "zk-pdb", &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

func getPod(c *client.Client, name string) (*api.Pod, error) {
	var p api.Pod
	err := c.Get(context.Background(), podsRes, ns, name, &p)
	return &p, err
}

// TestEvictionHonoursBudget runs the real server's disruption controller
// and the pods/eviction subresource against a budget of maxUnavailable 1
// over three ready pods of a Deployment of 3.
func TestEvictionHonoursBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("a real API server")
	}
	c := servertest.Start(t, servertest.Options{
		DisabledControllers: []string{"scheduler", "nodelifecycle", "deployment"},
	}).Client()
	ctx := context.Background()
	if err := c.Create(ctx, nodesRes, "", &api.Node{ObjectMeta: api.ObjectMeta{Name: "n1"}}); err != nil {
		t.Fatal(err)
	}
	three := int32(3)
	d := &api.Deployment{
		ObjectMeta: api.ObjectMeta{Name: "zk"},
		Spec: api.DeploymentSpec{Replicas: &three, Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "zk"}},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "zk"}},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "zk"}}}}},
	}
	if err := c.Create(ctx, deployRes, ns, d); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"zk-a", "zk-b", "zk-c"} {
		readyPod(t, c, n, d, true)
	}
	one := api.FromInt32(1)
	if err := c.Create(ctx, pdbRes, ns, &api.PodDisruptionBudget{
		ObjectMeta: api.ObjectMeta{Name: "zk-pdb"},
		Spec:       api.PodDisruptionBudgetSpec{Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "zk"}}, MaxUnavailable: &one},
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "budget status 3 expected, 2 desired, 1 allowed", func() bool {
		s := getPDB(t, c).Status
		return s.ExpectedPods == 3 && s.DesiredHealthy == 2 && s.CurrentHealthy == 3 && s.DisruptionsAllowed == 1 &&
			len(s.Conditions) == 1 && s.Conditions[0].Reason == api.SufficientPodsReason
	})

	// The first eviction is allowed: the pod starts terminating (it is on
	// a node) and the budget records it.
	if err := evict(c, "zk-a", "policy/v1"); err != nil {
		t.Fatalf("evict zk-a: %v", err)
	}
	p, err := getPod(c, "zk-a")
	if err != nil || p.DeletionTimestamp == nil {
		t.Fatalf("zk-a not terminating: %v", err)
	}
	if dt := api.GetPodCondition(&p.Status, "DisruptionTarget"); dt == nil || dt.Status != api.ConditionTrue ||
		dt.Reason != "EvictionByEvictionAPI" || dt.Message != "Eviction API: evicting" {
		t.Errorf("zk-a DisruptionTarget condition %+v", dt)
	}
	s := getPDB(t, c).Status
	if _, ok := s.DisruptedPods["zk-a"]; !ok && s.DisruptionsAllowed != 0 {
		t.Fatalf("budget after eviction: %+v", s)
	}

	// Once the controller has seen zk-a terminating, the second eviction is
	// refused with 429 and the budget's cause.
	waitFor(t, "the controller counts 2 healthy", func() bool {
		s := getPDB(t, c).Status
		return s.CurrentHealthy == 2 && s.DisruptionsAllowed == 0 && s.Conditions[0].Reason == api.InsufficientPodsReason
	})
	err = evict(c, "zk-b", "policy/v1beta1")
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status.Code != 429 || apiErr.Status.Reason != api.StatusReasonTooManyRequests ||
		apiErr.Status.Message != "Cannot evict pod as it would violate the pod's disruption budget." ||
		apiErr.Status.Details == nil || len(apiErr.Status.Details.Causes) != 1 || apiErr.Status.Details.Causes[0].Type != api.DisruptionBudgetCause {
		t.Fatalf("second eviction: %v (%+v)", err, apiErr)
	}
	if want := "The disruption budget zk-pdb needs 2 healthy pods and has 2 currently"; apiErr.Status.Details.Causes[0].Message != want {
		t.Errorf("cause %q, want %q", apiErr.Status.Details.Causes[0].Message, want)
	}
	if p, err := getPod(c, "zk-b"); err != nil || p.DeletionTimestamp != nil {
		t.Fatalf("zk-b was deleted: %v", err)
	}

	// A replacement that is Running but not Ready may be evicted while the
	// application is healthy (IfHealthyBudget): currentHealthy 2 >= 2.
	readyPod(t, c, "zk-d", d, false)
	waitFor(t, "budget sees zk-d", func() bool { s := getPDB(t, c).Status; return s.CurrentHealthy == 2 && s.DesiredHealthy == 2 })
	if err := evict(c, "zk-d", "policy/v1"); err != nil {
		t.Fatalf("evict unready zk-d: %v", err)
	}

	// Discovery lists pods/eviction as kube-apiserver does, so kubectl
	// drain evicts instead of deleting.
	var list struct {
		Resources []struct {
			Name, Group, Version, Kind string
			Verbs                      []string
		} `json:"resources"`
	}
	if err := c.Do(ctx, "GET", "/api/v1", nil, &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range list.Resources {
		if r.Name == "pods/eviction" {
			found = r.Group == "policy" && r.Version == "v1" && r.Kind == "Eviction" && len(r.Verbs) == 1 && r.Verbs[0] == "create"
		}
	}
	if !found {
		t.Errorf("discovery: pods/eviction missing or wrong: %+v", list.Resources)
	}

	// A second budget over the same pods: the eviction API refuses.
	if err := c.Create(ctx, pdbRes, ns, &api.PodDisruptionBudget{
		ObjectMeta: api.ObjectMeta{Name: "zk-pdb-2"},
		Spec:       api.PodDisruptionBudgetSpec{Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "zk"}}, MaxUnavailable: &one},
	}); err != nil {
		t.Fatal(err)
	}
	err = evict(c, "zk-b", "policy/v1")
	if !errors.As(err, &apiErr) || apiErr.Status.Code != 500 ||
		apiErr.Status.Message != "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support." {
		t.Fatalf("two budgets: %v", err)
	}

	// Bad bodies.
	err = c.Do(ctx, "POST", "/api/v1/namespaces/"+ns+"/pods/zk-b/eviction",
		map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": "zk-c"}}, nil)
	if !client.IsBadRequest(err) {
		t.Fatalf("mismatched name: %v", err)
	}
	if err := evict(c, "nope", "policy/v1"); !client.IsNotFound(err) {
		t.Fatalf("missing pod: %v", err)
	}
}
