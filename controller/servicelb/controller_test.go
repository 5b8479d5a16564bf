package servicelb_test

import (
	"context"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/servicelb"
	"github.com/skiff-dev/skiff/internal/fakeapi"
)

// TestFakeAssignsFreeAddresses: on the in-memory API, LoadBalancer
// Services get the pool's addresses in order, and an address freed by a
// deleted Service goes to the next one.
func TestFakeAssignsFreeAddresses(t *testing.T) {
	res := api.Resources()
	fake := fakeapi.New(res)
	c := fake.Client()
	ctx, cancel := context.WithCancel(t.Context())
	if err := c.Create(ctx, api.Lookup(res, "v1", "namespaces"), "", &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	services := client.NewInformerFor(fake, resServices, client.InformerOptions{})
	ctl, err := servicelb.New(servicelb.Deps{Client: c, Services: services}, servicelb.Options{Pool: netip.MustParsePrefix("198.51.100.0/29")})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { _ = services.Run(ctx) })
	wg.Go(func() {
		if err := ctl.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })

	ingress := func(name string) string {
		var svc api.Service
		if err := c.Get(ctx, resServices, "default", name, &svc); err != nil || len(svc.Status.LoadBalancer.Ingress) == 0 {
			return ""
		}
		return svc.Status.LoadBalancer.Ingress[0].IP
	}
	waitIngress := func(name, want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for ingress(name) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: ingress %q, want %q", name, ingress(name), want)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	for _, n := range []string{"a", "b"} {
		if err := c.Create(ctx, resServices, "default", lbService(n, "")); err != nil {
			t.Fatal(err)
		}
		waitIngress(n, map[string]string{"a": "198.51.100.1", "b": "198.51.100.2"}[n])
	}
	if err := c.Delete(ctx, resServices, "default", "a", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The informer delivers a's deletion before c's creation and the one
	// worker syncs them in that order, so c gets a's address.
	if err := c.Create(ctx, resServices, "default", lbService("c", "")); err != nil {
		t.Fatal(err)
	}
	waitIngress("c", "198.51.100.1")
	waitIngress("b", "198.51.100.2")
}
