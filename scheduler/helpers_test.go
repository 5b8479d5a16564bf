package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resources   = api.Resources()
	podsRes     = api.Lookup(resources, "v1", "pods")
	nodesRes    = api.Lookup(resources, "v1", "nodes")
	eventsRes   = api.Lookup(resources, "v1", "events")
	nsRes       = api.Lookup(resources, "v1", "namespaces")
	deployments = api.Lookup(resources, "apps/v1", "deployments")
)

// testLogger logs to stderr with -v and SKIFF_TEST_LOG=1, else nowhere.
func testLogger() *slog.Logger {
	if os.Getenv("SKIFF_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return nil
}

// startServer runs a real API server on bbolt over HTTPS on 127.0.0.1 with
// the built-in scheduler (and the controllers that would race the test)
// disabled.
func startServer(tb testing.TB, disabled ...string) *client.Client {
	tb.Helper()
	if testing.Short() {
		tb.Skip("a real API server; -short runs the tests on the fake API only")
	}
	ts := servertest.Start(tb, servertest.Options{
		DisabledControllers: append([]string{"scheduler", "nodelifecycle", "deployment", "statefulset"}, disabled...),
	})
	return ts.Client()
}

// informers starts pod and node informers until the test ends.
func informers(tb testing.TB, ctx context.Context, c *client.Client) (pods, nodes *client.Informer) {
	pods = client.NewInformer(c, podsRes, client.InformerOptions{})
	nodes = client.NewInformer(c, nodesRes, client.InformerOptions{})
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	tb.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	wg.Go(func() { _ = pods.Run(ctx) })
	wg.Go(func() { _ = nodes.Run(ctx) })
	return pods, nodes
}

func mustCreate(tb testing.TB, c *client.Client, info *api.ResourceInfo, ns string, obj api.Object) {
	tb.Helper()
	if err := c.Create(context.Background(), info, ns, obj); err != nil {
		tb.Fatalf("create %s %s: %v", info.Resource, obj.GetObjectMeta().Name, err)
	}
}

// readyNode is a Ready node with allocatable cpu, memory and pods.
func readyNode(name, cpu, mem, pods string, labels map[string]string) *api.Node {
	l := map[string]string{"kubernetes.io/hostname": name}
	for k, v := range labels {
		l[k] = v
	}
	now := api.Now()
	return &api.Node{
		ObjectMeta: api.ObjectMeta{Name: name, Labels: l},
		Status: api.NodeStatus{
			Capacity:    api.ResourceList{"cpu": api.Quantity(cpu), "memory": api.Quantity(mem), "pods": api.Quantity(pods)},
			Allocatable: api.ResourceList{"cpu": api.Quantity(cpu), "memory": api.Quantity(mem), "pods": api.Quantity(pods)},
			Conditions: []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: now, LastTransitionTime: now}},
		},
	}
}

// newPod is a pending pod; cpu "" requests nothing.
func newPod(name, cpu string, owner *api.Deployment) *api.Pod {
	p := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec:       api.PodSpec{Containers: []api.Container{{Name: "c", Image: "nginx"}}},
	}
	if cpu != "" {
		p.Spec.Containers[0].Resources.Requests = api.ResourceList{"cpu": api.Quantity(cpu)}
	}
	if owner != nil {
		t := true
		p.OwnerReferences = []api.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: owner.Name, UID: owner.UID, Controller: &t}}
	}
	return p
}

// newDeployment creates a Deployment to own test pods (its controller is
// disabled, so it creates nothing; the garbage collector sees a live owner).
func newDeployment(tb testing.TB, c *client.Client, ns, name string) *api.Deployment {
	zero := int32(0)
	d := &api.Deployment{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.DeploymentSpec{
			Replicas: &zero,
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	mustCreate(tb, c, deployments, ns, d)
	return d
}

// eventually polls cond every 20ms until it holds or timeout passes.
func eventually(tb testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s (last error: %v)", timeout, what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// apiRecorder writes core/v1 Events through the API, as client/record
// will (the scheduler only needs its EventRecorder interface).
type apiRecorder struct {
	c   *client.Client
	seq atomic.Int64
}

func (r *apiRecorder) Eventf(obj api.Object, eventType, reason, format string, args ...any) {
	m := obj.GetObjectMeta()
	now := api.Now()
	ev := &api.Event{
		ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("%s.%d", m.Name, r.seq.Add(1)), Namespace: m.Namespace},
		InvolvedObject: api.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: m.Namespace, Name: m.Name,
			UID: m.UID},
		Reason: reason, Message: fmt.Sprintf(format, args...), Type: eventType,
		Source:         api.EventSource{Component: "default-scheduler"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	_ = r.c.Create(context.Background(), eventsRes, m.Namespace, ev)
}
