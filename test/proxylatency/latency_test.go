package proxylatency_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resources = api.Resources()
	podInfo   = api.Lookup(resources, "v1", "pods")
	svcInfo   = api.Lookup(resources, "v1", "services")
	sliceInfo = api.Lookup(resources, "discovery.k8s.io/v1", "endpointslices")
	leaseInfo = api.Lookup(resources, "coordination.k8s.io/v1", "leases")
)

// envInt reads a positive integer from the environment, else def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// BenchmarkNetworkProgramming measures pod Ready → rule in the kernel at
// SKIFF_BENCH_SERVICES Services (default 1,000, one endpoint each): the
// target pod's Ready condition is flipped through pods/status
// SKIFF_BENCH_FLIPS times each way (default 100), and each flip is timed
// from the status write's response until a probe connection from the node
// namespace to the Service's ClusterIP shows the new rule (connected to the
// pod after Ready=True, refused after Ready=False). Between flips it waits
// a random SKIFF_BENCH_GAP_MS..2×SKIFF_BENCH_GAP_MS (default 100: the
// proxy's minimum sync period, so flips are independent changes rather
// than a burst the proxy is meant to coalesce).
//
// Reported: p50/p99/max of that latency; the same for the moment the
// target's EndpointSlice update reaches a watch of the test's own (API +
// endpointslice controller share); the proxy's partial sync mean; and the
// mean of the proxy's network_programming_duration_seconds (from the
// slice's trigger-time annotation, which has the second precision of the
// pod's lastTransitionTime, so it over-counts by up to 1 s, as
// Kubernetes' does).
//
// Its floor, in the same run, after the flips (apiFloor): the path from a
// status write's response to the rule holds at least one more API write
// (the controller's slice) and its watch event (to the proxy), so the
// benchmark times SKIFF_BENCH_FLIPS writes of an object nothing else reads
// (a Lease in default: its controller, nodelifecycle, is off and watches
// kube-node-lease) from sending each to a watch of its own seeing it, and
// reports floor-p50-ms, floor-p99-ms, p50-over-floor and p99-over-floor.
// The kernel's share is not in it: the backends' PartialSync benchmarks
// report the raw load of one change (raw-ms).
//
//	go test -run '^$' -bench NetworkProgramming -benchtime 1x ./test/proxylatency/
func BenchmarkNetworkProgramming(b *testing.B) {
	netnstest.RequireRoot(b)
	for _, mode := range []string{"iptables", "nftables"} {
		b.Run(mode, func(b *testing.B) { benchProgramming(b, mode) })
	}
}

// env is a running control plane, node and proxy.
type env struct {
	ctx       context.Context
	c         *client.Client
	node      *proxytest.Node
	pod       *api.Pod // pod-0000, the real pod behind svc-0000
	vip       string   // svc-0000's ClusterIP:80
	reg       *prometheus.Registry
	sliceSeen chan sliceEvent // svc-0000's slice updates, from a watch of the test's own
	// lastSync is the backend's last sync time (iptables only; else 0).
	lastSync func() time.Duration
}

