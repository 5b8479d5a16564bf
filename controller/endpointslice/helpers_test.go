package endpointslice_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/endpointslice"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resources   = api.Resources()
	nsInfo      = api.Lookup(resources, "v1", "namespaces")
	podInfo     = api.Lookup(resources, "v1", "pods")
	serviceInfo = api.Lookup(resources, "v1", "services")
	sliceInfo   = api.Lookup(resources, "discovery.k8s.io/v1", "endpointslices")
)

// env is a real API server (bbolt, HTTPS on 127.0.0.1) with the built-in
// endpointslice controller disabled (once the server wires it), plus this
// test's own controller fed by its own informers.
type env struct {
	tb   testing.TB
	ctx  context.Context
	c    *client.Client
	ctl  *endpointslice.Controller
	opts envOptions

	stopCtl func()
}

type envOptions struct {
	// fsync keeps the store's fsync on (the default for a real server).
	fsync bool
	// disable lists more built-in controllers to leave out ("gc").
	disable []string
	// opts are the controller's options.
	opts endpointslice.Options
	// workers of the controller; 0 means 2.
	workers int
}

func startEnv(tb testing.TB, o envOptions) *env {
	tb.Helper()
	if testing.Short() {
		tb.Skip("a real API server; -short runs the tests on the fake API only")
	}
	// The node lifecycle controller would act on the pods' node, which
	// does not exist; the scheduler has nothing to do (pods are bound).
	c := servertest.Start(tb, servertest.Options{
		Sync:                o.fsync,
		DisabledControllers: append([]string{"endpointslice", "nodelifecycle", "scheduler"}, o.disable...),
	}).Client()
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{tb: tb, ctx: ctx, c: c, opts: o, stopCtl: func() {}}
	tb.Cleanup(func() {
		e.stopCtl()
		cancel()
	})
	return e
}

// startController starts the informers and the controller under test;
// cleanup stops them and checks that Run returned nil.
func (e *env) startController() {
	e.tb.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	svcs := client.NewInformer(e.c, serviceInfo, client.InformerOptions{})
	pods := client.NewInformer(e.c, podInfo, client.InformerOptions{})
	eps := client.NewInformer(e.c, sliceInfo, client.InformerOptions{})
	opts := e.opts.opts
	opts.Workers = e.opts.workers
	if opts.Workers == 0 {
		opts.Workers = 2
	}
	e.ctl = endpointslice.New(endpointslice.Deps{Client: e.c, Services: svcs, Pods: pods, EndpointSlices: eps}, opts)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, inf := range []*client.Informer{svcs, pods, eps} {
		wg.Go(func() { errs <- inf.Run(ctx) })
	}
	wg.Go(func() { errs <- e.ctl.Run(ctx) })
	e.stopCtl = func() {
		cancel()
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				e.tb.Errorf("Run: %v", err)
			}
		}
		e.stopCtl = func() {}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func (e *env) waitFor(what string, timeout time.Duration, cond func() (bool, error)) {
	e.tb.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		if time.Now().After(deadline) {
			e.tb.Fatalf("timed out after %v waiting for %s (last: %v)", timeout, what, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitIdle waits until the controller has nothing queued or in flight.
func (e *env) waitIdle() {
	e.tb.Helper()
	e.waitFor("controller idle", 30*time.Second, func() (bool, error) { return endpointslice.Idle(e.ctl), nil })
}

func (e *env) createNamespace(name string) {
	e.tb.Helper()
	ns := &api.Namespace{ObjectMeta: api.ObjectMeta{Name: name}}
	if err := e.c.Create(e.ctx, nsInfo, "", ns); err != nil {
		e.tb.Fatalf("create namespace: %v", err)
	}
}

func (e *env) createService(ns, name string, selector map[string]string, mods ...func(*api.Service)) *api.Service {
	e.tb.Helper()
	svc := &api.Service{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns},
		Spec: api.ServiceSpec{
			Selector: selector,
			Ports:    []api.ServicePort{{Name: "http", Protocol: api.ProtocolTCP, Port: 80, TargetPort: api.FromInt32(8080)}},
		},
	}
	for _, m := range mods {
		m(svc)
	}
	if err := e.c.Create(e.ctx, serviceInfo, ns, svc); err != nil {
		e.tb.Fatalf("create service %s: %v", name, err)
	}
	return svc
}

// podIP is the IP of the i-th test pod.
func podIP(i int) string { return fmt.Sprintf("10.244.%d.%d", i/250, i%250+1) }

// createPods creates n pods name-0000.. with labels, on node-1, and
// writes their status as a node would: Running, podIP, Ready = ready(i).
// It returns the pods as stored after the status write.
func (e *env) createPods(ns, prefix string, n int, labels map[string]string, ready func(i int) bool) []*api.Pod {
	e.tb.Helper()
	pods := make([]*api.Pod, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				pods[i], errs[i] = e.createPod(ns, fmt.Sprintf("%s-%04d", prefix, i), labels, podIP(i), ready(i))
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			e.tb.Fatalf("create pods: %v", err)
		}
	}
	return pods
}

func (e *env) createPod(ns, name string, labels map[string]string, ip string, ready bool) (*api.Pod, error) {
	pod := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns, Labels: maps.Clone(labels)},
		Spec: api.PodSpec{
			NodeName: "node-1",
			Containers: []api.Container{{
				Name: "app", Image: "registry.local/app:1",
				Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080}},
			}},
		},
	}
	if err := e.c.Create(e.ctx, podInfo, ns, pod); err != nil {
		return nil, err
	}
	pod.Status.Phase = api.PodRunning
	pod.Status.PodIP = ip
	pod.Status.PodIPs = []api.PodIP{{IP: ip}}
	pod.Status.HostIP = "192.168.1.10"
	setReady(pod, ready, time.Now())
	if err := e.c.UpdateStatus(e.ctx, podInfo, ns, pod); err != nil {
		return nil, err
	}
	return pod, nil
}

