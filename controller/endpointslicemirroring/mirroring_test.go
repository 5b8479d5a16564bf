package endpointslicemirroring_test

import (
	"context"
	"sync"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/endpointslicemirroring"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

var (
	res      = api.Resources()
	resNS    = api.Lookup(res, "v1", "namespaces")
	resSvc   = api.Lookup(res, "v1", "services")
	resEp    = api.Lookup(res, "v1", "endpoints")
	resSlice = api.Lookup(res, "discovery.k8s.io/v1", "endpointslices")
)

func selectorless(name string) *api.Service {
	return &api.Service{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec: api.ServiceSpec{ClusterIP: "10.96.0.20", Ports: []api.ServicePort{{Name: "pg", Port: 5432, Protocol: api.ProtocolTCP}}}}
}

func userEndpoints(name string) *api.Endpoints {
	return &api.Endpoints{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", UID: "ep-uid", Labels: map[string]string{"team": "db"},
			Annotations: map[string]string{"note": "x", "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
		Subsets: []api.EndpointSubset{
			{
				Addresses:         []api.EndpointAddress{{IP: "192.0.2.10", Hostname: "db-0"}, {IP: "2001:db8::10"}, {IP: "127.0.0.1"}},
				NotReadyAddresses: []api.EndpointAddress{{IP: "192.0.2.11", NodeName: ptr("node-a")}},
				Ports:             []api.EndpointsPort{{Name: "pg", Port: 5432, Protocol: api.ProtocolTCP}},
			},
			{
				Addresses: []api.EndpointAddress{{IP: "192.0.2.12"}},
				Ports:     []api.EndpointsPort{{Name: "pg", Port: 5432}},
			},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func TestDesired(t *testing.T) {
	got := endpointslicemirroring.Desired(userEndpoints("db"))
	if len(got) != 2 {
		t.Fatalf("%d slices, want 2 (IPv4 and IPv6, the two subsets merged)", len(got))
	}
	v4, v6 := got[0], got[1]
	if v4.AddressType != api.AddressTypeIPv4 || v6.AddressType != api.AddressTypeIPv6 {
		t.Fatalf("address types %s %s", v4.AddressType, v6.AddressType)
	}
	var ips []string
	for _, e := range v4.Endpoints {
		ips = append(ips, e.Addresses[0])
		if e.Addresses[0] == "192.0.2.11" && (*e.Conditions.Ready || e.NodeName == nil || *e.NodeName != "node-a") {
			t.Errorf("not-ready endpoint %+v", e)
		}
		if e.Addresses[0] == "192.0.2.10" && (!*e.Conditions.Ready || e.Hostname == nil || *e.Hostname != "db-0") {
			t.Errorf("ready endpoint %+v", e)
		}
	}
	if want := "192.0.2.10 192.0.2.11 192.0.2.12"; join(ips) != want {
		t.Fatalf("IPv4 endpoints %q, want %q (loopback skipped)", join(ips), want)
	}
	if v4.Labels[api.LabelManagedBy] != endpointslicemirroring.ManagedBy || v4.Labels[api.LabelServiceName] != "db" || v4.Labels["team"] != "db" {
		t.Fatalf("labels %v", v4.Labels)
	}
	if _, ok := v4.Annotations["kubectl.kubernetes.io/last-applied-configuration"]; ok || v4.Annotations["note"] != "x" {
		t.Fatalf("annotations %v", v4.Annotations)
	}
	if len(v4.OwnerReferences) != 1 || v4.OwnerReferences[0].Kind != "Endpoints" || v4.GenerateName != "db-" {
		t.Fatalf("owner %+v, generateName %q", v4.OwnerReferences, v4.GenerateName)
	}
	if p := v4.Ports; len(p) != 1 || *p[0].Name != "pg" || *p[0].Port != 5432 || *p[0].Protocol != api.ProtocolTCP {
		t.Fatalf("ports %+v", p)
	}
	for _, s := range got {
		if errs := api.ValidateEndpointSlice(withName(s)); len(errs) > 0 {
			t.Fatalf("invalid slice: %v", errs)
		}
	}
}

func withName(s *api.EndpointSlice) *api.EndpointSlice {
	c := api.DeepCopy(s)
	c.Name = c.GenerateName + "x"
	return c
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

func TestShouldMirror(t *testing.T) {
	ep := userEndpoints("db")
	withSelector := selectorless("db")
	withSelector.Spec.Selector = map[string]string{"app": "db"}
	skip := userEndpoints("db")
	skip.Labels[api.LabelSkipMirror] = "true"
	leader := userEndpoints("db")
	leader.Annotations["control-plane.alpha.kubernetes.io/leader"] = "{}"
	for _, tc := range []struct {
		name string
		ep   *api.Endpoints
		svc  *api.Service
		want bool
	}{
		{"selector-less Service", ep, selectorless("db"), true},
		{"no Service", ep, nil, false},
		{"Service with a selector", ep, withSelector, false},
		{"skip-mirror", skip, selectorless("db"), false},
		{"leader lock", leader, selectorless("db"), false},
	} {
		if got := endpointslicemirroring.ShouldMirror(tc.ep, tc.svc); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func startFake(t *testing.T) *fakeapi.Server {
	t.Helper()
	fake := fakeapi.New(res)
	if _, err := fake.Create(t.Context(), resNS, "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	inf := func(info *api.ResourceInfo) *client.Informer {
		return client.NewInformerFor(fake, info, client.InformerOptions{})
	}
	svcs, eps, slices := inf(resSvc), inf(resEp), inf(resSlice)
	ctl, err := endpointslicemirroring.New(endpointslicemirroring.Deps{
		Client: fake.Client(), Services: svcs, Endpoints: eps, EndpointSlices: slices,
	}, endpointslicemirroring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, i := range []*client.Informer{svcs, eps, slices} {
		wg.Go(func() { _ = i.Run(ctx) })
	}
	wg.Go(func() {
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return fake
}

// mirrored lists the slices of service name, summarised as
// "addrType:ip,ip" per slice.
func mirrored(t *testing.T, fake *fakeapi.Server, name string) []api.EndpointSlice {
	t.Helper()
	var l api.EndpointSliceList
	if err := fake.List(t.Context(), resSlice, "default", client.ListOptions{}, &l); err != nil {
		t.Fatal(err)
	}
	var out []api.EndpointSlice
	for _, s := range l.Items {
		if s.Labels[api.LabelServiceName] == name {
			out = append(out, s)
		}
	}
	return out
}

func ipsOf(s []api.EndpointSlice) string {
	out := ""
	for _, x := range s {
		out += x.AddressType + ":"
		for _, e := range x.Endpoints {
			out += e.Addresses[0] + ","
		}
		out += ";"
	}
	return out
}

func TestMirroring(t *testing.T) {
	fake := startFake(t)
	ctx := t.Context()
	c := fake.Client()
	if err := c.Create(ctx, resSvc, "default", selectorless("db")); err != nil {
		t.Fatal(err)
	}
	ep := userEndpoints("db")
	ep.UID = ""
	if err := c.Create(ctx, resEp, "default", ep); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "two mirrored slices", func() bool {
		return ipsOf(mirrored(t, fake, "db")) == "IPv4:192.0.2.10,192.0.2.11,192.0.2.12,;IPv6:2001:db8::10,;" ||
			ipsOf(mirrored(t, fake, "db")) == "IPv6:2001:db8::10,;IPv4:192.0.2.10,192.0.2.11,192.0.2.12,;"
	})

	// The user edits the Endpoints: the IPv4 slice follows in place, the
	// IPv6 one goes.
	var cur api.Endpoints
	if err := fake.Get(ctx, resEp, "default", "db", &cur); err != nil {
		t.Fatal(err)
	}
	before := map[string]bool{}
	for _, s := range mirrored(t, fake, "db") {
		before[s.Name] = true
	}
	cur.Subsets = []api.EndpointSubset{{Addresses: []api.EndpointAddress{{IP: "192.0.2.20"}}, Ports: []api.EndpointsPort{{Name: "pg", Port: 5432, Protocol: api.ProtocolTCP}}}}
	if err := fake.Update(ctx, resEp, "default", &cur); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "the edit mirrored", func() bool { return ipsOf(mirrored(t, fake, "db")) == "IPv4:192.0.2.20,;" })
	if s := mirrored(t, fake, "db"); !before[s[0].Name] {
		t.Errorf("slice %s was recreated instead of updated", s[0].Name)
	}

	// Endpoints labelled skip-mirror (the endpoints controller's) and
	// those of Services with a selector are not mirrored.
	web := selectorless("web")
	web.Spec.Selector = map[string]string{"app": "web"}
	if err := c.Create(ctx, resSvc, "default", web); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, resEp, "default", userEndpoints("web")); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, resSvc, "default", selectorless("skip")); err != nil {
		t.Fatal(err)
	}
	skip := userEndpoints("skip")
	skip.Labels[api.LabelSkipMirror] = "true"
	if err := c.Create(ctx, resEp, "default", skip); err != nil {
		t.Fatal(err)
	}
	// A slice of the endpointslice controller is never touched.
	other := &api.EndpointSlice{ObjectMeta: api.ObjectMeta{Name: "db-other", Namespace: "default", Labels: map[string]string{
		api.LabelServiceName: "db", api.LabelManagedBy: "endpointslice-controller.k8s.io"}}, AddressType: api.AddressTypeIPv4}
	if err := c.Create(ctx, resSlice, "default", other); err != nil {
		t.Fatal(err)
	}

	// The Service goes: its mirrored slices go, the other stays.
	if err := fake.Delete(ctx, resSvc, "default", "db", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	fakeapi.Wait(t, "mirrored slices deleted", func() bool {
		s := mirrored(t, fake, "db")
		return len(s) == 1 && s[0].Name == "db-other"
	})
	if s := mirrored(t, fake, "web"); len(s) != 0 {
		t.Errorf("Endpoints of a Service with a selector mirrored: %v", ipsOf(s))
	}
	if s := mirrored(t, fake, "skip"); len(s) != 0 {
		t.Errorf("skip-mirror Endpoints mirrored: %v", ipsOf(s))
	}
}
