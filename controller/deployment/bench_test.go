package deployment_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/deployment"
	"github.com/skiff-dev/skiff/server/servertest"
)

// countingClient counts the deployment controller's API writes.
type countingClient struct {
	*client.Client
	writes atomic.Int64
}

func (c *countingClient) Create(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object) error {
	c.writes.Add(1)
	return c.Client.Create(ctx, info, ns, obj)
}

func (c *countingClient) Update(ctx context.Context, info *api.ResourceInfo, ns string, obj api.Object, sub ...string) error {
	c.writes.Add(1)
	return c.Client.Update(ctx, info, ns, obj, sub...)
}

func (c *countingClient) Patch(ctx context.Context, info *api.ResourceInfo, ns, name, pt string, data []byte, into api.Object, sub ...string) error {
	c.writes.Add(1)
	return c.Client.Patch(ctx, info, ns, name, pt, data, into, sub...)
}

func (c *countingClient) Delete(ctx context.Context, info *api.ResourceInfo, ns, name string, opts client.DeleteOptions) error {
	c.writes.Add(1)
	return c.Client.Delete(ctx, info, ns, name, opts)
}

// BenchmarkRollout1000 times a rolling update of a 1,000-replica
// Deployment through ReplicaSets against a real server (the server's
// ReplicaSet controller makes and deletes the pods, the simulated node
// readies each pod as it appears), from the template change until the
// status says complete, and reports the deployment controller's API
// writes (ReplicaSet creates and scales, Deployment revision and status)
// per rollout. The first rollout to 1,000 pods is not timed. Figures are
// not recorded in the repository: run it on a quiet machine.
func BenchmarkRollout1000(b *testing.B) {
	if testing.Short() {
		b.Skip("a real API server")
	}
	const replicas = 1000
	c := servertest.Start(b, servertest.Options{DisabledControllers: []string{"deployment", "scheduler"}}).Client()
	cc := &countingClient{Client: c}
	e := startOn(b, c, cc, deployment.Options{Workers: 2})
	d := newDeployment("bench", replicas, "nginx:0")
	quarter := api.FromString("25%")
	d.Spec.Strategy = api.DeploymentStrategy{Type: api.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &api.RollingUpdateDeployment{MaxSurge: &quarter, MaxUnavailable: &quarter}}
	e.create(d)
	waitRolledOut(b, e, "bench", replicas, 5*time.Minute)
	b.ResetTimer()
	var writes int64
	for i := range b.N {
		before := cc.writes.Load()
		e.mutate("bench", func(d *api.Deployment) {
			d.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("nginx:%d", i+1)
		})
		waitRolledOut(b, e, "bench", replicas, 5*time.Minute)
		writes += cc.writes.Load() - before
	}
	b.ReportMetric(float64(writes)/float64(b.N), "writes/op")
}

// waitRolledOut polls until the Deployment's status says every replica is
// updated and available for the current generation.
func waitRolledOut(b *testing.B, e *env, name string, replicas int32, timeout time.Duration) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for {
		d := &api.Deployment{}
		if err := e.c.Get(e.ctx, e.dInfo, ns, name, d); err != nil {
			b.Fatal(err)
		}
		st := d.Status
		if st.ObservedGeneration == d.Generation && st.UpdatedReplicas == replicas && st.Replicas == replicas &&
			st.AvailableReplicas == replicas {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("not rolled out after %v: %+v", timeout, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
