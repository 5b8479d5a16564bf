package ipvs_test

import (
	"context"
	"net/netip"
	"strings"
	"syscall"
	"testing"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// TestIPVSSchedulers programs one Service with each scheduler whose module
// the VM loads (lc, sh) and checks the kernel took it and traffic flows;
// a scheduler whose module is missing must fail the sync (moby/ipvs
// reports kernel errors once the IPVS family exists), not be ignored.
func TestIPVSSchedulers(t *testing.T) {
	requireIPVS(t)
	for _, c := range []struct {
		sched string
		ok    bool
	}{{"lc", true}, {"sh", true}, {"mh", false}} {
		t.Run(c.sched, func(t *testing.T) {
			node := proxytest.NewNode(t)
			node.AddPod("pod0", netip.MustParseAddr("10.244.0.2"))
			client := node.AddPod("pod1", netip.MustParseAddr("10.244.0.3"))
			k, err := ipvs.OpenKernel(ipvs.KernelOptions{NetNS: node.Path})
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			b, err := ipvs.New(context.Background(), ipvs.Config{IPVS: k.IPVS, Addrs: k.Addrs, Scheduler: c.sched,
				Exec: iptables.OSExec{NetNS: node.Path}, Sysctl: node.Sysctl})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = b.Cleanup(context.Background()) }()
			st := state(svcEps{svcPort("ns", "web", "10.96.0.70", nil), []proxy.Endpoint{
				{IP: netip.MustParseAddr("10.244.0.2"), Port: proxytest.PodHTTPPort, NodeName: "node-a", IsLocal: true, Ready: true, Serving: true}}})
			st.NodeIPs, st.ClusterCIDR, st.ServiceCIDR = []netip.Addr{proxytest.NodeIP}, proxytest.ClusterCIDR, proxytest.ServiceCIDR
			err = b.Sync(context.Background(), st, nil)
			if !c.ok {
				if err == nil || !strings.Contains(err.Error(), "10.96.0.70") {
					t.Fatalf("sync with scheduler %s (module not loaded): %v, want an error", c.sched, err)
				}
				t.Logf("refused as expected: %v (errno ENOENT: %v)", err, strings.Contains(err.Error(), syscall.ENOENT.Error()))
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rules, err := b.TraceRules(context.Background(), netip.MustParseAddrPort("10.96.0.70:80"), "TCP")
			if err != nil || len(rules) != 2 || rules[0].Text != "TCP  10.96.0.70:80 "+c.sched {
				t.Fatalf("kernel has %+v (%v), want scheduler %s", rules, err, c.sched)
			}
			if out, err := proxytest.HTTPGet(client.NetNS, "http://10.96.0.70/"); err != nil || !strings.HasPrefix(out, "pod0 ") {
				t.Errorf("through the VIP: %q %v", out, err)
			}
		})
	}
}
