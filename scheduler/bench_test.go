package scheduler_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/scheduler"
)

// BenchmarkBind10kPodsOn100Nodes: 10,000 pending pods (10 owners, 100m cpu
// each) are created while no scheduler runs; then the informers sync, the
// scheduler starts, and the time until the informer has seen every pod
// bound gives pods/s.
//
// Its floor, in the same run, the scheduler stopped: 10,000 more pending
// pods in another namespace (untimed), then their Binding posts made
// directly by as many workers as the scheduler runs, round robin over the
// nodes, until the last one is answered: the API's share of the same
// bindings, without the scheduler's queue, decisions and events. Reports
// floor-pods/s and over-floor (the scheduler's time over the floor's).
// Run:
//
//	go test -run '^$' -bench Bind10k -benchtime 1x ./scheduler
func BenchmarkBind10kPodsOn100Nodes(b *testing.B) {
	const (
		nodes   = 100
		pods    = 10000
		owners  = 10
		workers = 16
	)
	for range b.N {
		b.StopTimer()
		c := startServer(b, "gc")
		ctx, cancel := context.WithCancel(context.Background())
		ns := "bench"
		mustCreate(b, c, nsRes, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}})
		for i := range nodes {
			mustCreate(b, c, nodesRes, "", readyNode(fmt.Sprintf("node-%03d", i), "32", "128Gi", "110", nil))
		}
		ownerDeps := make([]*api.Deployment, owners)
		for i := range owners {
			// The garbage collector is off: the owners need not exist.
			ownerDeps[i] = &api.Deployment{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("app-%d", i), UID: fmt.Sprintf("owner-uid-%d", i)}}
		}
		created := time.Now()
		var wg sync.WaitGroup
		var next atomic.Int64
		for range 16 {
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= pods {
						return
					}
					mustCreate(b, c, podsRes, ns, newPod(fmt.Sprintf("p-%05d", i), "100m", ownerDeps[i%owners]))
				}
			})
		}
		wg.Wait()
		b.Logf("created %d pods in %v", pods, time.Since(created))

		podInf, nodeInf := informers(b, ctx, c)
		var bound atomic.Int64
		all := make(chan struct{})
		onBound := func(obj api.Object) {
			if obj.(*api.Pod).Spec.NodeName != "" && bound.Add(1) == pods {
				close(all)
			}
		}
		podInf.AddEventHandler(client.HandlerFuncs{
			AddFunc: onBound,
			UpdateFunc: func(old, obj api.Object) {
				if old.(*api.Pod).Spec.NodeName == "" {
					onBound(obj)
				}
			},
		})
		if !client.WaitForCacheSync(ctx, podInf.HasSynced, nodeInf.HasSynced) {
			b.Fatal("informers did not sync")
		}
		s := scheduler.New(scheduler.Deps{Client: c, Pods: podInf, Nodes: nodeInf, Log: testLogger()}, scheduler.Options{Workers: workers})
		done := make(chan error, 1)
		b.StartTimer()
		start := time.Now()
		go func() { done <- s.Run(ctx) }()
		select {
		case <-all:
		case <-time.After(5 * time.Minute):
			b.Fatalf("only %d of %d pods bound", bound.Load(), pods)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(pods)/elapsed.Seconds(), "pods/s")
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}

		// Spread check: every node got exactly pods/nodes pods.
		per := map[string]int{}
		for _, o := range podInf.List() {
			per[o.(*api.Pod).Spec.NodeName]++
		}
		for n, k := range per {
			if k != pods/nodes {
				b.Fatalf("node %s has %d pods, want %d", n, k, pods/nodes)
			}
		}

		// The floor, with the scheduler stopped: as many pods again in
		// another namespace (untimed), then their Binding posts made
		// directly by as many workers, round robin over the nodes.
		floorNS := "floor"
		mustCreate(b, c, nsRes, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: floorNS}})
		next.Store(0)
		for range 16 {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < pods; i = next.Add(1) - 1 {
					mustCreate(b, c, podsRes, floorNS, newPod(fmt.Sprintf("p-%05d", i), "100m", ownerDeps[i%owners]))
				}
			})
		}
		wg.Wait()
		next.Store(0)
		floorStart := time.Now()
		for range workers {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < pods; i = next.Add(1) - 1 {
					name := fmt.Sprintf("p-%05d", i)
					path, err := client.ResourcePath(podsRes, floorNS, name, "binding")
					if err != nil {
						b.Error(err)
						return
					}
					bd := &api.Binding{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Binding"},
						ObjectMeta: api.ObjectMeta{Name: name, Namespace: floorNS},
						Target:     api.ObjectReference{Kind: "Node", Name: fmt.Sprintf("node-%03d", int(i)%nodes)}}
					if err := c.Do(context.Background(), http.MethodPost, path, bd, nil); err != nil {
						b.Errorf("floor: bind %s: %v", name, err)
						return
					}
				}
			})
		}
		wg.Wait()
		floor := time.Since(floorStart)
		b.ReportMetric(float64(pods)/floor.Seconds(), "floor-pods/s")
		b.ReportMetric(float64(elapsed)/float64(floor), "over-floor")
	}
}
