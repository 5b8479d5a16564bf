package endpointslice_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/record"
	"github.com/skiff-dev/skiff/controller/endpointslice"
)

var webLabels = map[string]string{"app": "web"}

// The server's event recorder fits Deps.Recorder.
var _ endpointslice.EventRecorder = (*record.Recorder)(nil)

func allReady(int) bool { return true }

// TestService250Pods covers the main path against a real server with no
// node agent: 250 pods make 3 slices of at most 100, one pod's Ready flip
// rewrites exactly one slice, a relabelled pod leaves its slice, and a
// slice deleted by someone else is repaired.
func TestService250Pods(t *testing.T) {
	e := startEnv(t, envOptions{})
	e.createNamespace("shop")
	svc := e.createService("shop", "web", webLabels, func(s *api.Service) {
		s.Labels = map[string]string{"team": "payments"}
	})
	e.startController()
	pods := e.createPods("shop", "web", 250, webLabels, allReady)

	want := map[string]bool{}
	for _, p := range pods {
		want[p.Name] = true
	}
	got := e.waitEndpoints("shop", "web", want, 100)
	if len(got) != 3 {
		t.Fatalf("%d slices, want 3", len(got))
	}
	for _, s := range got {
		if s.AddressType != api.AddressTypeIPv4 || s.GenerateName != "web-" {
			t.Errorf("slice %s: addressType %s generateName %q", s.Name, s.AddressType, s.GenerateName)
		}
		wantLabels := map[string]string{"team": "payments", api.LabelServiceName: "web", api.LabelManagedBy: endpointslice.ControllerName}
		if !maps.Equal(s.Labels, wantLabels) {
			t.Errorf("slice %s labels %v, want %v", s.Name, s.Labels, wantLabels)
		}
		ref := api.ControllerRef(&s.ObjectMeta)
		if ref == nil || ref.UID != svc.UID || ref.Kind != "Service" || ref.Name != "web" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("slice %s owner references %+v", s.Name, s.OwnerReferences)
		}
		if len(s.Ports) != 1 || *s.Ports[0].Name != "http" || *s.Ports[0].Port != 8080 || *s.Ports[0].Protocol != api.ProtocolTCP {
			t.Errorf("slice %s ports %+v", s.Name, s.Ports)
		}
		for _, ep := range s.Endpoints {
			if ep.NodeName == nil || *ep.NodeName != "node-1" || ep.TargetRef.Kind != "Pod" || ep.TargetRef.UID == "" ||
				!*ep.Conditions.Serving || *ep.Conditions.Terminating {
				t.Fatalf("endpoint %+v", ep)
			}
		}
	}
	e.waitIdle()

	t.Run("one pod flips Ready: exactly one slice rewritten", func(t *testing.T) {
		w := e.watchSlices("shop")
		before := endpointsByPod(e.slices("shop", "web"))
		a, b := pods[17], pods[230] // in different slices
		if before[a.Name].slice == before[b.Name].slice {
			t.Fatalf("test pods share slice %s", before[a.Name].slice)
		}
		if err := e.flip(a); err != nil {
			t.Fatal(err)
		}
		first := w.waitEvent(t, 0, 30*time.Second, holds(a.Name, false))
		e.waitIdle()
		// Barrier: a second flip in another slice. Every write caused by
		// the first flip is in the stream before the second flip's write.
		if err := e.flip(b); err != nil {
			t.Fatal(err)
		}
		second := w.waitEvent(t, first+1, 30*time.Second, holds(b.Name, false))
		evs := w.snapshot()[:second+1]
		if len(evs) != 2 {
			for _, ev := range evs {
				t.Logf("event %s %s (%d endpoints)", ev.typ, ev.slice.Name, len(ev.slice.Endpoints))
			}
			t.Fatalf("%d slice writes for two flips, want 2", len(evs))
		}
		for i, pod := range []*api.Pod{a, b} {
			ev := evs[i]
			if ev.typ != client.EventModified || ev.slice.Name != before[pod.Name].slice {
				t.Errorf("flip of %s: %s of %s, want MODIFIED of %s", pod.Name, ev.typ, ev.slice.Name, before[pod.Name].slice)
			}
			wantTrigger := api.GetPodCondition(&pod.Status, api.PodReady).LastTransitionTime.UTC().Format(time.RFC3339Nano)
			if got := ev.slice.Annotations[endpointslice.AnnotationLastChangeTriggerTime]; got != wantTrigger {
				t.Errorf("flip of %s: trigger time %q, want %q", pod.Name, got, wantTrigger)
			}
			// Still serving? No: Ready=False means not serving either.
			se := endpointsByPod([]api.EndpointSlice{*ev.slice})[pod.Name]
			if *se.ep.Conditions.Ready || *se.ep.Conditions.Serving {
				t.Errorf("flipped pod %s conditions %+v", pod.Name, se.ep.Conditions)
			}
		}
		want[a.Name], want[b.Name] = false, false
	})

	t.Run("a relabelled pod leaves its slice", func(t *testing.T) {
		pod := pods[120]
		before := endpointsByPod(e.slices("shop", "web"))
		holder := before[pod.Name].slice
		w := e.watchSlices("shop")
		var cur api.Pod
		if err := e.c.Get(e.ctx, podInfo, "shop", pod.Name, &cur); err != nil {
			t.Fatal(err)
		}
		cur.Labels = map[string]string{"app": "other"}
		if err := e.c.Update(e.ctx, podInfo, "shop", &cur); err != nil {
			t.Fatal(err)
		}
		delete(want, pod.Name)
		e.waitEndpoints("shop", "web", want, 100)
		i := w.waitEvent(t, 0, 10*time.Second, func(ev sliceEvent) bool { return ev.slice.Name == holder })
		if evs := w.snapshot(); i != 0 || evs[0].typ != client.EventModified || len(evs[0].slice.Endpoints) != len(before)-1-countIn(before, holder, true) {
			t.Errorf("first event %d: %s %s with %d endpoints", i, evs[i].typ, evs[i].slice.Name, len(evs[i].slice.Endpoints))
		}
	})

	t.Run("a slice deleted by someone else is repaired", func(t *testing.T) {
		victim := e.slices("shop", "web")[0]
		if err := e.c.Delete(e.ctx, sliceInfo, "shop", victim.Name, client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitEndpoints("shop", "web", want, 100)
	})

	t.Run("a slice edited by someone else is repaired", func(t *testing.T) {
		victim := e.slices("shop", "web")[1]
		victim.Endpoints = victim.Endpoints[:len(victim.Endpoints)/2]
		if err := e.c.Update(e.ctx, sliceInfo, "shop", &victim); err != nil {
			t.Fatal(err)
		}
		e.waitEndpoints("shop", "web", want, 100)
	})

	t.Run("a selector matching nothing leaves one empty placeholder", func(t *testing.T) {
		var cur api.Service
		if err := e.c.Get(e.ctx, serviceInfo, "shop", "web", &cur); err != nil {
			t.Fatal(err)
		}
		cur.Spec.Selector = map[string]string{"app": "nothing"}
		if err := e.c.Update(e.ctx, serviceInfo, "shop", &cur); err != nil {
			t.Fatal(err)
		}
		e.waitFor("one empty slice", 30*time.Second, func() (bool, error) {
			ss := e.slices("shop", "web")
			if len(ss) != 1 || len(ss[0].Endpoints) != 0 || len(ss[0].Ports) != 0 {
				return false, fmt.Errorf("%d slices", len(ss))
			}
			return true, nil
		})
	})
}