// start builds everything with n Services and waits until the proxy has
// programmed svc-0000. It all stops at the end of the test.
func start(tb testing.TB, mode string, n int) *env {
	tb.Helper()
	netnstest.RequireRoot(tb)
	before := proxytest.HostRules(tb)
	tb.Cleanup(func() {
		if after := proxytest.HostRules(tb); after != before {
			tb.Errorf("the machine's own iptables changed during the test")
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)

	// The control plane: a real server with its endpointslice controller,
	// no agent; the pods are bound to the node by the test, and the node
	// lifecycle controller would mark them NotReady (no node heartbeats).
	c := servertest.Start(tb, servertest.Options{Sync: true, DisabledControllers: []string{"nodelifecycle", "scheduler"}}).Client()

	// The node: namespaces with a bridge and one real pod answering its
	// name; the other Services' pods exist in the API only.
	node := proxytest.NewNode(tb)
	target := node.AddPod("pod0", netip.MustParseAddr("10.244.0.2"))

	pods := createObjects(ctx, tb, c, n, target.IP.String())
	waitSlices(ctx, tb, c, n)
	var svc api.Service
	if err := c.Get(ctx, svcInfo, "default", "svc-0000", &svc); err != nil {
		tb.Fatal(err)
	}
	e := &env{ctx: ctx, c: c, node: node, pod: pods[0], vip: net.JoinHostPort(svc.Spec.ClusterIP, "80"),
		reg: prometheus.NewRegistry(), sliceSeen: make(chan sliceEvent, 64)}

	// The test's own watch of the target's slice: when the API delivered
	// the controller's write (the proxy's informer sees it about then).
	watch := client.NewInformer(c, sliceInfo, client.InformerOptions{Namespace: "default",
		LabelSelector: api.LabelServiceName + "=svc-0000"})
	watch.AddEventHandler(client.HandlerFuncs{UpdateFunc: func(_, obj api.Object) {
		if sl, ok := obj.(*api.EndpointSlice); ok {
			select {
			case e.sliceSeen <- sliceEvent{at: time.Now(), ready: sliceReady(sl)}:
			default:
			}
		}
	}})
	go func() { _ = watch.Run(ctx) }()

	// The proxy, as the agent runs it.
	inf := client.NewSharedInformers(c)
	inf.For(svcInfo, client.InformerOptions{})
	inf.For(sliceInfo, client.InformerOptions{})
	inf.Start(ctx)
	var backendMu sync.Mutex
	var backend any
	e.lastSync = func() time.Duration {
		backendMu.Lock()
		defer backendMu.Unlock()
		if st, ok := backend.(interface{ LastStats() iptables.Stats }); ok {
			return st.LastStats().Total
		}
		return 0
	}
	proxyDone := make(chan error, 1)
	go func() {
		proxyDone <- netagent.RunProxy(ctx, netagent.ProxyParams{
			NodeName: proxytest.NodeName, NodeIPs: []netip.Addr{proxytest.NodeIP}, Mode: mode,
			PodCIDR: proxytest.PodCIDR, ClusterCIDR: proxytest.ClusterCIDR, ServiceCIDR: proxytest.ServiceCIDR,
			Client: c, Informers: inf, NetNS: node.Do, Logger: slog.New(slog.DiscardHandler), Registerer: e.reg,
			OnBackend: func(_ string, b any) {
				backendMu.Lock()
				defer backendMu.Unlock()
				backend = b
			},
		})
	}()
	tb.Cleanup(func() {
		cancel()
		if err := <-proxyDone; err != nil {
			tb.Errorf("RunProxy: %v", err)
		}
		inf.Wait()
	})
	began := time.Now()
	if _, err := waitRule(node.NetNS, e.vip, true, 60*time.Second); err != nil {
		tb.Fatalf("first sync: %v", err)
	}
	tb.Logf("%s: %d Services programmed %v after the proxy started", mode, n, time.Since(began).Round(time.Millisecond))
	return e
}

// flip writes the pod's status with Ready toggled, as a node does, and
// returns the new value and the time the write's response came back.
func (e *env) flip(tb testing.TB) (bool, time.Time) {
	tb.Helper()
	ready := !api.IsPodReady(e.pod)
	for len(e.sliceSeen) > 0 {
		<-e.sliceSeen
	}
	setReady(e.pod, ready, time.Now())
	if err := e.c.UpdateStatus(e.ctx, podInfo, "default", e.pod); err != nil {
		tb.Fatalf("flip to ready=%v: %v", ready, err)
	}
	return ready, time.Now()
}

// TestProgrammingMetric: a Ready flip reaches the kernel, and the proxy
// run as the agent runs it observes network_programming_duration_seconds
// from the controller's trigger-time annotation into the Registerer it
// was given (root; a few Services, both modes).
func TestProgrammingMetric(t *testing.T) {
	for _, mode := range []string{"iptables", "nftables"} {
		t.Run(mode, func(t *testing.T) {
			e := start(t, mode, 3)
			const name = "kubeproxy_network_programming_duration_seconds"
			// Trigger times before the proxy started are not measured
			// (as in kube-proxy), and the pod's transition time is
			// truncated to the second: flip only after a whole second.
			time.Sleep(1100 * time.Millisecond)
			before := histogram(t, e.reg, name)
			for range 2 {
				ready, _ := e.flip(t)
				if _, err := waitRule(e.node.NetNS, e.vip, ready, 20*time.Second); err != nil {
					t.Fatal(err)
				}
				if ready {
					if got, err := proxytest.HTTPGet(e.node.NetNS, "http://"+e.vip+"/"); err != nil || !strings.HasPrefix(got, "pod0 ") {
						t.Fatalf("GET through %s: %q, %v", e.vip, got, err)
					}
				}
			}
			// The metric is observed at the end of the sync, which may
			// finish a moment after the rule is visible.
			deadline := time.Now().Add(10 * time.Second)
			got := histogram(t, e.reg, name).minus(before)
			for got.count < 2 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
				got = histogram(t, e.reg, name).minus(before)
			}
			if got.count < 2 {
				t.Fatalf("%s: %d new samples after two flips, want 2", name, got.count)
			}
			// From a second-precision transition time: between 0 and 1 s
			// plus the real latency.
			if m := got.mean(); m < 0 || m > 5 {
				t.Errorf("%s: mean %.3f s of the flips' samples, want 0..5 s", name, m)
			}
		})
	}
}

func benchProgramming(b *testing.B, mode string) {
	nServices := envInt("SKIFF_BENCH_SERVICES", 1000)
	flips := envInt("SKIFF_BENCH_FLIPS", 100)
	gap := time.Duration(envInt("SKIFF_BENCH_GAP_MS", 100)) * time.Millisecond
	e := start(b, mode, nServices)
	node, reg, vip, sliceSeen, lastSync := e.node, e.reg, e.vip, e.sliceSeen, e.lastSync
	partialBefore := histogram(b, reg, "kubeproxy_sync_partial_proxy_rules_duration_seconds")
	fullBefore := histogram(b, reg, "kubeproxy_sync_full_proxy_rules_duration_seconds")
	programmingBefore := histogram(b, reg, "kubeproxy_network_programming_duration_seconds")

	var lat, sliceLat [2][]time.Duration // by the new Ready value (0 false, 1 true)
	type flip struct {
		ready      bool
		lat, slice time.Duration
		full       bool          // a (periodic) full sync ran during the flip
		sync       time.Duration // the backend's last sync (iptables only)
		// queued: the proxy's handler saw the change (its informer
		// delivered it); synced: its last sync ended; both from the
		// proxy's gauges, relative to the status write's response.
		queued, synced time.Duration
	}
	var log []flip
	fulls := func() uint64 { return histogram(b, reg, "kubeproxy_sync_full_proxy_rules_duration_seconds").count }
	b.ResetTimer()
	for range b.N {
		for i := range 2 * flips {
			time.Sleep(gap + rand.N(gap))
			fullsBefore := fulls()
			ready, t0 := e.flip(b)
			t1, err := waitRule(node.NetNS, vip, ready, 10*time.Second)
			if err != nil {
				b.Fatalf("flip %d to ready=%v: %v", i, ready, err)
			}
			idx := 0
			if ready {
				idx = 1
				// Check the rule leads to the pod (untimed).
				if got, err := proxytest.HTTPGet(node.NetNS, "http://"+vip+"/"); err != nil || !strings.HasPrefix(got, "pod0 ") {
					b.Fatalf("flip %d: GET through %s: %q, %v", i, vip, got, err)
				}
			}
			lat[idx] = append(lat[idx], t1.Sub(t0))
			sliceLat[idx] = append(sliceLat[idx], waitSliceEvent(b, sliceSeen, ready).Sub(t0))
			// The rule can be visible before the proxy records the end of
			// its sync: give it a moment.
			synced := gauge(b, reg, "kubeproxy_sync_proxy_rules_last_timestamp_seconds")
			for wait := time.Now().Add(time.Second); synced.Before(t0) && time.Now().Before(wait); {
				time.Sleep(time.Millisecond)
				synced = gauge(b, reg, "kubeproxy_sync_proxy_rules_last_timestamp_seconds")
			}
			log = append(log, flip{ready, lat[idx][len(lat[idx])-1], sliceLat[idx][len(sliceLat[idx])-1], fulls() != fullsBefore, lastSync(),
				gauge(b, reg, "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds").Sub(t0), synced.Sub(t0)})
		}
	}
	b.StopTimer()

	all := append(slices.Clone(lat[0]), lat[1]...)
	allSlice := append(slices.Clone(sliceLat[0]), sliceLat[1]...)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(pct(all, 50)), "p50-ms")
	b.ReportMetric(ms(pct(all, 99)), "p99-ms")
	b.ReportMetric(ms(pct(all, 100)), "max-ms")
	b.ReportMetric(ms(pct(allSlice, 50)), "slice-p50-ms")
	b.ReportMetric(ms(pct(allSlice, 99)), "slice-p99-ms")
	partial := histogram(b, reg, "kubeproxy_sync_partial_proxy_rules_duration_seconds").minus(partialBefore)
	programming := histogram(b, reg, "kubeproxy_network_programming_duration_seconds").minus(programmingBefore)
	b.ReportMetric(partial.mean()*1000, "partial-sync-ms")
	full := histogram(b, reg, "kubeproxy_sync_full_proxy_rules_duration_seconds").minus(fullBefore)
	var quiet []time.Duration // flips no periodic full sync overlapped
	for _, f := range log {
		if !f.full {
			quiet = append(quiet, f.lat)
		}
	}
	b.ReportMetric(ms(pct(quiet, 99)), "p99-no-full-sync-ms")
	b.ReportMetric(programming.mean(), "metric-mean-s")
	floor := apiFloor(b, e, flips)
	if f := pct(floor, 50); f > 0 {
		b.ReportMetric(ms(f), "floor-p50-ms")
		b.ReportMetric(float64(pct(all, 50))/float64(f), "p50-over-floor")
	}
	if f := pct(floor, 99); f > 0 {
		b.ReportMetric(ms(f), "floor-p99-ms")
		b.ReportMetric(float64(pct(all, 99))/float64(f), "p99-over-floor")
	}
	for idx, name := range []string{"ready=false (refused)", "ready=true (reaches the pod)"} {
		b.Logf("%s, %s, %d flips: rule in the kernel p50 %.1f ms p99 %.1f ms max %.1f ms; slice seen p50 %.1f ms p99 %.1f ms",
			mode, name, len(lat[idx]), ms(pct(lat[idx], 50)), ms(pct(lat[idx], 99)), ms(pct(lat[idx], 100)),
			ms(pct(sliceLat[idx], 50)), ms(pct(sliceLat[idx], 99)))
	}
	slices.SortFunc(log, func(x, y flip) int { return int(y.lat - x.lat) })
	for _, f := range log[:min(5, len(log))] {
		backend := ""
		if f.sync > 0 {
			backend = fmt.Sprintf(", backend sync %.1f ms", ms(f.sync))
		}
		b.Logf("%s: slow flip: ready=%v %.1f ms (slice seen at %.1f ms, the proxy's handler at %.1f ms, its sync ended at %.1f ms%s), full sync during it: %v",
			mode, f.ready, ms(f.lat), ms(f.slice), ms(f.queued), ms(f.synced), backend, f.full)
	}
	b.Logf("%s: %d partial syncs, mean %.1f ms; %d periodic full syncs, mean %.0f ms, overlapping %d flips (p99 of the other %d: %.1f ms); network_programming_duration_seconds: %d samples, mean %.3f s",
		mode, partial.count, partial.mean()*1000, full.count, full.mean()*1000, len(log)-len(quiet), len(quiet), ms(pct(quiet, 99)),
		programming.count, programming.mean())
}

