package nftables

import (
	"context"
	"net/netip"
	"testing"


	"github.com/skiff-dev/skiff/netagent/proxy"
)

func TestSmokeNetlink(t *testing.T) {
	ns := newNS(t, "smoke")
	k, err := NewNetlink(NetlinkOptions{NetNSFd: int(ns.handle)})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	p, _ := New(Config{Kernel: k})
	a := netip.MustParseAddr
	st := &proxy.State{
		Services: map[proxy.ServicePortName]*proxy.ServicePort{},
		Endpoints: map[proxy.ServicePortName][]proxy.Endpoint{},
		NodeName: "n1", NodeIPs: []netip.Addr{a("192.168.1.10")},
		ClusterCIDR: netip.MustParsePrefix("10.244.0.0/16"), ServiceCIDR: netip.MustParsePrefix("10.96.0.0/16"),
	}
	n1 := proxy.ServicePortName{Namespace: "ns", Name: "web", Port: "http", Protocol: "TCP"}
	st.Services[n1] = &proxy.ServicePort{Name: n1, ClusterIPs: []netip.Addr{a("10.96.0.10")}, Port: 80, Protocol: "TCP", NodePort: 30080,
		LoadBalancerIPs: []netip.Addr{a("192.168.5.5")}, LoadBalancerSourceRanges: []netip.Prefix{netip.MustParsePrefix("192.168.0.0/16")},
		ExternalPolicyLocal: true}
	st.Endpoints[n1] = []proxy.Endpoint{{IP: a("10.244.0.2"), Port: 8080, Ready: true, IsLocal: true}, {IP: a("10.244.1.2"), Port: 8080, Ready: true}}
	n2 := proxy.ServicePortName{Namespace: "ns", Name: "empty", Port: "", Protocol: "UDP"}
	st.Services[n2] = &proxy.ServicePort{Name: n2, ClusterIPs: []netip.Addr{a("10.96.0.11")}, Port: 53, Protocol: "UDP", NodePort: 30053}
	if err := p.Sync(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	t.Log(ns.run(t, "nft", "list", "ruleset"))
	st.Endpoints[n1] = append(st.Endpoints[n1], proxy.Endpoint{IP: a("10.244.0.3"), Port: 8080, Ready: true, IsLocal: true})
	if err := p.Sync(context.Background(), st, []proxy.ServicePortName{n1}); err != nil {
		t.Fatal(err)
	}
	if err := p.Sync(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	t.Log(ns.run(t, "nft", "list", "table", "ip", "skiff"))
}
