package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/scheduler"
)

// BenchmarkBind10kPodsAntiAffinitySpread is BenchmarkBind10kPodsOn100Nodes
// with the affinity plugins on: 100 nodes in 4 zones, 100 owners of 100
// pods each; every pod has a required anti-affinity to its owner's pods by
// kubernetes.io/hostname and a DoNotSchedule zone spread (maxSkew 1) over
// them, so each owner ends with exactly one pod per node. Reports pods/s
// and checks the placement. Run:
//
//	go test -run '^$' -bench AntiAffinitySpread -benchtime 1x ./scheduler
func BenchmarkBind10kPodsAntiAffinitySpread(b *testing.B) {
	const (
		nodes   = 100
		zones   = 4
		owners  = 100
		pods    = owners * nodes
		workers = 16
	)
	for range b.N {
		b.StopTimer()
		c := startServer(b, "gc")
		ctx, cancel := context.WithCancel(context.Background())
		ns := "bench"
		mustCreate(b, c, nsRes, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}})
		for i := range nodes {
			mustCreate(b, c, nodesRes, "", readyNode(fmt.Sprintf("node-%03d", i), "32", "128Gi", "110",
				map[string]string{api.LabelTopologyZone: fmt.Sprintf("zone-%d", i%zones)}))
		}
		var wg sync.WaitGroup
		var next atomic.Int64
		for range 16 {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < pods; i = next.Add(1) - 1 {
					mustCreate(b, c, podsRes, ns, spreadPod(fmt.Sprintf("p-%05d", i), fmt.Sprintf("app-%d", int(i)%owners)))
				}
			})
		}
		wg.Wait()

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
		perOwnerNode := map[string]int{}
		for _, o := range podInf.List() {
			p := o.(*api.Pod)
			key := p.Labels["app"] + "@" + p.Spec.NodeName
			if perOwnerNode[key]++; perOwnerNode[key] > 1 {
				b.Fatalf("%s has two pods of %s", p.Spec.NodeName, p.Labels["app"])
			}
		}
	}
}

// spreadPod is a pending pod of app with a required hostname anti-affinity
// to its app and a zone spread constraint.
func spreadPod(name, app string) *api.Pod {
	p := newPod(name, "100m", nil)
	p.Labels = map[string]string{"app": app}
	sel := &api.LabelSelector{MatchLabels: map[string]string{"app": app}}
	p.Spec.Affinity = &api.Affinity{PodAntiAffinity: &api.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []api.PodAffinityTerm{
		{LabelSelector: sel, TopologyKey: api.LabelHostname}}}}
	p.Spec.TopologySpreadConstraints = []api.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: api.LabelTopologyZone, WhenUnsatisfiable: api.DoNotSchedule, LabelSelector: sel}}
	return p
}
