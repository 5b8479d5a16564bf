package source

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/dns"
)

var (
	resources = api.Resources()
	resSvc    = api.Lookup(resources, "v1", "services")
	resSlices = api.Lookup(resources, "discovery.k8s.io/v1", "endpointslices")
	resPods   = api.Lookup(resources, "v1", "pods")
)

// fakeLW lists a fixed set of objects (after gate is closed, when set) and
// then streams the events sent on events.
type fakeLW struct {
	items  []api.Object
	gate   chan struct{}
	events chan client.Event
}

func newFakeLW(items ...api.Object) *fakeLW {
	return &fakeLW{items: items, events: make(chan client.Event)}
}

func (f *fakeLW) List(ctx context.Context, _ *api.ResourceInfo, _ string, _ client.ListOptions, into any) error {
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	l, ok := into.(*client.RawList)
	if !ok {
		return errors.New("fake: list into unexpected type")
	}
	for _, obj := range f.items {
		b, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		l.Items = append(l.Items, b)
	}
	l.Metadata.ResourceVersion = "1"
	return nil
}

func (f *fakeLW) Watch(ctx context.Context, _ *api.ResourceInfo, _ string, _ client.ListOptions) (*client.Watcher, error) {
	return client.NewWatcher(ctx, func(ctx context.Context, send func(client.Event) bool) error {
		for {
			select {
			case ev := <-f.events:
				if !send(ev) {
					return nil
				}
			case <-ctx.Done():
				return nil
			}
		}
	}), nil
}

// send delivers one watch event of obj; it fails the test after 5 s.
func (f *fakeLW) send(t *testing.T, typ string, obj api.Object) {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case f.events <- client.Event{Type: typ, Object: b}:
	case <-time.After(5 * time.Second):
		t.Fatalf("watch event %s not taken", typ)
	}
}

// recorder is a dns.ResponseWriter that keeps the answer; the client is on
// loopback, which the server always answers.
type recorder struct {
	msg *mdns.Msg
}

func (r *recorder) LocalAddr() net.Addr { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53} }
func (r *recorder) RemoteAddr() net.Addr {
	return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}
func (r *recorder) WriteMsg(m *mdns.Msg) error {
	r.msg = m.Copy()
	return nil
}
func (r *recorder) Write(b []byte) (int, error) {
	m := new(mdns.Msg)
	if err := m.Unpack(b); err != nil {
		return 0, err
	}
	r.msg = m
	return len(b), nil
}
func (r *recorder) Close() error        { return nil }
func (r *recorder) TsigStatus() error   { return nil }
func (r *recorder) TsigTimersOnly(bool) {}
func (r *recorder) Hijack()             {}

// ask asks srv for name and type and returns the rcode and the answer count.
func ask(t *testing.T, srv *dns.Server, name string, qtype uint16) (int, int) {
	t.Helper()
	q := new(mdns.Msg)
	q.SetQuestion(name, qtype)
	w := &recorder{}
	srv.ServeDNS(w, q)
	if w.msg == nil {
		t.Fatalf("%s: no answer", name)
	}
	return w.msg.Rcode, len(w.msg.Answer)
}

