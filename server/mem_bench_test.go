package server_test

// BenchmarkMemory10kServices measures where the memory of a loaded
// control plane goes. Its dnsbench case reproduces `go run ./hack/dnsbench
// -mode server -services 10000 -endpoints 50000`: a whole server (bbolt, HTTPS API,
// shared informers, every controller the harness runs, and the cluster DNS
// on 127.0.0.1 with no upstream) filled through its API by 16 concurrent
// clients with 100 namespaces, 10,000 Services with selectors (1 in 10
// headless, 1 in 100 ExternalName), one EndpointSlice per Service with
// endpoints (50,000 endpoints in all) and a pod per endpoint whose status is
// then written (there is no agent): about 120,000 writes. As in the harness
// the endpointslice controller and the scheduler are disabled (the slices
// are written by the benchmark; with no nodes the scheduler would retry
// every pod). Its endpointslice-controller case writes the same Services
// and pods, the pods labelled for their Service and Ready, and leaves the
// EndpointSlices to the endpointslice controller. fsync is off (NoSync), as
// in the harness: the figures are about memory, and fsync only makes the
// fill slower.
//
// Once every write is done it waits until the DNS answers for the last
// Service and pod (the informers have caught up) and the store revision
// has stood still for 3 s (the controllers are idle), reads rss-idle-MiB
// (VmRSS: what `ps` shows of the idle server), then forces a GC, returns
// freed memory to the OS and reports:
//
//   - heap-live-MiB: live heap objects; peak-live-MiB: the largest live heap
//     a GC measured during the fill and the wait (objects allocated while a
//     GC marks count as live, so it includes some garbage);
//   - heap-inuse-MiB: heap spans holding live objects; go-MiB: all the Go
//     runtime holds (runtime/metrics total minus released);
//   - rss-MiB, rss-anon-MiB, rss-file-MiB: VmRSS, RssAnon and RssFile of
//     /proc/self/status (RssFile is mostly the bbolt mmap: the pages of the
//     file the process has read); rss-peak-MiB: VmHWM;
//   - db-MiB: the bbolt file's size and, once the server has stopped,
//     kv-MiB and log-MiB: the pages of its two buckets.
//
// The clients run in the same process but keep nothing once their writes
// are done.
//
// It writes a heap profile at the measured moment to $SKIFF_HEAP_PROFILE
// (default: skiff-mem-bench-heap.pprof in os.TempDir()) for
//
//	go tool pprof -top -sample_index=inuse_space <file>
//
// (-endpointslice.pprof for the second case) and, with SKIFF_MEM_PEAK=1
// (which forces a GC every 2 s of the fill), one at the fill's largest live
// heap, next to it (-peak.pprof).
//
// Run:
//
//	go test -run '^$' -bench Memory10kServices/dnsbench -benchtime 1x ./server/
//	go test -run '^$' -bench Memory10kServices -benchtime 1x ./server/   # both

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
	bolt "go.etcd.io/bbolt"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

// memParams size the generated cluster (hack/dnsbench's defaults).
const (
	memServices   = 10000
	memEndpoints  = 50000
	memNamespaces = 100
	memWorkers    = 16
)

// memGenerated is one Service with its slice and pods.
type memGenerated struct {
	svc   *api.Service
	slice *api.EndpointSlice // nil: no endpoints
	pods  []*api.Pod
}

