package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/fakeapi"
	"github.com/skiff-dev/skiff/scheduler"
)

// TestFakeQueueOrdersByPriority: pods pending before the scheduler starts
// are decided by spec.priority, highest first, then in arrival order: on a
// node with room for two pods, the two high-priority pods created last
// win over the earlier low-priority ones.
func TestFakeQueueOrdersByPriority(t *testing.T) {
	fake := fakeapi.New(resources)
	ctx, cancel := context.WithCancel(t.Context())
	c := fake.Client()
	if err := c.Create(ctx, nsRes, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "sched"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, nodesRes, "", readyNode("a", "4", "8Gi", "2", nil)); err != nil {
		t.Fatal(err)
	}
	prios := []int32{0, 0, 0, 1000, 0, 2000000000}
	for i, pr := range prios {
		p := newPod(fmt.Sprintf("p%d", i), "", nil)
		p.Spec.Priority = &pr
		if err := c.Create(ctx, podsRes, "sched", p); err != nil {
			t.Fatal(err)
		}
	}
	// The scheduler's handlers are registered before the informers run, so
	// the initial list has queued every pod once the caches have synced,
	// which is when Run starts deciding.
	pods := client.NewInformerFor(fake, podsRes, client.InformerOptions{})
	nodes := client.NewInformerFor(fake, nodesRes, client.InformerOptions{})
	s := scheduler.New(scheduler.Deps{Client: c, Pods: pods, Nodes: nodes}, scheduler.Options{})
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() { _ = pods.Run(ctx) })
	wg.Go(func() { _ = nodes.Run(ctx) })
	wg.Go(func() { _ = s.Run(ctx) })
	fakeapi.Wait(t, "p3 and p5 bound", func() bool {
		return fakeNodeOf(t, fake, "p3") == "a" && fakeNodeOf(t, fake, "p5") == "a"
	})
	for _, name := range []string{"p0", "p1", "p2", "p4"} {
		if n := fakeNodeOf(t, fake, name); n != "" {
			t.Fatalf("%s bound to %s; the node had room only for the two high-priority pods", name, n)
		}
	}
}
