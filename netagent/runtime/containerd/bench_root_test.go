package containerd

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// BenchmarkStart20 starts 20 netexec containers from the local image, each
// in a pod netns of its own, 20 at a time (as 20 pod workers would), and
// reports the Start latencies (create container + snapshot + task + start)
// and the wall time until all 20 run; then stops (SIGTERM) and removes
// them.
func BenchmarkStart20(b *testing.B) {
	e := requireContainerd(b)
	rt, err := New(context.Background(), Config{Socket: e.daemon.Socket, LogRoot: b.TempDir(), LoggerBinary: e.skiff})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	const n = 20
	nss := make([]*netnstest.NS, n)
	for i := range nss {
		nss[i] = netnstest.New(b, fmt.Sprintf("pod%d", i))
	}
	ctx := context.Background()
	var all []time.Duration
	var walls []time.Duration
	b.ResetTimer()
	for range b.N {
		lat := make([]time.Duration, n)
		ids := make([]string, n)
		errs := make([]error, n)
		t0 := time.Now()
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				s := time.Now()
				sb := runtime.Sandbox{PodUID: fmt.Sprintf("uid-%d", i), Namespace: "default", Name: fmt.Sprintf("pod-%d", i), NetNSPath: nss[i].Path, LogDir: b.TempDir()}
				st, err := rt.Start(ctx, sb, runtime.ContainerSpec{Name: "web", Image: testImage, Args: []string{"netexec", "--udp-port=-1"}})
				lat[i], ids[i], errs[i] = time.Since(s), st.ID, err
			})
		}
		wg.Wait()
		walls = append(walls, time.Since(t0))
		b.StopTimer()
		for i := range n {
			if errs[i] != nil {
				b.Fatal(errs[i])
			}
		}
		all = append(all, lat...)
		for _, id := range ids {
			wg.Go(func() {
				_ = rt.Stop(ctx, id, 5*time.Second)
				_ = rt.Remove(ctx, id)
			})
		}
		wg.Wait()
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(all)
	slices.Sort(walls)
	q := func(d []time.Duration, p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Milliseconds()) }
	b.ReportMetric(q(all, 0.5), "start-p50-ms")
	b.ReportMetric(q(all, 0.99), "start-p99-ms")
	b.ReportMetric(q(walls, 0.5), "all20-ms")
}

// BenchmarkStartOne is one Start (container, snapshot, task, start) of
// netexec in a pod netns, on an otherwise idle runtime.
func BenchmarkStartOne(b *testing.B) {
	e := requireContainerd(b)
	rt, err := New(context.Background(), Config{Socket: e.daemon.Socket, LogRoot: b.TempDir(), LoggerBinary: e.skiff})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	ns := netnstest.New(b, "pod")
	ctx := context.Background()
	sb := runtime.Sandbox{PodUID: "uid-one", Namespace: "default", Name: "one", NetNSPath: ns.Path, LogDir: b.TempDir()}
	b.ResetTimer()
	for range b.N {
		st, err := rt.Start(ctx, sb, runtime.ContainerSpec{Name: "web", Image: testImage, Args: []string{"netexec", "--udp-port=-1"}})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = rt.Stop(ctx, st.ID, 5*time.Second)
		_ = rt.Remove(ctx, st.ID)
		b.StartTimer()
	}
}
