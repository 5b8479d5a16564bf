package endpoints_test

import (
	"context"
	"sync"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/endpoints"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

var (
	res    = api.Resources()
	resNS  = api.Lookup(res, "v1", "namespaces")
	resPod = api.Lookup(res, "v1", "pods")
	resSvc = api.Lookup(res, "v1", "services")
	resEp  = api.Lookup(res, "v1", "endpoints")
)

// startFake runs the controller over informers of an in-memory API.
func startFake(t *testing.T) *fakeapi.Server {
	t.Helper()
	fake := newFake(t)
	runController(t, fake, nil, endpoints.Options{})
	return fake
}

func newFake(t *testing.T) *fakeapi.Server {
	t.Helper()
	fake := fakeapi.New(res)
	if _, err := fake.Create(t.Context(), resNS, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	return fake
}

// runController runs the controller over informers of fake; wrapSvcs,
// when set, stands between the controller and its Services informer.
func runController(t *testing.T, fake *fakeapi.Server, wrapSvcs func(endpoints.Cache) endpoints.Cache, opts endpoints.Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	inf := func(info *api.ResourceInfo) *client.Informer {
		return client.NewInformerFor(fake, info, client.InformerOptions{})
	}
	svcs, pods, eps := inf(resSvc), inf(resPod), inf(resEp)
	var svcCache endpoints.Cache = svcs
	if wrapSvcs != nil {
		svcCache = wrapSvcs(svcs)
	}
	ctl, err := endpoints.New(endpoints.Deps{Client: fake.Client(), Services: svcCache, Pods: pods, Endpoints: eps}, opts)
	if err != nil {
		t.Fatal(err)
	}
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
}

// hidingCache is a Services cache that has not yet seen one Service.
type hidingCache struct {
	endpoints.Cache
	hide string
}

func (h hidingCache) Get(ns, name string) (api.Object, bool) {
	if name == h.hide {
		return nil, false
	}
	return h.Cache.Get(ns, name)
}

// A user's Endpoints whose selectorless Service the Services cache does
// not show yet (that informer lags the Endpoints one) is kept: only a
// live read of the Service decides it is gone.
func TestControllerKeepsEndpointsOfServiceMissingFromCache(t *testing.T) {
	fake := newFake(t)
	db := service("db", httpPort(api.FromInt32(5432)))
	db.Spec.Selector = nil
	create(t, fake, resSvc, db)
	create(t, fake, resEp, &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: "db", Namespace: "default"}, Subsets: []api.EndpointSubset{{
		Addresses: []api.EndpointAddress{{IP: "192.0.2.10"}},
		Ports:     []api.EndpointsPort{{Name: "http", Port: 5432, Protocol: api.ProtocolTCP}},
	}}})
	// One worker: the keys are synced in the order queued, and Run
	// queues every existing Endpoints before any later Service.
	runController(t, fake, func(c endpoints.Cache) endpoints.Cache { return hidingCache{Cache: c, hide: "db"} }, endpoints.Options{Workers: 1})
	create(t, fake, resSvc, service("web", httpPort(api.FromInt32(8080))))
	waitSubsets(t, fake, "web", "")
	if _, ok := getEndpoints(fake, "db"); !ok {
		t.Fatal("the user's Endpoints was deleted while its Service exists")
	}
	// Once the Service is gone for real, its Endpoints goes.
	if err := fake.Delete(t.Context(), resSvc, "default", "db", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "the Endpoints deleted", func() bool { _, ok := getEndpoints(fake, "db"); return !ok })
}

func create(t *testing.T, fake *fakeapi.Server, info *api.ResourceInfo, obj api.Object) {
	t.Helper()
	if err := fake.Client().Create(t.Context(), info, "default", obj); err != nil {
		t.Fatal(err)
	}
}

func getEndpoints(fake *fakeapi.Server, name string) (*api.Endpoints, bool) {
	var ep api.Endpoints
	if err := fake.Get(context.Background(), resEp, "default", name, &ep); err != nil {
		return nil, false
	}
	return &ep, true
}

func waitSubsets(t *testing.T, fake *fakeapi.Server, name, want string) *api.Endpoints {
	t.Helper()
	var ep *api.Endpoints
	fakeapi.Wait(t, name+" subsets "+want, func() bool {
		var ok bool
		ep, ok = getEndpoints(fake, name)
		return ok && summary(ep.Subsets) == want
	})
	return ep
}