// memEach generates the cluster as hack/dnsbench does: Service i is
// ExternalName when i%100 == 55, headless when i%10 == 9, ClusterIP
// otherwise; the endpoints are spread over the Services that are not
// ExternalName.
//
// With controller set the pods carry their Service's selector and a Ready
// condition, and no slice is generated: the endpointslice controller
// writes them.
func memEach(controller bool, f func(memGenerated)) {
	withEps := 0
	for i := range memServices {
		if i%100 != 55 {
			withEps++
		}
	}
	next, k := 0, 0
	for i := range memServices {
		ns := fmt.Sprintf("ns-%02d", i%memNamespaces)
		name := fmt.Sprintf("svc-%05d", i)
		g := memGenerated{svc: &api.Service{
			ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
			Spec: api.ServiceSpec{
				Type:     api.ServiceTypeClusterIP,
				Selector: map[string]string{"app": name},
				Ports:    []api.ServicePort{{Name: "http", Protocol: api.ProtocolTCP, Port: 80, TargetPort: api.FromInt32(8080)}},
			},
		}}
		switch {
		case i%100 == 55:
			g.svc.Spec = api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: fmt.Sprintf("svc-%05d.ns-%02d.svc.cluster.local.", i+1, (i+1)%memNamespaces)}
			f(g)
			continue
		case i%10 == 9:
			g.svc.Spec.ClusterIP, g.svc.Spec.ClusterIPs = api.ClusterIPNone, []string{api.ClusterIPNone}
		}
		n := memEndpoints / withEps
		if k < memEndpoints%withEps {
			n++
		}
		k++
		pn, proto, port := "http", api.ProtocolTCP, int32(8080)
		g.slice = &api.EndpointSlice{
			ObjectMeta:  api.ObjectMeta{Namespace: ns, Name: name + "-abcde", Labels: map[string]string{api.LabelServiceName: name}},
			AddressType: api.AddressTypeIPv4,
			Ports:       []api.EndpointPort{{Name: &pn, Protocol: &proto, Port: &port}},
		}
		for j := range n {
			next++
			ip := fmt.Sprintf("10.244.%d.%d", byte(next>>8), byte(next))
			podName := fmt.Sprintf("%s-%d", name, j)
			ready, node := true, fmt.Sprintf("node-%d", j%10)
			ep := api.Endpoint{
				Addresses:  []string{ip},
				Conditions: api.EndpointConditions{Ready: &ready, Serving: &ready},
				NodeName:   &node,
				TargetRef:  &api.ObjectReference{Kind: "Pod", Namespace: ns, Name: podName},
			}
			if i%10 == 9 {
				h := fmt.Sprintf("web-%d", j)
				ep.Hostname = &h
			}
			g.slice.Endpoints = append(g.slice.Endpoints, ep)
			pod := &api.Pod{
				ObjectMeta: api.ObjectMeta{Namespace: ns, Name: podName},
				Spec:       api.PodSpec{Containers: []api.Container{{Name: "app", Image: "registry.example/app:1"}}},
				Status:     api.PodStatus{Phase: api.PodRunning, PodIP: ip, PodIPs: []api.PodIP{{IP: ip}}},
			}
			if controller {
				pod.Labels = map[string]string{"app": name}
				pod.Status.Conditions = []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue}}
				if i%10 == 9 {
					pod.Spec.Hostname, pod.Spec.Subdomain = fmt.Sprintf("web-%d", j), name
				}
			}
			g.pods = append(g.pods, pod)
		}
		if controller {
			g.slice = nil
		}
		f(g)
	}
}

// memWrite writes one generated Service, its slice, its pods and their
// status; it returns the number of writes.
func memWrite(ctx context.Context, c *client.Client, g memGenerated) (int, error) {
	n := 0
	if err := c.Create(ctx, resServices, g.svc.Namespace, g.svc); err != nil {
		return n, fmt.Errorf("service %s: %w", g.svc.Name, err)
	}
	n++
	if g.slice != nil {
		if err := c.Create(ctx, resSlices, g.slice.Namespace, g.slice); err != nil {
			return n, fmt.Errorf("slice %s: %w", g.slice.Name, err)
		}
		n++
	}
	for _, pod := range g.pods {
		status := pod.Status
		pod.Status = api.PodStatus{}
		if err := c.Create(ctx, resPods, pod.Namespace, pod); err != nil {
			return n, fmt.Errorf("pod %s: %w", pod.Name, err)
		}
		n++
		pod.Status.Phase, pod.Status.PodIP, pod.Status.PodIPs, pod.Status.Conditions = status.Phase, status.PodIP, status.PodIPs, status.Conditions
		if err := c.UpdateStatus(ctx, resPods, pod.Namespace, pod); err != nil {
			return n, fmt.Errorf("pod status %s: %w", pod.Name, err)
		}
		n++
	}
	return n, nil
}

func BenchmarkMemory10kServices(b *testing.B) {
	b.Run("dnsbench", func(b *testing.B) {
		for range b.N {
			runMemory10k(b, false)
		}
	})
	b.Run("endpointslice-controller", func(b *testing.B) {
		for range b.N {
			runMemory10k(b, true)
		}
	})
}

