package nodelifecycle_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/nodelifecycle"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resources   = api.Resources()
	podsRes     = api.Lookup(resources, "v1", "pods")
	nodesRes    = api.Lookup(resources, "v1", "nodes")
	nsRes       = api.Lookup(resources, "v1", "namespaces")
	leasesRes   = api.Lookup(resources, "coordination.k8s.io/v1", "leases")
	deployments = api.Lookup(resources, "apps/v1", "deployments")
)

func testLogger() *slog.Logger {
	if os.Getenv("SKIFF_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return nil
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
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
			t.Fatalf("timed out after %v waiting for %s (last: %v)", timeout, what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustCreate(t *testing.T, c *client.Client, info *api.ResourceInfo, ns string, obj api.Object) {
	t.Helper()
	if err := c.Create(context.Background(), info, ns, obj); err != nil {
		t.Fatalf("create %s %s: %v", info.Resource, obj.GetObjectMeta().Name, err)
	}
}

// heartbeater renews a node's Lease as a node agent would, until stopped.
type heartbeater struct {
	c      *client.Client
	node   string
	cancel context.CancelFunc
	done   chan struct{}
}

func renewLease(ctx context.Context, c *client.Client, node string) error {
	var l api.Lease
	if err := c.Get(ctx, leasesRes, nodelifecycle.LeaseNamespace, node, &l); err != nil {
		return err
	}
	l.Spec.RenewTime = &api.MicroTime{Time: time.Now()}
	return c.Update(ctx, leasesRes, nodelifecycle.LeaseNamespace, &l)
}

func startHeartbeat(t *testing.T, c *client.Client, node string) *heartbeater {
	ctx, cancel := context.WithCancel(context.Background())
	h := &heartbeater{c: c, node: node, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			if err := renewLease(ctx, c, node); err != nil && ctx.Err() == nil {
				t.Errorf("renew lease %s: %v", node, err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(h.stop)
	return h
}

func (h *heartbeater) stop() {
	h.cancel()
	<-h.done
}

func readyNode(name string) *api.Node {
	now := api.Now()
	return &api.Node{
		ObjectMeta: api.ObjectMeta{Name: name},
		Status: api.NodeStatus{
			Allocatable: api.ResourceList{"cpu": "4", "memory": "8Gi", "pods": "110"},
			Conditions: []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: now, LastTransitionTime: now}},
		},
	}
}

// runningPod creates a pod bound to node and writes a Running, Ready
// status for it as the node would.
func runningPod(t *testing.T, c *client.Client, ns, name, node string, owner *api.Deployment) {
	t.Helper()
	p := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec:       api.PodSpec{NodeName: node, Containers: []api.Container{{Name: "c", Image: "nginx"}}},
	}
	if owner != nil {
		yes := true
		p.OwnerReferences = []api.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: owner.Name, UID: owner.UID, Controller: &yes}}
	}
	mustCreate(t, c, podsRes, ns, p)
	now := api.Now()
	p.Status = api.PodStatus{Phase: api.PodRunning, PodIP: "10.244.0.10", Conditions: []api.PodCondition{
		{Type: api.PodScheduled, Status: api.ConditionTrue, LastTransitionTime: now},
		{Type: api.ContainersReady, Status: api.ConditionTrue, LastTransitionTime: now},
		{Type: api.PodReady, Status: api.ConditionTrue, LastTransitionTime: now},
	}}
	if err := c.UpdateStatus(context.Background(), podsRes, ns, p); err != nil {
		t.Fatalf("pod %s status: %v", name, err)
	}
}

func getNode(t *testing.T, c *client.Client, name string) *api.Node {
	t.Helper()
	var n api.Node
	if err := c.Get(context.Background(), nodesRes, "", name, &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func hasTaint(n *api.Node, key string) bool {
	for _, tn := range n.Spec.Taints {
		if tn.Key == key && tn.Effect == api.TaintEffectNoSchedule {
			return true
		}
	}
	return false
}

func readyCond(n *api.Node) *api.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == api.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// getPod returns the pod, or nil when it does not exist.
func getPod(t *testing.T, c *client.Client, ns, name string) *api.Pod {
	t.Helper()
	var p api.Pod
	err := c.Get(context.Background(), podsRes, ns, name, &p)
	if client.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return &p
}

func TestSilentNode(t *testing.T) {
	if testing.Short() {
		t.Skip("a real API server; -short runs the tests on the fake API only")
	}
	c := servertest.Start(t, servertest.Options{
		DisabledControllers: []string{"nodelifecycle", "scheduler", "deployment", "statefulset"},
	}).Client()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	nodes := client.NewInformer(c, nodesRes, client.InformerOptions{})
	pods := client.NewInformer(c, podsRes, client.InformerOptions{})
	leases := client.NewInformer(c, leasesRes, client.InformerOptions{Namespace: nodelifecycle.LeaseNamespace})
	for _, inf := range []*client.Informer{nodes, pods, leases} {
		wg.Go(func() { _ = inf.Run(ctx) })
	}
	ctl := nodelifecycle.New(nodelifecycle.Deps{Client: c, Nodes: nodes, Pods: pods, Leases: leases, Log: testLogger()},
		nodelifecycle.Options{
			NodeMonitorGracePeriod: 2 * time.Second,
			PodEvictionTimeout:     4 * time.Second,
			MonitorPeriod:          200 * time.Millisecond,
			Workers:                2,
		})
	wg.Go(func() {
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	// The controller creates the lease namespace.
	eventually(t, 10*time.Second, "namespace kube-node-lease", func() (bool, error) {
		var ns api.Namespace
		err := c.Get(ctx, nsRes, "", nodelifecycle.LeaseNamespace, &ns)
		return err == nil, err
	})
	ns := "apps"
	mustCreate(t, c, nsRes, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}})
	zero := int32(0)
	owner := &api.Deployment{
		ObjectMeta: api.ObjectMeta{Name: "web"},
		Spec: api.DeploymentSpec{
			Replicas: &zero,
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	mustCreate(t, c, deployments, ns, owner)

	for _, name := range []string{"alive", "silent"} {
		mustCreate(t, c, nodesRes, "", readyNode(name))
		renew := api.MicroTime{Time: time.Now()}
		mustCreate(t, c, leasesRes, nodelifecycle.LeaseNamespace, &api.Lease{
			ObjectMeta: api.ObjectMeta{Name: name},
			Spec:       api.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: new(int32(40)), RenewTime: &renew},
		})
	}
	startHeartbeat(t, c, "alive")
	silent := startHeartbeat(t, c, "silent")
	runningPod(t, c, ns, "web-silent", "silent", owner)
	runningPod(t, c, ns, "bare-silent", "silent", nil)
	runningPod(t, c, ns, "web-alive", "alive", owner)

	// Both nodes heartbeat; then "silent" stops.
	time.Sleep(300 * time.Millisecond) // let a renewal or two through (not an assertion)
	silent.stop()

	eventually(t, 15*time.Second, "silent node Ready=Unknown with the unreachable taint", func() (bool, error) {
		n := getNode(t, c, "silent")
		rc := readyCond(n)
		return rc != nil && rc.Status == api.ConditionUnknown && hasTaint(n, nodelifecycle.TaintUnreachable),
			fmt.Errorf("ready %+v taints %+v", rc, n.Spec.Taints)
	})
	rc := readyCond(getNode(t, c, "silent"))
	if rc.Reason != nodelifecycle.ReasonNodeStatusUnknown || rc.Message != "Kubelet stopped posting node status." {
		t.Fatalf("Ready condition %+v", rc)
	}
	eventually(t, 10*time.Second, "pods of the silent node Ready=False", func() (bool, error) {
		for _, name := range []string{"web-silent", "bare-silent"} {
			p := getPod(t, c, ns, name)
			if p == nil {
				return false, fmt.Errorf("pod %s gone before being marked not ready", name)
			}
			cr := api.GetPodCondition(&p.Status, api.ContainersReady)
			if api.IsPodReady(p) || cr == nil || cr.Status != api.ConditionFalse {
				return false, fmt.Errorf("pod %s conditions %+v", name, p.Status.Conditions)
			}
		}
		return true, nil
	})

	eventually(t, 15*time.Second, "controller-owned pod of the silent node evicted", func() (bool, error) {
		return getPod(t, c, ns, "web-silent") == nil, nil
	})
	if p := getPod(t, c, ns, "bare-silent"); p == nil {
		t.Fatal("bare pod was deleted")
	}
	// The live node and its pod were never touched.
	n := getNode(t, c, "alive")
	if rc := readyCond(n); rc.Status != api.ConditionTrue || len(n.Spec.Taints) != 0 {
		t.Fatalf("alive node: ready %+v taints %+v", rc, n.Spec.Taints)
	}
	if p := getPod(t, c, ns, "web-alive"); p == nil || !api.IsPodReady(p) {
		t.Fatalf("pod of the live node: %+v", p)
	}

	// Heartbeats resume and the agent reports Ready: the taint goes.
	startHeartbeat(t, c, "silent")
	eventually(t, 10*time.Second, "silent node Ready again", func() (bool, error) {
		n := getNode(t, c, "silent")
		now := api.Now()
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == api.NodeReady {
				n.Status.Conditions[i] = api.NodeCondition{Type: api.NodeReady, Status: api.ConditionTrue,
					Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}
			}
		}
		err := c.UpdateStatus(ctx, nodesRes, "", n)
		return err == nil, err
	})
	eventually(t, 10*time.Second, "unreachable taint removed", func() (bool, error) {
		n := getNode(t, c, "silent")
		return !hasTaint(n, nodelifecycle.TaintUnreachable) && readyCond(n).Status == api.ConditionTrue,
			fmt.Errorf("taints %+v ready %+v", n.Spec.Taints, readyCond(n))
	})
}
