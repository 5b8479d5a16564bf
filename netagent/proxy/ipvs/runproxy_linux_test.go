package ipvs_test

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/egress"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
	"github.com/skiff-dev/skiff/server/servertest"
)

// TestRunProxyIPVS starts `--proxy-mode ipvs` as the agent does
// (netagent.RunProxy) against a real API server (HTTPS on 127.0.0.1, bbolt
// in a temporary directory), programming a simulated node: a Service and
// its EndpointSlice created through the API become an IPVS virtual server
// that balances real HTTP requests from a pod over both endpoints.
func TestRunProxyIPVS(t *testing.T) {
	requireIPVS(t)
	node := proxytest.NewNode(t)
	for i, name := range []string{"pod0", "pod1", "pod2"} {
		node.AddPod(name, netip.AddrFrom4([4]byte{10, 244, 0, byte(2 + i)}))
	}
	c := servertest.Start(t, servertest.Options{}).Client()

	ctx, cancel := context.WithCancel(context.Background())
	inf := client.NewSharedInformers(c)
	done := make(chan error, 1)
	go func() {
		done <- netagent.RunProxy(ctx, netagent.ProxyParams{
			NodeName: proxytest.NodeName, NodeIPs: []netip.Addr{proxytest.NodeIP}, Mode: "ipvs", IPVSScheduler: "rr",
			ClusterCIDR: proxytest.ClusterCIDR, ServiceCIDR: proxytest.ServiceCIDR, PodCIDR: proxytest.PodCIDR,
			Client: c, Informers: inf, NetNS: node.Do, EgressMasquerade: true,
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("RunProxy: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("RunProxy did not return")
		}
		inf.Wait()
	})

	svc := proxytest.Service("default", "web", "10.96.0.60", proxytest.TCP("http", 80))
	svc.Spec.Selector = nil // the slice below is written by hand
	if err := c.Create(ctx, proxytest.ServicesInfo, "default", svc); err != nil {
		t.Fatal(err)
	}
	httpPort := []api.EndpointPort{proxytest.SlicePort("http", proxytest.PodHTTPPort, api.ProtocolTCP)}
	if err := c.Create(ctx, proxytest.SlicesInfo, "default", proxytest.Slice("default", "web", "web-1", httpPort, proxytest.PodEP(0), proxytest.PodEP(1))); err != nil {
		t.Fatal(err)
	}
	// RunProxy registers its informers when it starts; start them as the
	// agent does, then wait for the virtual server to answer.
	deadline := time.Now().Add(30 * time.Second)
	seen := map[string]int{}
	for len(seen) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no balancing through 10.96.0.60 within 30 s (answers %v)", seen)
		}
		select {
		case err := <-done:
			done <- err // for the clean-up
			t.Fatalf("RunProxy returned: %v", err)
		default:
		}
		inf.Start(ctx)
		out, err := proxytest.HTTPGet(node.Pods[2].NetNS, "http://10.96.0.60/")
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		name, _, _ := strings.Cut(out, " ")
		seen[name]++
	}
	if seen["pod0"] == 0 || seen["pod1"] == 0 || len(seen) != 2 {
		t.Errorf("answers %v, want pod0 and pod1", seen)
	}
	// The interface holds the VIP (and the API's own "kubernetes" Service's).
	addrs, err := ipvs.NewDeviceAddrs(node.Path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer addrs.Close()
	got, err := addrs.List()
	if err != nil || !slices.Contains(got, netip.MustParseAddr("10.96.0.60")) {
		t.Errorf("%s holds %v (%v), want 10.96.0.60 among them", ipvs.DeviceName, got, err)
	}
	// The egress masquerade, in the iptables the ipvs mode uses.
	eg := egress.IPTables{Exec: iptables.OSExec{NetNS: node.Path}}
	if eg.Mode, err = iptables.Detect(ctx, eg.Exec); err != nil {
		t.Fatal(err)
	}
	var rules []string
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if rules, err = eg.Rules(ctx); err == nil && len(rules) > 0 {
			break
		}
	}
	if !strings.Contains(strings.Join(rules, "\n"), "MASQUERADE") {
		t.Errorf("egress rules in ipvs mode: %q (%v)", rules, err)
	}
}
