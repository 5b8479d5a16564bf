package endpointslice_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/endpointslice"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

// fakeEnv is the controller over informers of an in-memory API server.
type fakeEnv struct {
	t   *testing.T
	api *fakeapi.Server
	rec *eventLog
}

type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) Eventf(obj api.Object, typ, reason, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, typ+" "+reason+" "+obj.GetObjectMeta().Name)
}

func (l *eventLog) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if e == s {
			return true
		}
	}
	return false
}

func startFake(t *testing.T) *fakeEnv {
	t.Helper()
	e := &fakeEnv{t: t, api: fakeapi.New(resources), rec: &eventLog{}}
	e.create(nsInfo, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "default"}})
	ctx, cancel := context.WithCancel(t.Context())
	inf := func(info *api.ResourceInfo) *client.Informer {
		return client.NewInformerFor(e.api, info, client.InformerOptions{})
	}
	svcs, pods, eps := inf(serviceInfo), inf(podInfo), inf(sliceInfo)
	ctl := endpointslice.New(endpointslice.Deps{
		Client: e.api.Client(), Services: svcs, Pods: pods, EndpointSlices: eps, Recorder: e.rec,
	}, endpointslice.Options{MaxEndpointsPerSlice: 2, Workers: 2})
	var wg sync.WaitGroup
	for _, i := range []*client.Informer{svcs, pods, eps} {
		wg.Go(func() { _ = i.Run(ctx) })
	}
	wg.Go(func() {
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return e
}

func (e *fakeEnv) create(info *api.ResourceInfo, ns string, obj api.Object) {
	e.t.Helper()
	if err := e.api.Client().Create(context.Background(), info, ns, obj); err != nil {
		e.t.Fatal(err)
	}
}

// readyPod is a running, Ready pod labelled app=web.
func readyPod(name, ip string) *api.Pod {
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec:       api.PodSpec{NodeName: "n1"},
		Status: api.PodStatus{Phase: api.PodRunning, PodIP: ip, PodIPs: []api.PodIP{{IP: ip}},
			Conditions: []api.PodCondition{{Type: api.PodReady, Status: api.ConditionTrue}}},
	}
}

// endpoints counts the stored slices of Service web and their endpoints.
func (e *fakeEnv) endpoints() (slices, endpoints int) {
	var list api.EndpointSliceList
	if err := e.api.List(context.Background(), sliceInfo, "default", client.ListOptions{}, &list); err != nil {
		e.t.Fatal(err)
	}
	for _, s := range list.Items {
		if s.Labels[api.LabelServiceName] == "web" {
			slices++
			endpoints += len(s.Endpoints)
		}
	}
	return slices, endpoints
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func webService() *api.Service {
	return &api.Service{
		ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: api.ServiceSpec{Selector: map[string]string{"app": "web"}, ClusterIP: "10.96.0.10",
			Ports: []api.ServicePort{{Name: "http", Port: 80, Protocol: api.ProtocolTCP}}},
	}
}

// TestFakeSlicesFollowPods: slices of at most MaxEndpointsPerSlice appear
// for the Service's pods and go with the Service.
func TestFakeSlicesFollowPods(t *testing.T) {
	e := startFake(t)
	for i := range 3 {
		e.create(podInfo, "default", readyPod(fmt.Sprintf("p%d", i), fmt.Sprintf("10.1.0.%d", i+1)))
	}
	e.create(serviceInfo, "default", webService())
	waitUntil(t, "2 slices with 3 endpoints", func() bool { s, n := e.endpoints(); return s == 2 && n == 3 })
	e.create(podInfo, "default", readyPod("p3", "10.1.0.4"))
	waitUntil(t, "2 slices with 4 endpoints", func() bool { s, n := e.endpoints(); return s == 2 && n == 4 })
	if err := e.api.Delete(context.Background(), serviceInfo, "default", "web", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the slices to go", func() bool { s, _ := e.endpoints(); return s == 0 })
}

// TestFakeFailedWriteRecordsEventAndRetries: a refused slice write records
// FailedToUpdateEndpointSlices on the Service and is retried until it
// succeeds.
func TestFakeFailedWriteRecordsEventAndRetries(t *testing.T) {
	e := startFake(t)
	var mu sync.Mutex
	refusals := 2
	e.api.SetIntercept(func(a fakeapi.Action) error {
		mu.Lock()
		defer mu.Unlock()
		if a.Resource == "discovery.k8s.io/endpointslices" && a.Verb == "create" && refusals > 0 {
			refusals--
			return errors.New("injected failure")
		}
		return nil
	})
	e.create(podInfo, "default", readyPod("p0", "10.1.0.1"))
	e.create(serviceInfo, "default", webService())
	waitUntil(t, "a slice after the refusals", func() bool { s, n := e.endpoints(); return s == 1 && n == 1 })
	if !e.rec.has("Warning FailedToUpdateEndpointSlices web") {
		t.Fatalf("events %q: no FailedToUpdateEndpointSlices", e.rec.events)
	}
}

// TestRunRejectsBadOptionsFake: invalid options fail Run before it waits
// for anything.
func TestRunRejectsBadOptionsFake(t *testing.T) {
	fake := fakeapi.New(resources)
	inf := func(info *api.ResourceInfo) *client.Informer {
		return client.NewInformerFor(fake, info, client.InformerOptions{})
	}
	ctl := endpointslice.New(endpointslice.Deps{Client: fake.Client(), Services: inf(serviceInfo), Pods: inf(podInfo), EndpointSlices: inf(sliceInfo)},
		endpointslice.Options{MaxEndpointsPerSlice: 1001})
	if err := ctl.Run(t.Context()); !errors.Is(err, endpointslice.ErrInvalidOptions) {
		t.Fatalf("Run = %v, want ErrInvalidOptions", err)
	}
}