func runMemory10k(b *testing.B, controller bool) {
	disabled := []string{"endpointslice", "scheduler"}
	if controller {
		disabled = []string{"scheduler"}
	}
	// fsync off, no agent; DNS forwards nowhere: nothing leaves 127.0.0.1.
	ts := servertest.Start(b, servertest.Options{DNS: true, DisabledControllers: disabled})
	defer ts.Stop()
	ctx := ctxT(b, 10*time.Minute)
	for i := range memNamespaces {
		mustCreateNS(b, ts.Client(), fmt.Sprintf("ns-%02d", i))
	}
	clients := newClients(b, ts, memWorkers)
	work := make(chan memGenerated, 64)
	var (
		wg      sync.WaitGroup
		written atomic.Int64
		failed  atomic.Bool
	)
	// The live heap (as of each GC) is sampled until the server is idle: a
	// peak well above the final figure is transient memory, not caches.
	var (
		peakLive    atomic.Uint64
		peakProfile bytes.Buffer // the heap profile at the peak
		sampler     sync.WaitGroup
	)
	sampleDone := make(chan struct{})
	stopSampler := sync.OnceFunc(func() { close(sampleDone); sampler.Wait() })
	defer stopSampler()
	sampler.Go(func() {
		// With SKIFF_MEM_PEAK=1 a GC is forced every 2 s, so that the
		// profile kept at the peak holds only live objects (it perturbs the
		// fill, so it is off by default).
		forced := os.Getenv("SKIFF_MEM_PEAK") == "1"
		every := 100 * time.Millisecond
		if forced {
			every = 2 * time.Second
		}
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var profiled uint64
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-sampleDone:
				return
			case <-t.C:
				if forced {
					runtime.GC()
				}
				metrics.Read(live)
				v := live[0].Value.Uint64()
				if v > peakLive.Load() {
					peakLive.Store(v)
				}
				if forced && v > profiled*51/50 { // 2% above the last one kept
					peakProfile.Reset()
					_ = pprof.WriteHeapProfile(&peakProfile)
					profiled = v
				}
			}
		}
	})
	start := time.Now()
	for w := range memWorkers {
		wg.Go(func() {
			for g := range work {
				if failed.Load() {
					continue
				}
				n, err := memWrite(ctx, clients[w], g)
				written.Add(int64(n))
				if err != nil && !failed.Swap(true) {
					b.Error(err)
				}
			}
		})
	}
	var lastSvc, lastPod string
	memEach(controller, func(g memGenerated) {
		if len(g.pods) > 0 {
			lastSvc = g.svc.Name + "." + g.svc.Namespace + ".svc.cluster.local."
			ip := g.pods[len(g.pods)-1].Status.PodIP
			lastPod = strings.ReplaceAll(ip, ".", "-") + "." + g.svc.Namespace + ".pod.cluster.local."
		}
		work <- g
	})
	close(work)
	wg.Wait()
	if failed.Load() {
		b.FailNow()
	}
	fill := time.Since(start)
	clients = nil

	// The informers have caught up when the DNS answers for the last
	// Service and pod written.
	for _, name := range []string{lastSvc, lastPod} {
		eventually(b, 2*time.Minute, "DNS answers "+name, func() (bool, error) {
			m := new(mdns.Msg)
			m.SetQuestion(name, mdns.TypeA)
			r, _, err := (&mdns.Client{Timeout: time.Second}).Exchange(m, ts.DNSAddr())
			return err == nil && r.Rcode == mdns.RcodeSuccess && len(r.Answer) > 0, err
		})
	}
	// The controllers are idle when the revision stands still for 3 s.
	rev, since := "", time.Now()
	eventually(b, 2*time.Minute, "revision stands still", func() (bool, error) {
		var l api.NamespaceList
		if err := ts.Client().List(ctx, resNamespaces, "", client.ListOptions{Limit: 1}, &l); err != nil {
			return false, err
		}
		if l.ResourceVersion != rev {
			rev, since = l.ResourceVersion, time.Now()
		}
		return time.Since(since) >= 3*time.Second, nil
	})

	stopSampler()
	idle := procStatus(b) // what `ps` shows of an idle server, before a forced GC
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(samples)
	goHeld := samples[0].Value.Uint64() - samples[1].Value.Uint64()
	st := procStatus(b)
	var dbSize int64
	if fi, err := os.Stat(filepath.Join(ts.DataDir(), "db", "skiff.db")); err == nil {
		dbSize = fi.Size()
	}

	const mib = 1 << 20
	b.ReportMetric(float64(written.Load())/fill.Seconds(), "writes/s")
	b.ReportMetric(float64(ms.HeapAlloc)/mib, "heap-live-MiB")
	b.ReportMetric(float64(peakLive.Load())/mib, "peak-live-MiB")
	b.ReportMetric(float64(ms.HeapInuse)/mib, "heap-inuse-MiB")
	b.ReportMetric(float64(goHeld)/mib, "go-MiB")
	b.ReportMetric(float64(st["VmRSS"])/1024, "rss-MiB")
	b.ReportMetric(float64(st["RssAnon"])/1024, "rss-anon-MiB")
	b.ReportMetric(float64(st["RssFile"])/1024, "rss-file-MiB")
	b.ReportMetric(float64(idle["VmRSS"])/1024, "rss-idle-MiB")
	b.ReportMetric(float64(st["VmHWM"])/1024, "rss-peak-MiB")
	b.ReportMetric(float64(dbSize)/mib, "db-MiB")
	b.Logf("%d writes in %v (rev %s); live heap %.1f MiB (peak %.1f), heap in use %.1f MiB, Go runtime %.1f MiB, VmRSS %.1f MiB (anon %.1f, file %.1f; %.1f before the forced GC), peak VmHWM %.1f MiB, db %.1f MiB, goroutines %d",
		written.Load(), fill.Round(time.Millisecond), rev, float64(ms.HeapAlloc)/mib, float64(peakLive.Load())/mib,
		float64(ms.HeapInuse)/mib, float64(goHeld)/mib,
		float64(st["VmRSS"])/1024, float64(st["RssAnon"])/1024, float64(st["RssFile"])/1024, float64(idle["VmRSS"])/1024,
		float64(st["VmHWM"])/1024, float64(dbSize)/mib, runtime.NumGoroutine())

	path := os.Getenv("SKIFF_HEAP_PROFILE")
	if path == "" {
		path = filepath.Join(os.TempDir(), "skiff-mem-bench-heap.pprof")
	}
	if controller {
		path = strings.TrimSuffix(path, ".pprof") + "-endpointslice.pprof"
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
	b.Logf("heap profile: go tool pprof -top -sample_index=inuse_space %s", path)
	if peakProfile.Len() > 0 {
		peakPath := strings.TrimSuffix(path, ".pprof") + "-peak.pprof"
		if err := os.WriteFile(peakPath, peakProfile.Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
		b.Logf("heap profile at the peak of the fill: %s", peakPath)
	}

	// What the bbolt file holds, once the server has stopped.
	ts.Stop()
	db, err := bolt.Open(filepath.Join(ts.DataDir(), "db", "skiff.db"), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for _, name := range []string{"kv", "log"} {
			bk := tx.Bucket([]byte(name))
			if bk == nil {
				return fmt.Errorf("no bucket %q", name)
			}
			st := bk.Stats()
			alloc := st.BranchAlloc + st.LeafAlloc
			b.ReportMetric(float64(alloc)/mib, name+"-MiB")
			b.Logf("bucket %s: %d keys, %d leaf pages + %d overflow, %.1f MiB allocated, %.1f MiB in use (%.0f%%)",
				name, st.KeyN, st.LeafPageN, st.LeafOverflowN, float64(alloc)/mib,
				float64(st.BranchInuse+st.LeafInuse)/mib, 100*float64(st.BranchInuse+st.LeafInuse)/float64(max(alloc, 1)))
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	dst := db.Stats()
	b.Logf("db: page size %d, %d free pages, %d pending", db.Info().PageSize, dst.FreePageN, dst.PendingPageN)
}

// procStatus reads the kB fields of /proc/self/status.
func procStatus(t testing.TB) map[string]int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		v = strings.TrimSpace(v)
		if !ok || !strings.HasSuffix(v, " kB") {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(v, "kB")), 10, 64); err == nil {
			out[k] = n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if out["VmRSS"] == 0 {
		t.Fatal("no VmRSS in /proc/self/status")
	}
	return out
}