// apiFloor times n updates of a Lease in default, each from sending it
// until an informer of its own delivers it, 10–20 ms apart: one API write
// (bbolt with fsync, HTTPS) and its watch event on this machine, the least
// the control plane's share of a flip holds.
func apiFloor(b *testing.B, e *env, n int) []time.Duration {
	b.Helper()
	lease := &api.Lease{ObjectMeta: api.ObjectMeta{Name: "floor", Namespace: "default"}}
	if err := e.c.Create(e.ctx, leaseInfo, "default", lease); err != nil {
		b.Fatalf("floor: %v", err)
	}
	seen := make(chan string, 1)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	inf := client.NewInformer(e.c, leaseInfo, client.InformerOptions{Namespace: "default"})
	inf.AddEventHandler(client.HandlerFuncs{UpdateFunc: func(_, obj api.Object) {
		if l, ok := obj.(*api.Lease); ok && l.Spec.HolderIdentity != nil {
			select {
			case seen <- *l.Spec.HolderIdentity:
			default:
			}
		}
	}})
	done := make(chan struct{})
	go func() { _ = inf.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	client.WaitForCacheSync(ctx, inf.HasSynced)
	var lat []time.Duration
	for i := range n {
		time.Sleep(10*time.Millisecond + rand.N(10*time.Millisecond))
		holder := strconv.Itoa(i)
		lease.Spec.HolderIdentity = &holder
		t0 := time.Now()
		if err := e.c.Update(e.ctx, leaseInfo, "default", lease); err != nil {
			b.Fatalf("floor: update %d: %v", i, err)
		}
		for got := ""; got != holder; {
			select {
			case got = <-seen:
			case <-time.After(10 * time.Second):
				b.Fatalf("floor: update %d not seen by the watch in 10 s", i)
			}
		}
		lat = append(lat, time.Since(t0))
	}
	return lat
}

// createObjects creates n Services svc-NNNN, each selecting one pod
// pod-NNNN bound to the node, Running and Ready; pod-0000 has targetIP.
// It returns the pods as stored.
func createObjects(ctx context.Context, b testing.TB, c *client.Client, n int, targetIP string) []*api.Pod {
	b.Helper()
	pods := make([]*api.Pod, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range next {
				pods[i], errs[i] = createPair(ctx, c, i, targetIP)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatalf("create objects: %v", err)
	}
	return pods
}

func createPair(ctx context.Context, c *client.Client, i int, targetIP string) (*api.Pod, error) {
	name := fmt.Sprintf("svc-%04d", i)
	sel := map[string]string{"app": name}
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec: api.ServiceSpec{Selector: sel,
			Ports: []api.ServicePort{{Name: "http", Protocol: api.ProtocolTCP, Port: 80, TargetPort: api.FromInt32(proxytest.PodHTTPPort)}}}}
	if err := c.Create(ctx, svcInfo, "default", svc); err != nil {
		return nil, err
	}
	ip := targetIP
	if i > 0 {
		// Addresses outside the node's pod range: never sent traffic.
		ip = fmt.Sprintf("10.244.%d.%d", 1+i/250, 1+i%250)
	}
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("pod-%04d", i), Namespace: "default", Labels: sel},
		Spec: api.PodSpec{NodeName: proxytest.NodeName,
			Containers: []api.Container{{Name: "app", Image: "none"}}}}
	if err := c.Create(ctx, podInfo, "default", pod); err != nil {
		return nil, err
	}
	pod.Status.Phase = api.PodRunning
	pod.Status.PodIP = ip
	pod.Status.PodIPs = []api.PodIP{{IP: ip}}
	pod.Status.HostIP = proxytest.NodeIP.String()
	setReady(pod, true, time.Now())
	if err := c.UpdateStatus(ctx, podInfo, "default", pod); err != nil {
		return nil, err
	}
	return pod, nil
}