// waitAnswer polls until name answers rcode with n answers.
func waitAnswer(t *testing.T, srv *dns.Server, name string, qtype uint16, rcode, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rc, got := ask(t, srv, name, qtype)
		if rc == rcode && got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: rcode %s, %d answers; want %s, %d", name, mdns.TypeToString[qtype],
				mdns.RcodeToString[rc], got, mdns.RcodeToString[rcode], n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fixture: a ClusterIP Service, a headless one with a slice, and a pod.
func fixture() (svcs, slices, pods *fakeLW) {
	web := &api.Service{ObjectMeta: meta("default", "web"), Spec: api.ServiceSpec{ClusterIP: "10.96.0.10",
		Ports: []api.ServicePort{{Name: "http", Protocol: api.ProtocolTCP, Port: 80}}}}
	nginx := &api.Service{ObjectMeta: meta("default", "nginx"), Spec: api.ServiceSpec{ClusterIP: api.ClusterIPNone}}
	sl := &api.EndpointSlice{ObjectMeta: meta("default", "nginx-1"), AddressType: "IPv4",
		Endpoints: []api.Endpoint{
			{Addresses: []string{"10.244.1.5"}, Hostname: ptr("web-0")},
			{Addresses: []string{"10.244.1.6"}, Hostname: ptr("web-1")},
		}}
	sl.Labels = map[string]string{api.LabelServiceName: "nginx"}
	pod := &api.Pod{ObjectMeta: meta("default", "web-0"), Status: api.PodStatus{Phase: api.PodRunning, PodIPs: []api.PodIP{{IP: "10.244.1.5"}}}}
	return newFakeLW(web, nginx), newFakeLW(sl), newFakeLW(pod)
}

// run starts the three informers over the fakes, and the Source; it stops
// them at cleanup.
func run(t *testing.T, svcs, slices, pods *fakeLW) (*dns.Store, *dns.Server, chan error) {
	t.Helper()
	store := dns.NewStore()
	srv, err := dns.NewServer(dns.Config{Upstreams: []string{}}, store)
	if err != nil {
		t.Fatal(err)
	}
	si := client.NewInformerFor(svcs, resSvc, client.InformerOptions{})
	ei := client.NewInformerFor(slices, resSlices, client.InformerOptions{})
	pi := client.NewInformerFor(pods, resPods, client.InformerOptions{})
	src := New(store, si, ei, pi, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, inf := range []*client.Informer{si, ei, pi} {
		wg.Go(func() { _ = inf.Run(ctx) })
	}
	done := make(chan error, 1)
	wg.Go(func() { done <- src.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return store, srv, done
}

func TestSourceSyncAndChanges(t *testing.T) {
	svcs, slices, pods := fixture()
	pods.gate = make(chan struct{})
	store, srv, done := run(t, svcs, slices, pods)

	// Services and slices are listed, pods are not: still SERVFAIL.
	time.Sleep(200 * time.Millisecond)
	if store.Synced() {
		t.Fatal("store synced before the pods were listed")
	}
	if rc, _ := ask(t, srv, "web.default.svc.cluster.local.", mdns.TypeA); rc != mdns.RcodeServerFailure {
		t.Fatalf("before sync: rcode %s, want SERVFAIL", mdns.RcodeToString[rc])
	}
	close(pods.gate)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the informers synced")
	}
	if !store.Synced() {
		t.Fatal("Run returned but the store is not synced")
	}

	cases := []struct {
		name  string
		qtype uint16
		rcode int
		n     int
	}{
		{"web.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, 1},
		{"_http._tcp.web.default.svc.cluster.local.", mdns.TypeSRV, mdns.RcodeSuccess, 1},
		{"nginx.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, 2},
		{"web-1.nginx.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, 1},
		{"10-244-1-5.default.pod.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, 1},
		{"missing.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeNameError, 0},
	}
	for _, c := range cases {
		if rc, n := ask(t, srv, c.name, c.qtype); rc != c.rcode || n != c.n {
			t.Errorf("%s: rcode %s, %d answers; want %s, %d", c.name, mdns.RcodeToString[rc], n, mdns.RcodeToString[c.rcode], c.n)
		}
	}

	// Updates: a new ClusterIP, an endpoint gone not ready.
	web := &api.Service{ObjectMeta: meta("default", "web"), Spec: api.ServiceSpec{ClusterIPs: []string{"10.96.0.10", "fd00::10"}}}
	svcs.send(t, client.EventModified, web)
	waitAnswer(t, srv, "web.default.svc.cluster.local.", mdns.TypeAAAA, mdns.RcodeSuccess, 1)
	sl := &api.EndpointSlice{ObjectMeta: meta("default", "nginx-1"), AddressType: "IPv4",
		Endpoints: []api.Endpoint{
			{Addresses: []string{"10.244.1.5"}, Hostname: ptr("web-0")},
			{Addresses: []string{"10.244.1.6"}, Hostname: ptr("web-1"), Conditions: api.EndpointConditions{Ready: ptr(false)}},
		}}
	sl.Labels = map[string]string{api.LabelServiceName: "nginx"}
	slices.send(t, client.EventModified, sl)
	waitAnswer(t, srv, "nginx.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, 1)

	// A slice losing its service-name label leaves the Service without
	// endpoints: a headless Service without ready endpoints is NXDOMAIN.
	unlabeled := *sl
	unlabeled.Labels = nil
	slices.send(t, client.EventModified, &unlabeled)
	waitAnswer(t, srv, "nginx.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeNameError, 0)

	// A finished pod no longer answers for its IP.
	done2 := &api.Pod{ObjectMeta: meta("default", "web-0"), Status: api.PodStatus{Phase: api.PodSucceeded, PodIPs: []api.PodIP{{IP: "10.244.1.5"}}}}
	pods.send(t, client.EventModified, done2)
	waitAnswer(t, srv, "10-244-1-5.default.pod.cluster.local.", mdns.TypeA, mdns.RcodeNameError, 0)

	// Deletes.
	svcs.send(t, client.EventDeleted, web)
	waitAnswer(t, srv, "web.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeNameError, 0)
	pod := &api.Pod{ObjectMeta: meta("default", "p2"), Status: api.PodStatus{PodIPs: []api.PodIP{{IP: "10.244.2.2"}}}}
	pods.send(t, client.EventAdded, pod)
	waitAnswer(t, srv, "10-244-2-2.default.pod.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, 1)
	pods.send(t, client.EventDeleted, pod)
	waitAnswer(t, srv, "10-244-2-2.default.pod.cluster.local.", mdns.TypeA, mdns.RcodeNameError, 0)
	slices.send(t, client.EventAdded, sl)
	waitAnswer(t, srv, "nginx.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, 1)
	slices.send(t, client.EventDeleted, sl)
	waitAnswer(t, srv, "nginx.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeNameError, 0)
	if st := store.Stats(); st.Services != 1 || st.EndpointSlices != 0 || st.Pods != 0 {
		t.Errorf("stats after deletes: %+v, want 1 service (nginx), no slices, no pods", st)
	}
}

func TestSourceRunEndsUnsynced(t *testing.T) {
	svcs, slices, pods := fixture()
	slices.gate = make(chan struct{}) // never listed
	store := dns.NewStore()
	si := client.NewInformerFor(svcs, resSvc, client.InformerOptions{})
	ei := client.NewInformerFor(slices, resSlices, client.InformerOptions{})
	pi := client.NewInformerFor(pods, resPods, client.InformerOptions{})
	src := New(store, si, ei, pi, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	for _, inf := range []*client.Informer{si, ei, pi} {
		wg.Go(func() { _ = inf.Run(ctx) })
	}
	err := src.Run(ctx)
	wg.Wait()
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run = %v, want a deadline error", err)
	}
	if store.Synced() {
		t.Fatal("store synced although the slices were never listed")
	}
}
