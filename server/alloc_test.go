package server_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server/servertest"
)

// wantAPIError checks err's code and that its message holds every part.
func wantAPIError(t *testing.T, err error, code int32, parts ...string) *client.APIError {
	t.Helper()
	var ae *client.APIError
	if !asErr(err, &ae) {
		t.Fatalf("want a %d Status, got %v", code, err)
	}
	if ae.Status.Code != code {
		t.Fatalf("want code %d, got %d: %s", code, ae.Status.Code, ae.Status.Message)
	}
	for _, p := range parts {
		if !strings.Contains(ae.Status.Message, p) {
			t.Fatalf("message %q lacks %q", ae.Status.Message, p)
		}
	}
	return ae
}

func ipaExists(t *testing.T, c *client.Client, ip string) bool {
	t.Helper()
	var a api.IPAddress
	err := c.Get(ctxT(t, 10*time.Second), resIPAddrs, "", ip, &a)
	if client.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func TestClusterIPAllocation(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	c := ts.Client()
	ctx := ctxT(t, 60*time.Second)
	create := func(s *api.Service) error { return c.Create(ctx, resServices, "default", s) }

	t.Run("explicit IP is honoured", func(t *testing.T) {
		s := service("explicit", api.ServiceTypeClusterIP, 80)
		s.Spec.ClusterIP = "10.96.0.50"
		if err := create(s); err != nil {
			t.Fatal(err)
		}
		if s.Spec.ClusterIP != "10.96.0.50" || len(s.Spec.ClusterIPs) != 1 || s.Spec.ClusterIPs[0] != "10.96.0.50" {
			t.Fatalf("got clusterIP %q clusterIPs %v", s.Spec.ClusterIP, s.Spec.ClusterIPs)
		}
		if !ipaExists(t, c, "10.96.0.50") {
			t.Fatal("no IPAddress 10.96.0.50")
		}
	})
	t.Run("taken IP", func(t *testing.T) {
		s := service("taken", api.ServiceTypeClusterIP, 80)
		s.Spec.ClusterIP = "10.96.0.50"
		ae := wantAPIError(t, create(s), 422, "provided IP is already allocated")
		if ae.Status.Reason != api.StatusReasonInvalid || ae.Status.Details == nil || len(ae.Status.Details.Causes) == 0 ||
			!strings.HasPrefix(ae.Status.Details.Causes[0].Field, "spec.clusterIP") {
			t.Fatalf("Status %+v", ae.Status)
		}
	})
	t.Run("the kubernetes Service's IP is taken", func(t *testing.T) {
		s := service("taken-kube", api.ServiceTypeClusterIP, 80)
		s.Spec.ClusterIP = "10.96.0.1"
		wantAPIError(t, create(s), 422, "provided IP is already allocated")
	})
	for _, ip := range []string{"10.97.0.5", "10.96.0.0", "10.96.255.255", "192.168.1.1"} {
		t.Run("out of range "+ip, func(t *testing.T) {
			s := service("out-"+strings.ReplaceAll(ip, ".", "-"), api.ServiceTypeClusterIP, 80)
			s.Spec.ClusterIP = ip
			wantAPIError(t, create(s), 422, "provided IP is not in the valid range")
		})
	}
	t.Run("headless takes no IP", func(t *testing.T) {
		before := len(listIPAddresses(t, c))
		s := service("headless", api.ServiceTypeClusterIP, 80)
		s.Spec.ClusterIP = api.ClusterIPNone
		if err := create(s); err != nil {
			t.Fatal(err)
		}
		if s.Spec.ClusterIP != api.ClusterIPNone {
			t.Fatalf("headless got clusterIP %q", s.Spec.ClusterIP)
		}
		if after := len(listIPAddresses(t, c)); after != before {
			t.Fatalf("headless Service made an IPAddress: %d -> %d", before, after)
		}
	})
	t.Run("ExternalName takes no IP", func(t *testing.T) {
		before := len(listIPAddresses(t, c))
		s := &api.Service{ObjectMeta: api.ObjectMeta{Name: "ext"},
			Spec: api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "example.com"}}
		if err := create(s); err != nil {
			t.Fatal(err)
		}
		if s.Spec.ClusterIP != "" || len(s.Spec.ClusterIPs) != 0 {
			t.Fatalf("ExternalName got clusterIP %q %v", s.Spec.ClusterIP, s.Spec.ClusterIPs)
		}
		if after := len(listIPAddresses(t, c)); after != before {
			t.Fatalf("ExternalName Service made an IPAddress: %d -> %d", before, after)
		}
	})
	t.Run("delete releases the IP and its IPAddress", func(t *testing.T) {
		s := service("release", api.ServiceTypeClusterIP, 80)
		s.Spec.ClusterIP = "10.96.0.60"
		if err := create(s); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, resServices, "default", "release", client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if ipaExists(t, c, "10.96.0.60") {
			t.Fatal("IPAddress 10.96.0.60 outlived its Service")
		}
		again := service("release-again", api.ServiceTypeClusterIP, 80)
		again.Spec.ClusterIP = "10.96.0.60"
		if err := create(again); err != nil {
			t.Fatalf("released IP not reusable: %v", err)
		}
		if !ipaExists(t, c, "10.96.0.60") {
			t.Fatal("no IPAddress for the reused IP")
		}
	})
	t.Run("update keeps the clusterIP when the PUT omits it", func(t *testing.T) {
		s := service("keep-ip", api.ServiceTypeClusterIP, 80)
		if err := create(s); err != nil {
			t.Fatal(err)
		}
		ip := s.Spec.ClusterIP
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
		s.Labels = map[string]string{"v": "2"}
		if err := c.Update(ctx, resServices, "default", s); err != nil {
			t.Fatal(err)
		}
		if s.Spec.ClusterIP != ip || len(s.Spec.ClusterIPs) != 1 || s.Spec.ClusterIPs[0] != ip {
			t.Fatalf("PUT without clusterIP: got %q %v, want %s", s.Spec.ClusterIP, s.Spec.ClusterIPs, ip)
		}
	})
	t.Run("clusterIP is immutable", func(t *testing.T) {
		var s api.Service
		if err := c.Get(ctx, resServices, "default", "keep-ip", &s); err != nil {
			t.Fatal(err)
		}
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.70", []string{"10.96.0.70"}
		wantAPIError(t, c.Update(ctx, resServices, "default", &s), 422)
		if ipaExists(t, c, "10.96.0.70") {
			t.Fatal("a rejected update left IPAddress 10.96.0.70")
		}
		s2 := service("takes-70", api.ServiceTypeClusterIP, 80)
		s2.Spec.ClusterIP = "10.96.0.70"
		if err := create(s2); err != nil {
			t.Fatalf("a rejected update kept 10.96.0.70 taken: %v", err)
		}
	})
	t.Run("dynamic allocation lands in the upper band", func(t *testing.T) {
		// 10.96.0.0/16: the static band is the first 256 addresses.
		top := netip.MustParseAddr("10.96.1.0")
		for i := range 20 {
			s := service(fmt.Sprintf("dyn-%d", i), api.ServiceTypeNodePort, 80)
			if err := create(s); err != nil {
				t.Fatal(err)
			}
			ip := netip.MustParseAddr(s.Spec.ClusterIP)
			if ip.Compare(top) <= 0 {
				t.Errorf("dynamic IP %s is in the static band", ip)
			}
			// 30000-32767: the static band is the first 86 ports.
			if np := s.Spec.Ports[0].NodePort; np < 30086 || np > 32767 {
				t.Errorf("dynamic NodePort %d is not in the upper band", np)
			}
		}
	})
	checkAllocations(t, c)
}