// setReady sets the pod's Ready condition, with a new transition time
// when it changes, as a node does.
func setReady(pod *api.Pod, ready bool, now time.Time) {
	status := api.ConditionFalse
	if ready {
		status = api.ConditionTrue
	}
	if c := api.GetPodCondition(&pod.Status, api.PodReady); c != nil {
		if c.Status != status {
			c.Status = status
			c.LastTransitionTime = api.NewTime(now)
		}
		return
	}
	pod.Status.Conditions = append(pod.Status.Conditions, api.PodCondition{
		Type: api.PodReady, Status: status, LastTransitionTime: api.NewTime(now),
	})
}

// waitSlices waits until every Service has a slice with a ready endpoint.
func waitSlices(ctx context.Context, b testing.TB, c *client.Client, n int) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var list api.EndpointSliceList
		if err := c.List(ctx, sliceInfo, "default", client.ListOptions{}, &list); err != nil {
			b.Fatal(err)
		}
		ready := 0
		for i := range list.Items {
			if sliceReady(&list.Items[i]) {
				ready++
			}
		}
		if ready >= n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d Services have a ready endpoint", ready, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func sliceReady(sl *api.EndpointSlice) bool {
	for _, ep := range sl.Endpoints {
		if ep.Conditions.Ready != nil && *ep.Conditions.Ready {
			return true
		}
	}
	return false
}

