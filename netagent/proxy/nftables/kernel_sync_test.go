package nftables

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
)

// TestKernelSyncSequence applies the same random changes to the real kernel
// (netlink, in a test netns) and to the fake: the kernel must accept every
// transaction the partial syncs send, and end up with the same chains and
// sets as the fake. nft must be able to list what netlink wrote.
func TestKernelSyncSequence(t *testing.T) {
	ns := newNS(t, "seq")
	k, err := NewNetlink(NetlinkOptions{NetNSFd: ns.fd(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	real, _ := New(Config{Kernel: k, Logger: quietLog()})
	fake, f := newFakeProxier(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	st := newState()
	names := []proxy.ServicePortName{}
	for i := range 10 {
		proto := []string{"TCP", "UDP", "SCTP"}[i%3]
		names = append(names, spn(fmt.Sprintf("svc%d", i), "p", proto))
	}
	randomize := func(i int) {
		n := names[i]
		if rng.IntN(6) == 0 {
			delete(st.Services, n)
			delete(st.Endpoints, n)
			return
		}
		var mods []func(*proxy.ServicePort)
		if rng.IntN(2) == 0 {
			mods = append(mods, nodePort(int32(30000+i)))
		}
		if rng.IntN(3) == 0 {
			mods = append(mods, lbIP(fmt.Sprintf("192.168.50.%d", i+1), "192.168.7.0/24", "192.168.1.0/24"))
		}
		if rng.IntN(4) == 0 {
			mods = append(mods, externalIP(fmt.Sprintf("192.168.60.%d", i+1)))
		}
		if rng.IntN(3) == 0 {
			mods = append(mods, extLocal)
		}
		if rng.IntN(4) == 0 {
			mods = append(mods, intLocal)
		}
		if rng.IntN(3) == 0 {
			mods = append(mods, affinity(time.Duration(1+rng.IntN(2))*time.Hour))
		}
		addSvc(st, n, fmt.Sprintf("10.96.1.%d", i+1), 80, mods...)
		var e []string
		for range rng.IntN(6) {
			e = append(e, fmt.Sprintf("10.244.%d.%d:8080", rng.IntN(3), 2+rng.IntN(5)))
		}
		st.Endpoints[n] = eps(e...)
	}
	for i := range names {
		randomize(i)
	}
	sync := func(changed []proxy.ServicePortName) {
		t.Helper()
		if err := real.Sync(ctx, st, changed); err != nil {
			t.Fatalf("kernel: %v", err)
		}
		if err := fake.Sync(ctx, st, changed); err != nil {
			t.Fatalf("fake: %v", err)
		}
	}
	sync(nil)
	for round := range 80 {
		var changed []proxy.ServicePortName
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(names))
			randomize(i)
			changed = append(changed, names[i])
		}
		if round%20 == 19 {
			changed = nil // a periodic full sync over the live table
		}
		sync(changed)
		kc, ks, err := k.List(ctx, IPv4, TableName)
		if err != nil {
			t.Fatal(err)
		}
		fc, fs, _ := f.List(ctx, IPv4, TableName)
		slices.Sort(kc)
		if !slices.Equal(kc, fc) {
			t.Fatalf("round %d: chains differ:\n kernel %q\n fake   %q", round, kc, fc)
		}
		if len(ks) != len(fs) {
			t.Fatalf("round %d: kernel has %d sets, fake %d", round, len(ks), len(fs))
		}
	}
	out, err := ns.output("nft", "list", "ruleset")
	if err != nil {
		t.Fatalf("nft cannot list the ruleset netlink wrote: %v\n%s", err, out)
	}
	for _, want := range []string{"chain services {", "vmap @service-ips", "dnat ip to numgen random mod", "masquerade fully-random", "reject"} {
		if !strings.Contains(out, want) {
			t.Errorf("nft list ruleset lacks %q", want)
		}
	}
}

// TestKernelIPv6 programs a dual-stack Service through netlink and checks
// that the kernel takes the ip6 table (v6 payload offsets, registers and
// NAT family) and that nft can list it; a v6 client in a pod reaches the
// endpoint through the v6 ClusterIP.
func TestKernelIPv6(t *testing.T) {
	c := newTestCluster(t, 1)
	c.node.run(t, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1", "net.bridge.bridge-nf-call-ip6tables=1")
	c.node.run(t, "ip", "addr", "add", "fd00:244::1/64", "dev", "skiff0", "nodad")
	c.node.run(t, "ip", "route", "add", "fd00:96::/112", "dev", "skiff0", "src", "fd00:244::1")
	c.pods[0].run(t, "ip", "addr", "add", "fd00:244::10/64", "dev", "eth0", "nodad")
	c.pods[0].run(t, "ip", "route", "add", "default", "via", "fd00:244::1")
	var ln net.Listener
	if err := c.pods[0].do(func() (err error) { ln, err = net.Listen("tcp6", "[fd00:244::10]:8081"); return err }); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(conn, "v6pod %s", conn.RemoteAddr())
			conn.Close()
		}
	}()
	web := spn("web6", "http", "TCP")
	sp := addSvc(c.st, web, "10.96.0.20", 80, nodePort(30090), affinity(time.Minute))
	sp.ClusterIPs = append(sp.ClusterIPs, netip.MustParseAddr("fd00:96::20"))
	c.st.Endpoints[web] = append(c.endpoints(0), proxy.Endpoint{IP: netip.MustParseAddr("fd00:244::10"), Port: 8081, Ready: true, Serving: true, IsLocal: true})
	other := spn("web6b", "http", "TCP")
	addSvc(c.st, other, "fd00:96::21", 80)
	c.st.Endpoints[other] = []proxy.Endpoint{{IP: netip.MustParseAddr("fd00:244::10"), Port: 8081, Ready: true, Serving: true, IsLocal: true}}
	c.st.ServiceCIDR = netip.MustParsePrefix("10.96.0.0/16")
	c.sync(t)
	out := c.node.run(t, "nft", "list", "table", "ip6", "skiff")
	for _, want := range []string{"fd00:96::20 . tcp . 80", "dnat ip6 to numgen random mod 1", "dnat to [fd00:244::10]:8081"} {
		if !strings.Contains(out, want) {
			t.Errorf("ip6 table lacks %q:\n%s", want, out)
		}
	}
	for _, vip := range []string{"[fd00:96::20]:80", "[fd00:96::21]:80"} {
		s, err := fetch6(c.pods[0], vip)
		if err != nil || !strings.HasPrefix(s, "v6pod ") {
			t.Errorf("v6 ClusterIP %s from the pod: %q %v", vip, s, err)
		}
	}
	if s, err := fetch(c.pods[0], "10.96.0.20:80"); err != nil || !strings.HasPrefix(s, "pod0 ") {
		t.Errorf("v4 ClusterIP of the dual-stack Service: %q %v", s, err)
	}
}

func fetch6(ns *testNS, addr string) (string, error) {
	var conn net.Conn
	if err := ns.do(func() (err error) {
		conn, err = net.DialTimeout("tcp6", addr, 2*time.Second)
		return err
	}); err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	b, err := io.ReadAll(conn)
	return string(b), err
}
