package nodelifecycle_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/nodelifecycle"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

// TestFakeSilentNode: on the in-memory API, Run creates the lease
// namespace and marks a node whose lease stopped changing for the grace
// period Ready=Unknown with the unreachable taint, while a node whose
// lease keeps being renewed stays Ready.
func TestFakeSilentNode(t *testing.T) {
	res := api.Resources()
	leasesRes := api.Lookup(res, "coordination.k8s.io/v1", "leases")
	fake := fakeapi.New(res)
	c := fake.Client()
	ctx, cancel := context.WithCancel(t.Context())
	now := time.Now

	nodes := client.NewInformerFor(fake, nodesRes, client.InformerOptions{})
	pods := client.NewInformerFor(fake, podsRes, client.InformerOptions{})
	leases := client.NewInformerFor(fake, leasesRes, client.InformerOptions{Namespace: nodelifecycle.LeaseNamespace})
	ctl := nodelifecycle.New(nodelifecycle.Deps{Client: c, Nodes: nodes, Pods: pods, Leases: leases},
		nodelifecycle.Options{NodeMonitorGracePeriod: 300 * time.Millisecond, MonitorPeriod: 10 * time.Millisecond})
	var wg sync.WaitGroup
	for _, inf := range []*client.Informer{nodes, pods, leases} {
		wg.Go(func() { _ = inf.Run(ctx) })
	}
	wg.Go(func() {
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })

	fakeapi.Wait(t, "namespace kube-node-lease", func() bool {
		_, ok := fake.Meta(nsRes, "", nodelifecycle.LeaseNamespace)
		return ok
	})
	renew := func(name string) error {
		at := api.MicroTime{Time: now()}
		l := &api.Lease{ObjectMeta: api.ObjectMeta{Name: name},
			Spec: api.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: new(int32(40)), RenewTime: &at}}
		var cur api.Lease
		if err := c.Get(ctx, leasesRes, nodelifecycle.LeaseNamespace, name, &cur); err == nil {
			l.ResourceVersion = cur.ResourceVersion
			return c.Update(ctx, leasesRes, nodelifecycle.LeaseNamespace, l)
		}
		return c.Create(ctx, leasesRes, nodelifecycle.LeaseNamespace, l)
	}
	for _, name := range []string{"alive", "silent"} {
		n := readyNode(name)
		for i := range n.Status.Conditions {
			n.Status.Conditions[i].LastHeartbeatTime = api.NewTime(now())
		}
		if err := c.Create(ctx, nodesRes, "", n); err != nil {
			t.Fatal(err)
		}
		if err := renew(name); err != nil {
			t.Fatal(err)
		}
	}
	// "alive" renews its lease every 10ms, "silent" never again.
	wg.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := renew("alive"); err != nil && ctx.Err() == nil {
					t.Errorf("renew: %v", err)
				}
			}
		}
	})

	node := func(name string) *api.Node {
		var n api.Node
		if err := c.Get(ctx, nodesRes, "", name, &n); err != nil {
			t.Fatal(err)
		}
		return &n
	}
	fakeapi.Wait(t, "silent Ready=Unknown with the unreachable taint", func() bool {
		n := node("silent")
		rc := readyCond(n)
		return rc != nil && rc.Status == api.ConditionUnknown && hasTaint(n, nodelifecycle.TaintUnreachable)
	})
	if rc := readyCond(node("alive")); rc == nil || rc.Status != api.ConditionTrue {
		t.Fatalf("alive node's Ready condition %+v, want True", rc)
	}
}