// TestNodePortAllocation names its ports inside the static band
// (30000-30085 of the default range, KEP-3668), which dynamic allocation
// leaves alone while the upper band has room: a port named above it could
// already be another Service's, picked at random.
func TestNodePortAllocation(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	c := ts.Client()
	ctx := ctxT(t, 60*time.Second)
	create := func(s *api.Service) error { return c.Create(ctx, resServices, "default", s) }
	get := func(name string) *api.Service {
		var s api.Service
		if err := c.Get(ctx, resServices, "default", name, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}

	t.Run("explicit port is honoured", func(t *testing.T) {
		s := service("np", api.ServiceTypeNodePort, 80, 443)
		s.Spec.Ports[0].NodePort = 30080
		if err := create(s); err != nil {
			t.Fatal(err)
		}
		if s.Spec.Ports[0].NodePort != 30080 || s.Spec.Ports[1].NodePort == 0 || s.Spec.Ports[1].NodePort == 30080 {
			t.Fatalf("ports %+v", s.Spec.Ports)
		}
	})
	t.Run("taken port", func(t *testing.T) {
		s := service("np-taken", api.ServiceTypeNodePort, 80)
		s.Spec.Ports[0].NodePort = 30080
		ae := wantAPIError(t, create(s), 422, "provided port is already allocated")
		if ae.Status.Details == nil || len(ae.Status.Details.Causes) == 0 || ae.Status.Details.Causes[0].Field != "spec.ports[0].nodePort" {
			t.Fatalf("Status %+v", ae.Status)
		}
	})
	t.Run("a failed create releases what it took", func(t *testing.T) {
		// Port 1 is free and taken first; port 2 collides; the create
		// fails and must give port 30081 and the ClusterIP back.
		s := service("np-partial", api.ServiceTypeNodePort, 80, 81)
		s.Spec.ClusterIP = "10.96.0.80"
		s.Spec.Ports[0].NodePort = 30081
		s.Spec.Ports[1].NodePort = 30080
		wantAPIError(t, create(s), 422, "provided port is already allocated")
		ok := service("np-partial-ok", api.ServiceTypeNodePort, 80)
		ok.Spec.ClusterIP = "10.96.0.80"
		ok.Spec.Ports[0].NodePort = 30081
		if err := create(ok); err != nil {
			t.Fatalf("the failed create kept its IP or port: %v", err)
		}
	})
	t.Run("out of range port", func(t *testing.T) {
		s := service("np-out", api.ServiceTypeNodePort, 80)
		s.Spec.Ports[0].NodePort = 29999
		wantAPIError(t, create(s), 422, "29999")
	})
	t.Run("LoadBalancer with externalTrafficPolicy Local gets a healthCheckNodePort", func(t *testing.T) {
		s := service("lb", api.ServiceTypeLoadBalancer, 80)
		s.Spec.ExternalTrafficPolicy = "Local"
		if err := create(s); err != nil {
			t.Fatal(err)
		}
		hc := s.Spec.HealthCheckNodePort
		if hc < 30000 || hc > 32767 || hc == s.Spec.Ports[0].NodePort || s.Spec.Ports[0].NodePort == 0 {
			t.Fatalf("healthCheckNodePort %d, nodePort %d", hc, s.Spec.Ports[0].NodePort)
		}
		// Cluster policy frees the health-check port.
		s.Spec.ExternalTrafficPolicy = "Cluster"
		s.Spec.HealthCheckNodePort = 0
		if err := c.Update(ctx, resServices, "default", s); err != nil {
			t.Fatal(err)
		}
		if s.Spec.HealthCheckNodePort != 0 {
			t.Fatalf("Cluster policy kept healthCheckNodePort %d", s.Spec.HealthCheckNodePort)
		}
		reuse := service("np-hc-reuse", api.ServiceTypeNodePort, 80)
		reuse.Spec.Ports[0].NodePort = hc
		if err := create(reuse); err != nil {
			t.Fatalf("freed healthCheckNodePort %d not reusable: %v", hc, err)
		}
	})
	t.Run("ClusterIP Service has no NodePort", func(t *testing.T) {
		s := service("cip", api.ServiceTypeClusterIP, 80)
		if err := create(s); err != nil {
			t.Fatal(err)
		}
		if s.Spec.Ports[0].NodePort != 0 {
			t.Fatalf("ClusterIP Service got nodePort %d", s.Spec.Ports[0].NodePort)
		}
	})
	t.Run("NodePort to ClusterIP frees the ports", func(t *testing.T) {
		s := service("np-to-cip", api.ServiceTypeNodePort, 80)
		s.Spec.Ports[0].NodePort = 30050
		if err := create(s); err != nil {
			t.Fatal(err)
		}
		s.Spec.Type = api.ServiceTypeClusterIP
		if err := c.Update(ctx, resServices, "default", s); err != nil {
			t.Fatalf("type change: %v", err)
		}
		if s.Spec.Ports[0].NodePort != 0 {
			t.Errorf("the Update's answer kept nodePort %d", s.Spec.Ports[0].NodePort)
		}
		if got := get("np-to-cip"); got.Spec.Ports[0].NodePort != 0 || got.Spec.ExternalTrafficPolicy != "" {
			t.Fatalf("stored ClusterIP Service kept nodePort %d / externalTrafficPolicy %q", got.Spec.Ports[0].NodePort, got.Spec.ExternalTrafficPolicy)
		}
		again := service("np-after", api.ServiceTypeNodePort, 80)
		again.Spec.Ports[0].NodePort = 30050
		if err := create(again); err != nil {
			t.Fatalf("freed port 30050 not reusable: %v", err)
		}
	})
	t.Run("merge patch of type NodePort to ClusterIP frees the ports", func(t *testing.T) {
		s := service("np-patch", api.ServiceTypeNodePort, 80)
		s.Spec.Ports[0].NodePort = 30051
		if err := create(s); err != nil {
			t.Fatal(err)
		}
		var out api.Service
		err := c.Patch(ctx, resServices, "default", "np-patch", client.MergePatchType, []byte(`{"spec":{"type":"ClusterIP"}}`), &out)
		if err != nil {
			t.Fatalf("patch type: %v", err)
		}
		if out.Spec.Ports[0].NodePort != 0 || out.Spec.ExternalTrafficPolicy != "" || out.Spec.ClusterIP != s.Spec.ClusterIP {
			t.Fatalf("after patch: %+v", out.Spec)
		}
		again := service("np-patch-after", api.ServiceTypeNodePort, 80)
		again.Spec.Ports[0].NodePort = 30051
		if err := create(again); err != nil {
			t.Fatalf("freed port 30051 not reusable: %v", err)
		}
	})
	t.Run("update keeps nodePorts when the PUT omits them", func(t *testing.T) {
		s := get("np")
		want := []int32{s.Spec.Ports[0].NodePort, s.Spec.Ports[1].NodePort}
		s.Spec.Ports[0].NodePort, s.Spec.Ports[1].NodePort = 0, 0
		if err := c.Update(ctx, resServices, "default", s); err != nil {
			t.Fatal(err)
		}
		if s.Spec.Ports[0].NodePort != want[0] || s.Spec.Ports[1].NodePort != want[1] {
			t.Fatalf("nodePorts %d,%d after PUT, want %v", s.Spec.Ports[0].NodePort, s.Spec.Ports[1].NodePort, want)
		}
	})
	t.Run("changing a nodePort frees the old one", func(t *testing.T) {
		s := get("np")
		s.Spec.Ports[0].NodePort = 30060
		if err := c.Update(ctx, resServices, "default", s); err != nil {
			t.Fatal(err)
		}
		again := service("np-30080", api.ServiceTypeNodePort, 80)
		again.Spec.Ports[0].NodePort = 30080
		if err := create(again); err != nil {
			t.Fatalf("old nodePort 30080 not freed: %v", err)
		}
	})
	t.Run("delete frees the ports", func(t *testing.T) {
		if err := c.Delete(ctx, resServices, "default", "np-30080", client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		again := service("np-30080-b", api.ServiceTypeNodePort, 80)
		again.Spec.Ports[0].NodePort = 30080
		if err := create(again); err != nil {
			t.Fatalf("deleted Service's nodePort not freed: %v", err)
		}
	})
	checkAllocations(t, c)
}

func TestRangeFull(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{
		ServiceCIDR: "10.96.0.0/28", // 14 usable; kubernetes holds .1
		Config:      func(cfg *config.Server) { cfg.NodePortRange = "30000-30019" },
	})
	c := ts.Client()
	ctx := ctxT(t, 60*time.Second)
	var made []string
	for i := range 13 {
		s := service(fmt.Sprintf("fill-%d", i), api.ServiceTypeClusterIP, 80)
		if err := c.Create(ctx, resServices, "default", s); err != nil {
			t.Fatalf("create %d of 13: %v", i, err)
		}
		made = append(made, s.Spec.ClusterIP)
	}
	full := service("one-too-many", api.ServiceTypeClusterIP, 80)
	wantAPIError(t, c.Create(ctx, resServices, "default", full), 500, "failed to allocate IP", "range is full")
	// Headless and ExternalName Services still fit.
	hl := service("headless", api.ServiceTypeClusterIP, 80)
	hl.Spec.ClusterIP = api.ClusterIPNone
	if err := c.Create(ctx, resServices, "default", hl); err != nil {
		t.Fatalf("headless in a full range: %v", err)
	}
	// Freeing one makes room for exactly one.
	if err := c.Delete(ctx, resServices, "default", "fill-4", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, resServices, "default", full); err != nil {
		t.Fatalf("create after a delete freed an IP: %v", err)
	}
	if full.Spec.ClusterIP != made[4] {
		t.Fatalf("got %s, the only free IP is %s", full.Spec.ClusterIP, made[4])
	}
	wantAPIError(t, c.Create(ctx, resServices, "default", service("again-too-many", api.ServiceTypeClusterIP, 80)), 500, "range is full")
	checkAllocations(t, c)

	t.Run("node ports", func(t *testing.T) {
		// 20 ports: two Services of 10 ports each fill them. Make room
		// for their three ClusterIPs first.
		for _, n := range []string{"fill-0", "fill-1", "fill-2"} {
			if err := c.Delete(ctx, resServices, "default", n, client.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		ports := make([]int32, 10)
		for i := range ports {
			ports[i] = int32(8000 + i)
		}
		for i := range 2 {
			s := service(fmt.Sprintf("np-fill-%d", i), api.ServiceTypeNodePort, ports...)
			if err := c.Create(ctx, resServices, "default", s); err != nil {
				t.Fatalf("NodePort fill %d: %v", i, err)
			}
		}
		s := service("np-full", api.ServiceTypeNodePort, 80)
		err := c.Create(ctx, resServices, "default", s)
		wantAPIError(t, err, 500, "range is full")
		// The failed create gave its ClusterIP back: the last free IP fits.
		last := service("last-ip", api.ServiceTypeClusterIP, 80)
		if err := c.Create(ctx, resServices, "default", last); err != nil {
			t.Fatalf("the failed NodePort create kept its ClusterIP: %v", err)
		}
		checkAllocations(t, c)
	})
}

// TestConcurrentCreatesNeverDuplicate: 200 goroutines create NodePort
// Services at once over HTTPS; no ClusterIP or NodePort is handed out
// twice, and the IPAddress objects match the Services one to one.
func TestConcurrentCreatesNeverDuplicate(t *testing.T) {
	// A small range makes collisions likely if the allocator were racy:
	// 200 Services in 254 addresses and 300 ports.
	ts := servertest.Start(t, servertest.Options{
		ServiceCIDR: "10.96.0.0/24",
		Config:      func(cfg *config.Server) { cfg.NodePortRange = "30000-30299" },
	})
	const n = 200
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		got   = map[string]*api.Service{}
		start = make(chan struct{})
	)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := service(fmt.Sprintf("conc-%d", i), api.ServiceTypeNodePort, 80)
			<-start
			if err := ts.Client().Create(ctx, resServices, "default", s); err != nil {
				errs <- fmt.Errorf("create %s: %w", s.Name, err)
				return
			}
			mu.Lock()
			got[s.Name] = s
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(got) != n {
		t.Fatalf("%d of %d creates succeeded", len(got), n)
	}
	ips, ports := map[string]string{}, map[int32]string{}
	for name, s := range got {
		if o, dup := ips[s.Spec.ClusterIP]; dup {
			t.Errorf("ClusterIP %s acknowledged to both %s and %s", s.Spec.ClusterIP, o, name)
		}
		ips[s.Spec.ClusterIP] = name
		np := s.Spec.Ports[0].NodePort
		if o, dup := ports[np]; dup {
			t.Errorf("NodePort %d acknowledged to both %s and %s", np, o, name)
		}
		ports[np] = name
	}
	stored := checkAllocations(t, ts.Client())
	if len(stored) != n+1 {
		t.Fatalf("%d Services stored, want %d", len(stored), n+1)
	}
	if ipas := listIPAddresses(t, ts.Client()); len(ipas) != n+1 {
		t.Fatalf("%d IPAddresses, want %d (one per Service)", len(ipas), n+1)
	}
}

// TestIPAddressOfALiveServiceCannotBeDeleted: deleting the IPAddress of a
// Service through the API must not free its ClusterIP for another Service.
func TestIPAddressOfALiveServiceCannotBeDeleted(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	c := ts.Client()
	ctx := ctxT(t, 30*time.Second)
	a := service("holder", api.ServiceTypeClusterIP, 80)
	a.Spec.ClusterIP = "10.96.0.40"
	if err := c.Create(ctx, resServices, "default", a); err != nil {
		t.Fatal(err)
	}
	err := c.Delete(ctx, resIPAddrs, "", "10.96.0.40", client.DeleteOptions{})
	wantAPIError(t, err, 409, "default/holder")
	if !ipaExists(t, c, "10.96.0.40") {
		t.Fatal("IPAddress of a live Service deleted")
	}
	b := service("thief", api.ServiceTypeClusterIP, 80)
	b.Spec.ClusterIP = "10.96.0.40"
	wantAPIError(t, c.Create(ctx, resServices, "default", b), 422, "provided IP is already allocated")

	// A user's own IPAddress, and one whose Service is gone, can be deleted.
	own := &api.IPAddress{ObjectMeta: api.ObjectMeta{Name: "10.96.0.41"},
		Spec: api.IPAddressSpec{ParentRef: &api.ParentReference{Resource: "services", Namespace: "default", Name: "nobody"}}}
	if err := c.Create(ctx, resIPAddrs, "", own); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, resIPAddrs, "", "10.96.0.41", client.DeleteOptions{}); err != nil {
		t.Fatalf("delete an IPAddress without a live parent: %v", err)
	}
	c2 := service("after", api.ServiceTypeClusterIP, 80)
	c2.Spec.ClusterIP = "10.96.0.41"
	if err := c.Create(ctx, resServices, "default", c2); err != nil {
		t.Fatalf("IP of a deleted user IPAddress not free: %v", err)
	}
	checkAllocations(t, c)
}

// TestDryRunAllocatesNothing: a dry-run create answers with an IP and a
// port but keeps neither.
func TestDryRunAllocatesNothing(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	c := ts.Client()
	ctx := ctxT(t, 30*time.Second)
	s := service("dry", api.ServiceTypeNodePort, 80)
	s.Spec.ClusterIP = "10.96.0.90"
	s.Spec.Ports[0].NodePort = 30190
	var out api.Service
	if err := c.Do(ctx, "POST", "/api/v1/namespaces/default/services?dryRun=All", s, &out); err != nil {
		t.Fatal(err)
	}
	if out.Spec.ClusterIP != "10.96.0.90" || out.Spec.Ports[0].NodePort != 30190 {
		t.Fatalf("dry run answered %+v", out.Spec)
	}
	if ipaExists(t, c, "10.96.0.90") {
		t.Fatal("dry run stored an IPAddress")
	}
	var got api.Service
	if err := c.Get(ctx, resServices, "default", "dry", &got); !client.IsNotFound(err) {
		t.Fatalf("dry run stored the Service: %v", err)
	}
	real := service("real", api.ServiceTypeNodePort, 80)
	real.Spec.ClusterIP = "10.96.0.90"
	real.Spec.Ports[0].NodePort = 30190
	if err := c.Create(ctx, resServices, "default", real); err != nil {
		t.Fatalf("dry run kept its IP or port: %v", err)
	}
	// A dry-run delete frees nothing.
	if err := c.Do(ctx, "DELETE", "/api/v1/namespaces/default/services/real?dryRun=All", nil, nil); err != nil {
		t.Fatal(err)
	}
	again := service("again", api.ServiceTypeClusterIP, 80)
	again.Spec.ClusterIP = "10.96.0.90"
	wantAPIError(t, c.Create(ctx, resServices, "default", again), 422, "provided IP is already allocated")
	if !ipaExists(t, c, "10.96.0.90") {
		t.Fatal("dry-run delete removed the IPAddress")
	}
	checkAllocations(t, c)
}