type sliceEvent struct {
	at    time.Time
	ready bool
}

func waitSliceEvent(b testing.TB, ch <-chan sliceEvent, ready bool) time.Time {
	b.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-ch:
			if ev.ready == ready {
				return ev.at
			}
		case <-timeout:
			b.Fatalf("no slice update with ready=%v", ready)
		}
	}
}

// waitRule probes vip from ns until the rule for the wanted state is in
// the kernel (a connection succeeds for ready, is refused for not
// ready) and returns when it saw it. Each probe is a new connection, so
// it takes the rules of that moment (no conntrack entry to reuse).
func waitRule(ns *proxytest.NetNS, vip string, ready bool, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		conn, err := ns.Dial("tcp", vip, nil, 50*time.Millisecond)
		now := time.Now()
		if err == nil {
			conn.Close()
			if ready {
				return now, nil
			}
			last = errors.New("still connects")
		} else {
			if !ready && errors.Is(err, syscall.ECONNREFUSED) {
				return now, nil
			}
			last = err
		}
		if now.After(deadline) {
			return now, fmt.Errorf("rule for ready=%v not in the kernel after %v: last probe: %v", ready, timeout, last)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// pct is the p-th percentile (nearest rank) of ds.
func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(i, 0)]
}

type hist struct {
	count uint64
	sum   float64
}

func (h hist) minus(o hist) hist { return hist{h.count - o.count, h.sum - o.sum} }
func (h hist) mean() float64 {
	if h.count == 0 {
		return 0
	}
	return h.sum / float64(h.count)
}

// gauge reads a timestamp gauge (seconds since the epoch) from reg.
func gauge(b testing.TB, reg *prometheus.Registry, name string) time.Time {
	b.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && mf.GetType() == dto.MetricType_GAUGE && len(mf.Metric) == 1 {
			v := mf.Metric[0].GetGauge().GetValue()
			sec, frac := math.Modf(v)
			return time.Unix(int64(sec), int64(frac*1e9))
		}
	}
	return time.Time{}
}

// histogram reads one histogram from reg.
func histogram(b testing.TB, reg *prometheus.Registry, name string) hist {
	b.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && mf.GetType() == dto.MetricType_HISTOGRAM && len(mf.Metric) == 1 {
			h := mf.Metric[0].GetHistogram()
			return hist{h.GetSampleCount(), h.GetSampleSum()}
		}
	}
	return hist{}
}