// countIn counts the endpoints of before not in slice (other=true) or in it.
func countIn(before map[string]sliceEndpoint, slice string, other bool) int {
	n := 0
	for _, se := range before {
		if (se.slice != slice) == other {
			n++
		}
	}
	return n
}

// TestServiceDeletedDeletesSlices runs without the garbage collector, so
// only the controller can delete the slices.
func TestServiceDeletedDeletesSlices(t *testing.T) {
	e := startEnv(t, envOptions{disable: []string{"gc"}})
	e.createNamespace("shop")
	e.createService("shop", "web", webLabels)
	e.startController()
	pods := e.createPods("shop", "web", 120, webLabels, func(i int) bool { return i%2 == 0 })
	want := map[string]bool{}
	for i, p := range pods {
		want[p.Name] = i%2 == 0
	}
	if got := e.waitEndpoints("shop", "web", want, 100); len(got) != 2 {
		t.Fatalf("%d slices, want 2", len(got))
	}
	if err := e.c.Delete(e.ctx, serviceInfo, "shop", "web", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("slices deleted", 30*time.Second, func() (bool, error) {
		n := len(e.slices("shop", "web"))
		return n == 0, fmt.Errorf("%d slices left", n)
	})
}

// TestSlicesLeftAlone: Services without a selector, and slices another
// manager owns, are never written.
func TestSlicesLeftAlone(t *testing.T) {
	e := startEnv(t, envOptions{})
	e.createNamespace("shop")
	e.createService("shop", "external", nil)
	e.createService("shop", "web", webLabels)
	mk := func(name, svc, manager string) *api.EndpointSlice {
		ready := true
		s := &api.EndpointSlice{
			ObjectMeta: api.ObjectMeta{Name: name, Namespace: "shop", Labels: map[string]string{
				api.LabelServiceName: svc, api.LabelManagedBy: manager,
			}},
			AddressType: api.AddressTypeIPv4,
			Endpoints:   []api.Endpoint{{Addresses: []string{"192.168.7.7"}, Conditions: api.EndpointConditions{Ready: &ready}}},
			Ports:       []api.EndpointPort{},
		}
		if err := e.c.Create(e.ctx, sliceInfo, "shop", s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// A hand-made slice of the selectorless Service (even one claiming this
	// controller as its manager), and a foreign slice of the selector one.
	manual := mk("external-manual", "external", "admin")
	claimed := mk("external-claimed", "external", endpointslice.ControllerName)
	foreign := mk("web-foreign", "web", "mesh.example.com")

	e.startController()
	pods := e.createPods("shop", "web", 3, webLabels, allReady)
	want := map[string]bool{}
	for _, p := range pods {
		want[p.Name] = true
	}
	e.waitFor("web's own slice", 30*time.Second, func() (bool, error) {
		n := 0
		for _, s := range e.slices("shop", "web") {
			if s.Labels[api.LabelManagedBy] == endpointslice.ControllerName {
				n += len(s.Endpoints)
			}
		}
		return n == 3, fmt.Errorf("%d endpoints", n)
	})
	e.waitIdle()

	for _, s := range []*api.EndpointSlice{manual, claimed, foreign} {
		var cur api.EndpointSlice
		if err := e.c.Get(e.ctx, sliceInfo, "shop", s.Name, &cur); err != nil {
			t.Fatalf("slice %s: %v", s.Name, err)
		}
		if cur.ResourceVersion != s.ResourceVersion {
			t.Errorf("slice %s was written (rv %s -> %s)", s.Name, s.ResourceVersion, cur.ResourceVersion)
		}
	}
	if got := e.slices("shop", "external"); len(got) != 2 {
		t.Errorf("selectorless service has %d slices, want the 2 hand-made ones", len(got))
	}
}

// TestNamedPortsAndHostnames: a named targetPort resolved per pod splits
// pods by port set; hostname follows spec.subdomain; publishNotReady.
func TestNamedPortsAndHostnames(t *testing.T) {
	e := startEnv(t, envOptions{})
	e.createNamespace("db")
	e.createService("db", "pg", map[string]string{"app": "pg"}, func(s *api.Service) {
		s.Spec.ClusterIP = api.ClusterIPNone
		s.Spec.PublishNotReadyAddresses = true
		s.Spec.Ports = []api.ServicePort{{Name: "sql", Protocol: api.ProtocolTCP, Port: 5432, TargetPort: api.FromString("sql")}}
	})
	e.startController()
	mk := func(name string, port int32, sub string, ip string) {
		pod := &api.Pod{
			ObjectMeta: api.ObjectMeta{Name: name, Namespace: "db", Labels: map[string]string{"app": "pg"}},
			Spec: api.PodSpec{
				Hostname: name, Subdomain: sub,
				Containers: []api.Container{{Name: "pg", Image: "pg:16",
					Ports: []api.ContainerPort{{Name: "sql", ContainerPort: port}}}},
			},
		}
		if err := e.c.Create(e.ctx, podInfo, "db", pod); err != nil {
			t.Fatal(err)
		}
		pod.Status.Phase = api.PodRunning
		pod.Status.PodIPs = []api.PodIP{{IP: ip}}
		pod.Status.PodIP = ip
		setReady(pod, false, time.Now())
		if err := e.c.UpdateStatus(e.ctx, podInfo, "db", pod); err != nil {
			t.Fatal(err)
		}
	}
	mk("pg-0", 5432, "pg", "10.244.9.1")
	mk("pg-1", 5432, "pg", "10.244.9.2")
	mk("pg-2", 6432, "other", "10.244.9.3")

	var ss []api.EndpointSlice
	e.waitFor("three endpoints", 30*time.Second, func() (bool, error) {
		ss = e.slices("db", "pg")
		n := len(endpointsByPod(ss))
		return n == 3, fmt.Errorf("%d endpoints", n)
	})
	byPod := endpointsByPod(ss)
	port := map[string]int32{}
	for _, s := range ss {
		if _, ok := s.Labels[endpointslice.LabelHeadless]; !ok {
			t.Errorf("slice %s lacks %s", s.Name, endpointslice.LabelHeadless)
		}
		port[s.Name] = *s.Ports[0].Port
	}
	if byPod["pg-0"].slice != byPod["pg-1"].slice || byPod["pg-0"].slice == byPod["pg-2"].slice {
		t.Errorf("slices: pg-0 %s, pg-1 %s, pg-2 %s", byPod["pg-0"].slice, byPod["pg-1"].slice, byPod["pg-2"].slice)
	}
	if port[byPod["pg-0"].slice] != 5432 || port[byPod["pg-2"].slice] != 6432 {
		t.Errorf("ports %v", port)
	}
	for name, wantHost := range map[string]string{"pg-0": "pg-0", "pg-1": "pg-1", "pg-2": ""} {
		ep := byPod[name].ep
		host := ""
		if ep.Hostname != nil {
			host = *ep.Hostname
		}
		if host != wantHost {
			t.Errorf("%s hostname %q, want %q", name, host, wantHost)
		}
		if !*ep.Conditions.Ready || *ep.Conditions.Serving {
			t.Errorf("%s conditions ready=%v serving=%v, want ready (publishNotReadyAddresses) and not serving", name, *ep.Conditions.Ready, *ep.Conditions.Serving)
		}
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	e := startEnv(t, envOptions{})
	svcs := client.NewInformer(e.c, serviceInfo, client.InformerOptions{})
	pods := client.NewInformer(e.c, podInfo, client.InformerOptions{})
	eps := client.NewInformer(e.c, sliceInfo, client.InformerOptions{})
	ctl := endpointslice.New(endpointslice.Deps{Client: e.c, Services: svcs, Pods: pods, EndpointSlices: eps},
		endpointslice.Options{MaxEndpointsPerSlice: 1001})
	if err := ctl.Run(e.ctx); err == nil {
		t.Fatal("Run accepted 1001 endpoints per slice")
	}
}
