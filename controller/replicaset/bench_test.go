package replicaset_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/replicaset"
	"github.com/skiff-dev/skiff/server/servertest"
)

// BenchmarkReconcile1000 is the pure step alone: planning 1,000 replicas
// from nothing, and choosing 1,000 pods to delete (scale to 0).
func BenchmarkReconcile1000(b *testing.B) {
	labels := map[string]string{"app": "web"}
	set := &replicaset.Set{Namespace: "default", Name: "web", UID: "u", Replicas: 1000,
		Selector: &api.LabelSelector{MatchLabels: labels}, Template: &api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: labels}}}
	now := time.Now()
	t := true
	pods := make([]*api.Pod, 1000)
	for i := range pods {
		pods[i] = &api.Pod{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("web-%04d", i), Namespace: "default", UID: fmt.Sprint(i),
			Labels: labels, CreationTimestamp: api.NewTime(now.Add(-time.Duration(i) * time.Second)),
			OwnerReferences: []api.OwnerReference{{Kind: "ReplicaSet", APIVersion: "apps/v1", UID: "u", Controller: &t}}},
			Spec:   api.PodSpec{NodeName: fmt.Sprintf("n%d", i%10)},
			Status: api.PodStatus{Phase: api.PodRunning}}
	}
	b.Run("create", func(b *testing.B) {
		for b.Loop() {
			if p := replicaset.Reconcile(replicaset.Input{Set: set, NeedsSync: true, Burst: 1000, Now: now}); p.Create != 1000 {
				b.Fatal(p.Create)
			}
		}
	})
	zero := *set
	zero.Replicas = 0
	b.Run("delete", func(b *testing.B) {
		for b.Loop() {
			if p := replicaset.Reconcile(replicaset.Input{Set: &zero, Pods: pods, Related: pods, NeedsSync: true, Burst: 1000, Now: now}); len(p.Delete) != 1000 {
				b.Fatal(len(p.Delete))
			}
		}
	})
}

// countingClient counts the controller's API writes.
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

// BenchmarkCreate1000 times a ReplicaSet of 1,000 replicas on a real
// server, from its create until its status says 1,000 pods, and reports
// the controller's API writes per run (pods, status).
func BenchmarkCreate1000(b *testing.B) {
	c := servertest.Start(b, servertest.Options{DisabledControllers: []string{"replicaset", "replicationcontroller", "scheduler"}}).Client()
	ctx, cancel := context.WithCancel(context.Background())
	res := api.Resources()
	rsInfo, podInfo := api.Lookup(res, "apps/v1", "replicasets"), api.Lookup(res, "v1", "pods")
	sets := client.NewInformer(c, rsInfo, client.InformerOptions{})
	pods := client.NewInformer(c, podInfo, client.InformerOptions{})
	cc := &countingClient{Client: c}
	ctl := replicaset.New(replicaset.Deps{Client: cc, Sets: sets, Pods: pods}, replicaset.Options{})
	var wg sync.WaitGroup
	wg.Go(func() { sets.Run(ctx) })
	wg.Go(func() { pods.Run(ctx) })
	wg.Go(func() { _ = ctl.Run(ctx) })
	b.Cleanup(func() { cancel(); wg.Wait() })

	n := int32(1000)
	i := 0
	start := cc.writes.Load()
	for b.Loop() {
		i++
		name := fmt.Sprintf("bench-%d", i)
		labels := map[string]string{"app": name}
		rs := &api.ReplicaSet{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
			Spec: api.ReplicaSetSpec{Replicas: &n, Selector: &api.LabelSelector{MatchLabels: labels},
				Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: labels},
					Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Image: "nginx"}}}}}}
		if err := c.Create(ctx, rsInfo, "default", rs); err != nil {
			b.Fatal(err)
		}
		for {
			cur := &api.ReplicaSet{}
			if err := c.Get(ctx, rsInfo, "default", name, cur); err != nil {
				b.Fatal(err)
			}
			if cur.Status.Replicas == n {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	b.ReportMetric(float64(cc.writes.Load()-start)/float64(i), "writes/op")
}
