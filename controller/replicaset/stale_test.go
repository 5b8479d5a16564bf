package replicaset_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/replicaset"
	"github.com/skiff-dev/skiff/server/servertest"
)

// blindPods is a pod cache that never catches up: it is synced, but holds
// no pod and sends no event, the worst a stale cache can be.
type blindPods struct{ inner *client.Informer }

func (b blindPods) AddEventHandler(client.EventHandler)          {}
func (b blindPods) AddIndexer(string, func(api.Object) []string) {}
func (b blindPods) HasSynced() bool                              { return b.inner.HasSynced() }
func (b blindPods) Get(string, string) (api.Object, bool)        { return nil, false }
func (b blindPods) ByIndex(string, string) []api.Object          { return nil }

// TestStaleCacheNoDoubleCreate: with a pod cache that never sees the pods
// the controller created, syncs of the set (its own status writes, a
// user's edits) create nothing more until the expectations expire.
func TestStaleCacheNoDoubleCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("a real API server; not in -short")
	}
	c := servertest.Start(t, servertest.Options{DisabledControllers: []string{"replicaset", "replicationcontroller", "scheduler"}}).Client()
	ctx, cancel := context.WithCancel(context.Background())
	res := api.Resources()
	rsInfo, podInfo := api.Lookup(res, "apps/v1", "replicasets"), api.Lookup(res, "v1", "pods")
	sets := client.NewInformer(c, rsInfo, client.InformerOptions{})
	pods := client.NewInformer(c, podInfo, client.InformerOptions{})
	const ttl = 3 * time.Second
	ctl := replicaset.New(replicaset.Deps{Client: c, Sets: sets, Pods: blindPods{pods}},
		replicaset.Options{ExpectationsTTL: ttl})
	var wg sync.WaitGroup
	wg.Go(func() { sets.Run(ctx) })
	wg.Go(func() { pods.Run(ctx) })
	wg.Go(func() { _ = ctl.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	three := int32(3)
	labels := map[string]string{"app": "stale"}
	rs := &api.ReplicaSet{ObjectMeta: api.ObjectMeta{Name: "stale", Namespace: ns},
		Spec: api.ReplicaSetSpec{Replicas: &three, Selector: &api.LabelSelector{MatchLabels: labels},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: labels},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Image: "nginx"}}}}}}
	created := time.Now()
	if err := c.Create(ctx, rsInfo, ns, rs); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var l api.PodList
		if err := c.List(ctx, podInfo, ns, client.ListOptions{LabelSelector: "app=stale"}, &l); err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	deadline := time.Now().Add(10 * time.Second)
	for count() < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	// Poke the set a few times: each change is a sync that sees no pod.
	for i := range 5 {
		cur := &api.ReplicaSet{}
		if err := c.Get(ctx, rsInfo, ns, "stale", cur); err != nil {
			t.Fatal(err)
		}
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations["poke"] = fmt.Sprint(i)
		if err := c.Update(ctx, rsInfo, ns, cur); err != nil && !client.IsConflict(err) {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if time.Since(created) >= ttl {
		t.Skip("too slow a machine: the expectations expired before the checks ran")
	}
	if n := count(); n != 3 {
		t.Fatalf("%d pods while the expectations were pending, want 3", n)
	}
	// The guard was the expectations: once they expire, the blind
	// controller creates again (and a real cache would have caught up).
	deadline = time.Now().Add(ttl + 20*time.Second)
	for count() <= 3 {
		if time.Now().After(deadline) {
			t.Fatal("no creation after the expectations expired")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
