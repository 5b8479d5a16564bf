package cni_test

import (
	"net"
	"net/netip"
	"os"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/netns"
)

// hostHandle is a netlink handle on the test process's own namespace
// (its main thread's, whatever thread the test runs on).
func hostHandle(t *testing.T) *netlink.Handle {
	t.Helper()
	h, err := vnetns.GetFromPid(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	nh, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nh.Close)
	return nh
}

func hasRoute(t *testing.T, h *netlink.Handle, dst netip.Prefix) bool {
	t.Helper()
	rs, err := h.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Dst != nil && r.Dst.String() == dst.String() {
			return true
		}
	}
	return false
}

func TestSetupInNodeNamespace(t *testing.T) {
	tn := newTestNode(t, nil)
	host := hostHandle(t)
	if _, err := host.LinkByName(cni.DefaultBridge); err == nil {
		t.Fatalf("the host already has %s before the test: something broke the netns rule", cni.DefaultBridge)
	}
	hostHadRoute := hasRoute(t, host, testSvcCIDR)

	tn.setup()
	tn.setup() // idempotent

	nh := tn.ns.Netlink(t)
	br, err := nh.LinkByName(cni.DefaultBridge)
	if err != nil {
		t.Fatalf("bridge not in the node namespace: %v", err)
	}
	if br.Type() != "bridge" || br.Attrs().Flags&net.FlagUp == 0 {
		t.Errorf("bridge: type %q flags %v; want an up bridge", br.Type(), br.Attrs().Flags)
	}
	if br.Attrs().MTU != cni.DefaultMTU {
		t.Errorf("bridge MTU %d, want %d", br.Attrs().MTU, cni.DefaultMTU)
	}
	addrs, err := nh.AddrList(br, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	if len(addrs) != 1 || addrs[0].IPNet.String() != "10.77.3.1/24" {
		t.Errorf("bridge addresses %v, want [10.77.3.1/24]", addrs)
	}
	if got := tn.net.Gateway(); got != netip.MustParseAddr("10.77.3.1") {
		t.Errorf("Gateway() = %v", got)
	}

	rs, err := nh.RouteList(br, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	var svc *netlink.Route
	for i := range rs {
		if rs[i].Dst != nil && rs[i].Dst.String() == testSvcCIDR.String() {
			svc = &rs[i]
		}
	}
	if svc == nil {
		t.Fatalf("no %v route on the bridge: %v", testSvcCIDR, rs)
	}
	if svc.Src.String() != "10.77.3.1" || svc.Scope != netlink.SCOPE_LINK {
		t.Errorf("service route %v: want src 10.77.3.1 scope link", svc)
	}

	// The sysctls, read back inside the node namespace.
	for name, want := range map[string]string{
		"net/ipv4/ip_forward":                "1",
		"net/bridge/bridge-nf-call-iptables": "1",
	} {
		var got string
		if err := tn.do(func() error {
			var err error
			got, err = cni.ProcSysctl{}.Get(name)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("node %s = %q, want %q", name, got, want)
		}
	}

	if _, err := os.Stat(cni.ConfListPath(tn.dataDir)); err != nil {
		t.Errorf("conflist not written: %v", err)
	}

	// Nothing of it in the test process's own namespace.
	if _, err := host.LinkByName(cni.DefaultBridge); err == nil {
		t.Errorf("%s appeared in the host namespace", cni.DefaultBridge)
	}
	if !hostHadRoute && hasRoute(t, host, testSvcCIDR) {
		t.Errorf("the service route appeared in the host namespace")
	}
}

func TestSetupKeepsNodeSysctlsApart(t *testing.T) {
	// ip_forward set in the node must not be the host's: set it to 0 in
	// a second node and check it differs from the first after Setup.
	tn := newTestNode(t, nil)
	other := newTestNode(t, nil)
	tn.setup()
	var got string
	if err := other.do(func() error {
		var err error
		got, err = cni.ProcSysctl{}.Get("net/ipv4/ip_forward")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got != "0" {
		t.Errorf("a fresh node's ip_forward is %q after another node's Setup; want 0", got)
	}
}

func TestTwoPodsTalk(t *testing.T) {
	tn := newTestNode(t, nil)
	tn.setup()
	a := tn.add("pod-a")
	b := tn.add("pod-b")

	for _, pn := range []cni.PodNetwork{a, b} {
		if !testPodCIDR.Contains(pn.IP) || pn.IP == tn.net.Gateway() {
			t.Errorf("pod IP %v: want one in %v other than the gateway", pn.IP, testPodCIDR)
		}
		if pn.Gateway != tn.net.Gateway() || pn.IfName != "eth0" {
			t.Errorf("pod network %+v", pn)
		}
		if ok, err := netns.IsNetNS(pn.NetNSPath); err != nil || !ok {
			t.Errorf("%s is not a netns: %v %v", pn.NetNSPath, ok, err)
		}
	}
	if a.IP == b.IP {
		t.Fatalf("both pods got %v", a.IP)
	}

	// The pod interface carries the IP, and the host side is a hairpin
	// port of the bridge.
	var eth0Addrs []string
	if err := netns.Do(a.NetNSPath, func() error {
		l, err := netlink.LinkByName("eth0")
		if err != nil {
			return err
		}
		as, err := netlink.AddrList(l, netlink.FAMILY_V4)
		for _, ad := range as {
			eth0Addrs = append(eth0Addrs, ad.IPNet.String())
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(eth0Addrs, netip.PrefixFrom(a.IP, 24).String()) {
		t.Errorf("pod a eth0 addresses %v, want %v/24", eth0Addrs, a.IP)
	}
	nh := tn.ns.Netlink(t)
	veths := 0
	ls, _ := nh.LinkList()
	for _, l := range ls {
		if l.Type() != "veth" {
			continue
		}
		veths++
		pi, err := nh.LinkGetProtinfo(l)
		if err != nil {
			t.Fatalf("protinfo %s: %v", l.Attrs().Name, err)
		}
		if !pi.Hairpin {
			t.Errorf("bridge port %s: hairpin off", l.Attrs().Name)
		}
		if l.Attrs().MasterIndex == 0 {
			t.Errorf("veth %s not on the bridge", l.Attrs().Name)
		}
	}
	if veths != 2 {
		t.Errorf("%d veths in the node, want 2", veths)
	}

	serveIn(t, b.NetNSPath, netip.AddrPortFrom(b.IP, 8080).String(), "b")
	got, err := dialFrom(a.NetNSPath, netip.AddrPortFrom(b.IP, 8080).String())
	if err != nil || got != "hello from b" {
		t.Errorf("a -> b: %q, %v", got, err)
	}
	serveIn(t, a.NetNSPath, netip.AddrPortFrom(a.IP, 8080).String(), "a")
	got, err = dialFrom(b.NetNSPath, netip.AddrPortFrom(a.IP, 8080).String())
	if err != nil || got != "hello from a" {
		t.Errorf("b -> a: %q, %v", got, err)
	}

	// A pod reaches the gateway (the node's side of the bridge).
	gw := netip.AddrPortFrom(tn.net.Gateway(), 9090).String()
	serveIn(t, tn.ns.Path, gw, "node")
	got, err = dialFrom(a.NetNSPath, gw)
	if err != nil || got != "hello from node" {
		t.Errorf("a -> gateway: %q, %v", got, err)
	}
}