func TestControllerReadyNotReadyAndDeletion(t *testing.T) {
	fake := startFake(t)
	web := service("web", httpPort(api.FromString("web")))
	create(t, fake, resSvc, web)
	named := func(n int32) api.ContainerPort { return api.ContainerPort{Name: "web", ContainerPort: n} }
	p1 := pod("p1", "10.244.0.5", true, named(8080))
	create(t, fake, resPod, p1)
	create(t, fake, resPod, pod("p2", "10.244.0.6", false, named(8080)))
	create(t, fake, resPod, pod("p3", "10.244.0.7", true, named(9090)))
	ep := waitSubsets(t, fake, "web", "[10.244.0.5,|10.244.0.6,|http:8080/TCP,][10.244.0.7,||http:9090/TCP,]")
	if ep.Labels[api.LabelSkipMirror] != "true" || ep.Labels["team"] != "a" {
		t.Fatalf("labels %v", ep.Labels)
	}

	// p1 turns not ready: it moves to notReadyAddresses.
	var cur api.Pod
	if err := fake.Get(t.Context(), resPod, "default", "p1", &cur); err != nil {
		t.Fatal(err)
	}
	cur.Status.Conditions[0].Status = api.ConditionFalse
	if err := fake.Update(t.Context(), resPod, "default", &cur, "status"); err != nil {
		t.Fatal(err)
	}
	waitSubsets(t, fake, "web", "[|10.244.0.5,10.244.0.6,|http:8080/TCP,][10.244.0.7,||http:9090/TCP,]")

	// Deleted by someone else: written again.
	if err := fake.Delete(t.Context(), resEp, "default", "web", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSubsets(t, fake, "web", "[|10.244.0.5,10.244.0.6,|http:8080/TCP,][10.244.0.7,||http:9090/TCP,]")

	// The Service goes: so does its Endpoints.
	if err := fake.Delete(t.Context(), resSvc, "default", "web", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "the Endpoints deleted", func() bool { _, ok := getEndpoints(fake, "web"); return !ok })
}

func TestControllerLeavesSelectorlessAlone(t *testing.T) {
	fake := startFake(t)
	ext := service("ext", httpPort(api.FromInt32(5432)))
	ext.Spec.Selector = nil
	create(t, fake, resSvc, ext)
	mine := &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: "ext", Namespace: "default"}, Subsets: []api.EndpointSubset{{
		Addresses: []api.EndpointAddress{{IP: "192.0.2.10"}},
		Ports:     []api.EndpointsPort{{Name: "http", Port: 5432, Protocol: api.ProtocolTCP}},
	}}}
	create(t, fake, resEp, mine)
	// A Service with a selector, synced after ext, proves the controller
	// has been through ext.
	create(t, fake, resSvc, service("web", httpPort(api.FromInt32(8080))))
	waitSubsets(t, fake, "web", "")
	if ep, _ := getEndpoints(fake, "ext"); ep == nil || summary(ep.Subsets) != "[192.0.2.10,||http:5432/TCP,]" || ep.Labels != nil {
		t.Fatalf("the user's Endpoints was changed: %+v", ep)
	}
	for _, a := range fake.Actions() {
		if a.Resource == "/endpoints" && a.Name == "ext" && a.Verb != "create" {
			t.Fatalf("the controller wrote the user's Endpoints: %v", a)
		}
	}
	// Deleted with its Service, as in Kubernetes.
	if err := fake.Delete(t.Context(), resSvc, "default", "ext", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "the Endpoints deleted", func() bool { _, ok := getEndpoints(fake, "ext"); return !ok })
}

func TestControllerTruncates(t *testing.T) {
	fake := startFake(t)
	create(t, fake, resSvc, service("web", httpPort(api.FromInt32(8080))))
	for i := range 1005 {
		create(t, fake, resPod, pod("p"+itoa(i), "10.1."+itoa(i/256)+"."+itoa(i%256), true))
	}
	fakeapi.Wait(t, "1,000 addresses and the over-capacity annotation", func() bool {
		ep, ok := getEndpoints(fake, "web")
		return ok && len(ep.Subsets) == 1 && len(ep.Subsets[0].Addresses) == 1000 &&
			ep.Annotations[api.EndpointsOverCapacityAnnotation] == "truncated"
	})
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
