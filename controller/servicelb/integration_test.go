package servicelb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resServices = api.Lookup(api.Resources(), "v1", "services")
	resEvents   = api.Lookup(api.Resources(), "v1", "events")
)

// startServer starts a server whose LoadBalancer pool is lbCIDR ("" for
// none); it stops at the end of the test.
func startServer(t *testing.T, lbCIDR string) *servertest.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("a real API server; -short runs the tests on the fake API only")
	}
	return servertest.Start(t, servertest.Options{LBCIDR: lbCIDR})
}

// TestRestartKeepsAddresses: a restarted server's controller rebuilds its
// table from the Services' status before assigning: the addresses stay,
// and a new Service gets a free one, never a taken one.
func TestRestartKeepsAddresses(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, "198.51.100.0/29")
	c := ts.Client()
	for _, n := range []string{"a", "b"} {
		if err := c.Create(ctx, resServices, "default", lbService(n, "")); err != nil {
			t.Fatal(err)
		}
	}
	ingressOf(t, c, "a", "198.51.100.1")
	ingressOf(t, c, "b", "198.51.100.2")
	if err := c.Delete(ctx, resServices, "default", "a", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ts.Restart()
	c = ts.Client()
	for _, n := range []string{"c", "d"} {
		if err := c.Create(ctx, resServices, "default", lbService(n, "")); err != nil {
			t.Fatal(err)
		}
	}
	ingressOf(t, c, "b", "198.51.100.2")
	ingressOf(t, c, "c", "198.51.100.1")
	ingressOf(t, c, "d", "198.51.100.3")
}

func lbService(name, want string) *api.Service {
	return &api.Service{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec: api.ServiceSpec{Type: api.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "x"}, LoadBalancerIP: want,
			Ports: []api.ServicePort{{Port: 80, TargetPort: api.FromInt32(8080), Protocol: api.ProtocolTCP}}}}
}

func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: not true after 10s (last: %v)", what, last)
}

// ingressOf waits for name's status to settle on want ("" = no ingress).
func ingressOf(t *testing.T, c *client.Client, name, want string) {
	t.Helper()
	eventually(t, name+" ingress "+want, func() (bool, error) {
		var s api.Service
		if err := c.Get(context.Background(), resServices, "default", name, &s); err != nil {
			return false, err
		}
		got := ""
		if ing := s.Status.LoadBalancer.Ingress; len(ing) == 1 {
			got = ing[0].IP
		} else if len(ing) > 1 {
			return false, fmt.Errorf("%d ingress entries", len(ing))
		}
		return got == want, fmt.Errorf("ingress %q", got)
	})
}

// TestAssignFromPool runs the controller inside a real server with a /29
// pool (6 usable addresses): the lowest free address, spec.loadBalancerIP
// honoured, a full pool leaves a Service pending with a Warning, a deleted
// Service frees its address for the pending one, a type change clears
// the status.
func TestAssignFromPool(t *testing.T) {
	c := startServer(t, "198.51.100.0/29").Client()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Create(ctx, resServices, "default", lbService("a", "")))
	ingressOf(t, c, "a", "198.51.100.1")
	must(c.Create(ctx, resServices, "default", lbService("b", "198.51.100.5")))
	ingressOf(t, c, "b", "198.51.100.5")
	// A wanted address outside the pool is not ours to give: lowest free.
	must(c.Create(ctx, resServices, "default", lbService("c", "203.0.113.9")))
	ingressOf(t, c, "c", "198.51.100.2")
	for i, want := range []string{"198.51.100.3", "198.51.100.4", "198.51.100.6"} {
		name := fmt.Sprintf("d%d", i)
		must(c.Create(ctx, resServices, "default", lbService(name, "")))
		ingressOf(t, c, name, want)
	}
	// The pool is full: pending, with an event saying so.
	must(c.Create(ctx, resServices, "default", lbService("late", "")))
	eventually(t, "AllocationFailed event", func() (bool, error) {
		var l api.EventList
		if err := c.List(ctx, resEvents, "default", client.ListOptions{}, &l); err != nil {
			return false, err
		}
		for _, e := range l.Items {
			if e.InvolvedObject.Name == "late" && e.Reason == "AllocationFailed" {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events", len(l.Items))
	})
	ingressOf(t, c, "late", "")
	// Deleting b frees .5 for the pending Service.
	must(c.Delete(ctx, resServices, "default", "b", client.DeleteOptions{}))
	ingressOf(t, c, "late", "198.51.100.5")
	// No longer a LoadBalancer: the status is cleared, the address freed.
	var a api.Service
	must(c.Get(ctx, resServices, "default", "a", &a))
	a.Spec.Type = api.ServiceTypeClusterIP
	a.Spec.LoadBalancerIP = ""
	for i := range a.Spec.Ports {
		a.Spec.Ports[i].NodePort = 0
	}
	a.Spec.AllocateLoadBalancerNodePorts = nil
	a.Spec.ExternalTrafficPolicy = ""
	must(c.Update(ctx, resServices, "default", &a))
	ingressOf(t, c, "a", "")
	must(c.Create(ctx, resServices, "default", lbService("e", "")))
	ingressOf(t, c, "e", "198.51.100.1")
}

// TestNoPoolNoController: without --lb-cidr LoadBalancer Services stay
// pending.
func TestNoPoolNoController(t *testing.T) {
	c := startServer(t, "").Client()
	ctx := context.Background()
	if err := c.Create(ctx, resServices, "default", lbService("a", "")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	ingressOf(t, c, "a", "")
}

func TestPoolValidation(t *testing.T) {
	for _, p := range []string{"198.51.100.0/31", "2001:db8::/64"} {
		cfg := config.ServerDefaults()
		cfg.LBCIDR = p
		if _, err := cfg.Parse(); err == nil {
			t.Errorf("--lb-cidr %s accepted", p)
		}
	}
	cfg := config.ServerDefaults()
	cfg.LBCIDR = "10.96.128.0/24"
	if _, err := cfg.Parse(); err == nil {
		t.Error("--lb-cidr inside --service-cidr accepted")
	}
}
