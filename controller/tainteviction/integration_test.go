package tainteviction_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/tainteviction"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resources = api.Resources()
	podsRes   = api.Lookup(resources, "v1", "pods")
	nodesRes  = api.Lookup(resources, "v1", "nodes")
)

// TestEvictsAgainstServer: against a real API server, tainting a node
// NoExecute deletes at once the pod that does not tolerate it, after its
// tolerationSeconds the pod that tolerates it for 1s, and never the pod
// that tolerates it without a limit.
func TestEvictsAgainstServer(t *testing.T) {
	if testing.Short() {
		t.Skip("a real API server")
	}
	ts := servertest.Start(t, servertest.Options{DisabledControllers: []string{"tainteviction", "scheduler", "nodelifecycle"}})
	c := ts.Client()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	pods := client.NewInformer(c, podsRes, client.InformerOptions{})
	nodes := client.NewInformer(c, nodesRes, client.InformerOptions{})
	ctl := tainteviction.New(tainteviction.Deps{Client: c, Nodes: nodes, Pods: pods}, tainteviction.Options{})
	wg.Go(func() { _ = pods.Run(ctx) })
	wg.Go(func() { _ = nodes.Run(ctx) })
	wg.Go(func() { _ = ctl.Run(ctx) })

	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: "n1"}}
	if err := c.Create(ctx, nodesRes, "", node); err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	mk := func(name string, tols ...api.Toleration) {
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: name},
			Spec: api.PodSpec{NodeName: "n1", Tolerations: tols, Containers: []api.Container{{Name: "c", Image: "nginx"}}}}
		if err := c.Create(ctx, podsRes, "default", p); err != nil {
			t.Fatal(err)
		}
	}
	mk("plain")
	mk("brief", api.Toleration{Key: "maintenance", Operator: "Exists", Effect: api.TaintEffectNoExecute, TolerationSeconds: &one})
	mk("forever", api.Toleration{Key: "maintenance", Operator: "Exists", Effect: api.TaintEffectNoExecute})

	exists := func(name string) bool {
		var p api.Pod
		err := c.Get(ctx, podsRes, "default", name, &p)
		return err == nil && p.DeletionTimestamp == nil
	}
	time.Sleep(300 * time.Millisecond)
	if !exists("plain") || !exists("brief") || !exists("forever") {
		t.Fatal("a pod went before any NoExecute taint")
	}
	if err := c.Get(ctx, nodesRes, "", "n1", node); err != nil {
		t.Fatal(err)
	}
	node.Spec.Taints = []api.Taint{{Key: "maintenance", Effect: api.TaintEffectNoExecute}}
	if err := c.Update(ctx, nodesRes, "", node); err != nil {
		t.Fatal(err)
	}
	tainted := time.Now()
	waitFor(t, 10*time.Second, "plain evicted", func() bool { return !exists("plain") })
	if !exists("brief") {
		t.Fatalf("brief went %v after the taint, before its 1s toleration", time.Since(tainted))
	}
	waitFor(t, 10*time.Second, "brief evicted", func() bool { return !exists("brief") })
	if d := time.Since(tainted); d < time.Second {
		t.Fatalf("brief evicted after %v, before its 1s toleration", d)
	}
	time.Sleep(500 * time.Millisecond)
	if !exists("forever") {
		t.Fatal("the pod tolerating the taint without a limit was evicted")
	}
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
