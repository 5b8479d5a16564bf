package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/fakeapi"
	"github.com/skiff-dev/skiff/scheduler"
)

// startFake runs a scheduler over informers of an in-memory API server
// holding namespace "sched" and the given nodes (in the caches before the
// first decision).
func startFake(t *testing.T, opts scheduler.Options, nodeList ...*api.Node) *fakeapi.Server {
	t.Helper()
	fake := fakeapi.New(resources)
	ctx, cancel := context.WithCancel(t.Context())
	if err := fake.Client().Create(ctx, nsRes, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "sched"}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodeList {
		if err := fake.Client().Create(ctx, nodesRes, "", n); err != nil {
			t.Fatal(err)
		}
	}
	pods := client.NewInformerFor(fake, podsRes, client.InformerOptions{})
	nodes := client.NewInformerFor(fake, nodesRes, client.InformerOptions{})
	s := scheduler.New(scheduler.Deps{Client: fake.Client(), Pods: pods, Nodes: nodes}, opts)
	var wg sync.WaitGroup
	wg.Go(func() { _ = pods.Run(ctx) })
	wg.Go(func() { _ = nodes.Run(ctx) })
	wg.Go(func() {
		if err := s.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return fake
}

func fakeNodeOf(t *testing.T, fake *fakeapi.Server, name string) string {
	t.Helper()
	var p api.Pod
	if err := fake.Get(context.Background(), podsRes, "sched", name, &p); err != nil {
		t.Fatal(err)
	}
	return p.Spec.NodeName
}

// TestFakeBindsAndSpreads: pending pods are bound to the Ready nodes, one
// per node while they are equally loaded; a not-Ready node gets none.
func TestFakeBindsAndSpreads(t *testing.T) {
	down := readyNode("down", "64", "64Gi", "110", nil)
	down.Status.Conditions[0].Status = api.ConditionFalse
	fake := startFake(t, scheduler.Options{},
		readyNode("a", "4", "8Gi", "110", nil), readyNode("b", "4", "8Gi", "110", nil), down)
	c := fake.Client()
	for i := range 4 {
		if err := c.Create(t.Context(), podsRes, "sched", newPod(fmt.Sprintf("p%d", i), "1", nil)); err != nil {
			t.Fatal(err)
		}
	}
	perNode := map[string]int{}
	fakeapi.Wait(t, "4 bound pods", func() bool {
		clear(perNode)
		for i := range 4 {
			if n := fakeNodeOf(t, fake, fmt.Sprintf("p%d", i)); n != "" {
				perNode[n]++
			}
		}
		return perNode["a"]+perNode["b"]+perNode["down"] == 4
	})
	if perNode["a"] != 2 || perNode["b"] != 2 {
		t.Fatalf("pods per node %v, want 2 on a and 2 on b", perNode)
	}
}

// TestFakeRetriesFailedBind: a refused binding is retried with back-off
// until it succeeds.
func TestFakeRetriesFailedBind(t *testing.T) {
	fake := startFake(t, scheduler.Options{RetryBase: time.Millisecond, RetryMax: 10 * time.Millisecond},
		readyNode("a", "4", "8Gi", "110", nil))
	var mu sync.Mutex
	attempts := 0
	fake.SetIntercept(func(a fakeapi.Action) error {
		if a.Subresource != "binding" {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		attempts++
		if attempts <= 2 {
			return errors.New("injected failure")
		}
		return nil
	})
	if err := fake.Client().Create(t.Context(), podsRes, "sched", newPod("p", "", nil)); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "p bound", func() bool { return fakeNodeOf(t, fake, "p") == "a" })
	mu.Lock()
	defer mu.Unlock()
	if attempts != 3 {
		t.Fatalf("%d binding attempts, want 3", attempts)
	}
}