// setReady sets the pod's Ready condition (and its transition time when
// it changes) in memory.
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

// flip writes the pod's status with Ready toggled, as a node would.
func (e *env) flip(pod *api.Pod) error {
	setReady(pod, !api.IsPodReady(pod), time.Now())
	return e.c.UpdateStatus(e.ctx, podInfo, pod.Namespace, pod)
}

// slices lists the EndpointSlices of a Service (by label), sorted by name.
func (e *env) slices(ns, svc string) []api.EndpointSlice {
	e.tb.Helper()
	var list api.EndpointSliceList
	err := e.c.List(e.ctx, sliceInfo, ns, client.ListOptions{LabelSelector: api.LabelServiceName + "=" + svc}, &list)
	if err != nil {
		e.tb.Fatalf("list slices: %v", err)
	}
	slices.SortFunc(list.Items, func(a, b api.EndpointSlice) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return list.Items
}

// endpointsByPod maps pod name -> (slice name, endpoint) over slices.
func endpointsByPod(ss []api.EndpointSlice) map[string]sliceEndpoint {
	out := map[string]sliceEndpoint{}
	for _, s := range ss {
		for _, ep := range s.Endpoints {
			if ep.TargetRef != nil {
				out[ep.TargetRef.Name] = sliceEndpoint{slice: s.Name, ep: ep}
			}
		}
	}
	return out
}

type sliceEndpoint struct {
	slice string
	ep    api.Endpoint
}

// waitEndpoints waits until the Service's slices hold exactly the pods
// named in want, with ready as given, each slice within max endpoints.
func (e *env) waitEndpoints(ns, svc string, want map[string]bool, maxPerSlice int) []api.EndpointSlice {
	e.tb.Helper()
	var got []api.EndpointSlice
	e.waitFor(fmt.Sprintf("%d endpoints of %s/%s", len(want), ns, svc), 60*time.Second, func() (bool, error) {
		got = e.slices(ns, svc)
		eps := endpointsByPod(got)
		if len(eps) != len(want) {
			return false, fmt.Errorf("%d endpoints, want %d", len(eps), len(want))
		}
		n := 0
		for _, s := range got {
			n += len(s.Endpoints)
			if len(s.Endpoints) > maxPerSlice {
				return false, fmt.Errorf("slice %s has %d endpoints", s.Name, len(s.Endpoints))
			}
		}
		if n != len(want) {
			return false, fmt.Errorf("%d endpoints in slices, %d pods", n, len(want))
		}
		for name, ready := range want {
			se, ok := eps[name]
			if !ok {
				return false, fmt.Errorf("pod %s missing", name)
			}
			if se.ep.Conditions.Ready == nil || *se.ep.Conditions.Ready != ready {
				return false, fmt.Errorf("pod %s ready=%v, want %v", name, se.ep.Conditions.Ready, ready)
			}
		}
		return true, nil
	})
	return got
}

// sliceWatch collects the watch events of EndpointSlices in a namespace.
type sliceWatch struct {
	w      *client.Watcher
	mu     sync.Mutex
	events []sliceEvent
	notify chan struct{}
	done   chan struct{}
}

type sliceEvent struct {
	typ   string
	slice *api.EndpointSlice
	size  int // bytes of the object as stored and sent
	at    time.Time
}

// watchSlices watches EndpointSlices in ns from the current revision.
func (e *env) watchSlices(ns string) *sliceWatch {
	e.tb.Helper()
	var list api.EndpointSliceList
	if err := e.c.List(e.ctx, sliceInfo, ns, client.ListOptions{Limit: 1}, &list); err != nil {
		e.tb.Fatalf("list: %v", err)
	}
	w, err := e.c.Watch(e.ctx, sliceInfo, ns, client.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		e.tb.Fatalf("watch: %v", err)
	}
	sw := &sliceWatch{w: w, notify: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(sw.done)
		for ev := range w.ResultChan() {
			if ev.Type != client.EventAdded && ev.Type != client.EventModified && ev.Type != client.EventDeleted {
				continue
			}
			at := time.Now()
			var s api.EndpointSlice
			if err := json.Unmarshal(ev.Object, &s); err != nil {
				continue
			}
			sw.mu.Lock()
			sw.events = append(sw.events, sliceEvent{typ: ev.Type, slice: &s, size: len(ev.Object), at: at})
			sw.mu.Unlock()
			select {
			case sw.notify <- struct{}{}:
			default:
			}
		}
	}()
	e.tb.Cleanup(func() { w.Stop(); <-sw.done })
	return sw
}

// snapshot returns the events received so far.
func (sw *sliceWatch) snapshot() []sliceEvent {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return slices.Clone(sw.events)
}

// waitEvent waits for the first event at index >= from that match
// accepts and returns its index.
func (sw *sliceWatch) waitEvent(tb testing.TB, from int, timeout time.Duration, match func(sliceEvent) bool) int {
	tb.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		evs := sw.snapshot()
		for i := from; i < len(evs); i++ {
			if match(evs[i]) {
				return i
			}
		}
		select {
		case <-sw.notify:
		case <-sw.done:
			tb.Fatalf("watch ended: %v", sw.w.Err())
		case <-deadline.C:
			tb.Fatalf("timed out after %v waiting for a slice event (%d events so far)", timeout, len(evs))
		}
	}
}

// holds reports whether the event's slice holds pod with Ready = ready.
func holds(pod string, ready bool) func(sliceEvent) bool {
	return func(ev sliceEvent) bool {
		if ev.typ == client.EventDeleted {
			return false
		}
		for _, ep := range ev.slice.Endpoints {
			if ep.TargetRef != nil && ep.TargetRef.Name == pod && ep.Conditions.Ready != nil && *ep.Conditions.Ready == ready {
				return true
			}
		}
		return false
	}
}
