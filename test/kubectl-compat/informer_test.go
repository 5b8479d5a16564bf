package kubectlcompat

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

type event struct {
	typ, name string
	labels    map[string]string
}

func handler(ch chan<- event) cache.ResourceEventHandlerFuncs {
	meta := func(obj any) metav1.Object {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		m, _ := obj.(metav1.Object)
		return m
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { m := meta(obj); ch <- event{"add", m.GetName(), m.GetLabels()} },
		UpdateFunc: func(_, obj any) { m := meta(obj); ch <- event{"update", m.GetName(), m.GetLabels()} },
		DeleteFunc: func(obj any) { m := meta(obj); ch <- event{"delete", m.GetName(), m.GetLabels()} },
	}
}

func expectEvent(t *testing.T, ch <-chan event, typ, name string, check func(event) bool) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case ev := <-ch:
			if ev.typ == typ && ev.name == name && (check == nil || check(ev)) {
				return
			}
		case <-timeout:
			t.Fatalf("no %s event for %s", typ, name)
		}
	}
}

func TestClientGoInformers(t *testing.T) {
	ns := namespace(t, "informers")
	factory := informers.NewSharedInformerFactoryWithOptions(env.cs, 0, informers.WithNamespace(ns))
	svcs := make(chan event, 100)
	slices := make(chan event, 100)
	if _, err := factory.Core().V1().Services().Informer().AddEventHandler(handler(svcs)); err != nil {
		t.Fatal(err)
	}
	if _, err := factory.Discovery().V1().EndpointSlices().Informer().AddEventHandler(handler(slices)); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer func() {
		close(stop)
		factory.Shutdown()
	}()
	createService(t, ns, "before", corev1.ServiceTypeClusterIP)
	factory.Start(stop)
	for typ, ok := range factory.WaitForCacheSync(stop) {
		if !ok {
			t.Fatalf("%v did not sync", typ)
		}
	}
	expectEvent(t, svcs, "add", "before", nil)

	createService(t, ns, "web", corev1.ServiceTypeClusterIP)
	expectEvent(t, svcs, "add", "web", nil)
	patch := []byte(`{"metadata":{"labels":{"stage":"two"}}}`)
	if _, err := env.cs.CoreV1().Services(ns).Patch(ctx(t), "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, svcs, "update", "web", func(e event) bool { return e.labels["stage"] == "two" })
	if err := env.cs.CoreV1().Services(ns).Delete(ctx(t), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, svcs, "delete", "web", nil)

	addr := discoveryv1.AddressTypeIPv4
	port := int32(80)
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Labels: map[string]string{
			"kubernetes.io/service-name": "web", "endpointslice.kubernetes.io/managed-by": "compat-test"}},
		AddressType: addr,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Port: &port}},
	}
	created, err := env.cs.DiscoveryV1().EndpointSlices(ns).Create(ctx(t), slice, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectEvent(t, slices, "add", "web-abc", nil)
	created.Endpoints = append(created.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.244.1.3"}})
	created.Labels["round"] = "2"
	if _, err := env.cs.DiscoveryV1().EndpointSlices(ns).Update(ctx(t), created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, slices, "update", "web-abc", func(e event) bool { return e.labels["round"] == "2" })
	got, err := factory.Discovery().V1().EndpointSlices().Lister().EndpointSlices(ns).Get("web-abc")
	if err != nil || len(got.Endpoints) != 2 {
		t.Errorf("lister: %v %+v", err, got)
	}
	if err := env.cs.DiscoveryV1().EndpointSlices(ns).Delete(ctx(t), "web-abc", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, slices, "delete", "web-abc", nil)
}
