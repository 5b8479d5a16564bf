package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/nftables"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// Addresses that exist only in the test's namespaces: the "outside"
// machine is on TEST-NET-2 and has no route to any pod; the "remote" pod
// stands for a pod on another node (in the cluster CIDR, its own /24).
var (
	outsideNode = netip.MustParsePrefix("198.51.100.1/24")
	outsideIP   = netip.MustParsePrefix("198.51.100.2/24")
	remoteGW    = netip.MustParsePrefix("10.244.1.1/24")
	remotePodIP = netip.MustParsePrefix("10.244.1.5/24")
)

// world is a node (proxytest: bridge skiff0, pods in 10.244.0.0/24), a
// pod on it, an outside machine and a pod of another node, each with a
// TCP listener that tells who connected.
type world struct {
	node            *proxytest.Node
	pod             *proxytest.Pod
	outside, remote *proxytest.NetNS
}

func newWorld(t *testing.T) *world {
	netnstest.RequireRoot(t)
	w := &world{node: proxytest.NewNode(t)}
	w.pod = w.node.AddPod("pod-a", netip.MustParseAddr("10.244.0.2"))
	w.outside = proxytest.NewNetNS(t, "outside")
	w.remote = proxytest.NewNetNS(t, "remote")
	veth(t, w.node, "eth1", outsideNode, w.outside, outsideIP, netip.Addr{}) // no route back to the pods
	veth(t, w.node, "remote0", remoteGW, w.remote, remotePodIP, remoteGW.Addr())
	return w
}

// veth connects a (address aAddr) to b (bAddr), with a default route in
// b via gw when gw is valid.
func veth(t *testing.T, a *proxytest.Node, aName string, aAddr netip.Prefix, b *proxytest.NetNS, bAddr netip.Prefix, gw netip.Addr) {
	t.Helper()
	ha, hb := a.Handle(t), b.Handle(t)
	f, err := os.Open(b.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := ha.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: aName}, PeerName: "eth0", PeerNamespace: netlink.NsFd(int(f.Fd()))}); err != nil {
		t.Fatalf("veth %s: %v", aName, err)
	}
	for _, e := range []struct {
		h    *netlink.Handle
		name string
		addr netip.Prefix
	}{{ha, aName, aAddr}, {hb, "eth0", bAddr}} {
		l, err := e.h.LinkByName(e.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.h.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: e.addr.Addr().AsSlice(), Mask: net.CIDRMask(e.addr.Bits(), 32)}}); err != nil {
			t.Fatal(err)
		}
		if err := e.h.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	if gw.IsValid() {
		if err := hb.RouteAdd(&netlink.Route{Dst: &net.IPNet{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)}, Gw: gw.AsSlice()}); err != nil {
			t.Fatal(err)
		}
	}
}

// peer connects from the pod to ns's listener and returns the address the
// listener saw, or an error when no connection came through.
func (w *world) peer(t *testing.T, ns *proxytest.NetNS, ip netip.Addr) (netip.Addr, error) {
	t.Helper()
	ln, err := ns.Listen(context.Background(), "tcp", net.JoinHostPort(ip.String(), "7000"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	seen := make(chan netip.Addr, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		seen <- c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
		c.Close()
	}()
	c, err := w.pod.Dial("tcp", net.JoinHostPort(ip.String(), "7000"), nil, 1500*time.Millisecond)
	if err != nil {
		return netip.Addr{}, err
	}
	c.Close()
	select {
	case a := <-seen:
		return a, nil
	case <-time.After(5 * time.Second):
		return netip.Addr{}, errors.New("connected, but the listener saw nothing")
	}
}

// check runs the same story for one backend: without the rules the outside
// machine cannot answer the pod; with them it sees the node's address
// while the other node's pod still sees the pod's; after Remove the
// outside is unreachable again.
func check(t *testing.T, w *world, ensure func(Config) error, remove func() error, rules func() ([]string, error)) {
	podIP := w.pod.IP
	if a, err := w.peer(t, w.outside, outsideIP.Addr()); err == nil {
		t.Fatalf("the outside machine answered the pod (saw %s) before any masquerade: the test proves nothing", a)
	}
	if err := ensure(Config{PodCIDR: proxytest.PodCIDR, ClusterCIDR: proxytest.ClusterCIDR}); err != nil {
		t.Fatal(err)
	}
	if err := ensure(Config{PodCIDR: proxytest.PodCIDR, ClusterCIDR: proxytest.ClusterCIDR}); err != nil {
		t.Fatal(err) // twice: idempotent
	}
	a, err := w.peer(t, w.outside, outsideIP.Addr())
	if err != nil {
		t.Fatalf("pod -> outside with masquerade: %v", err)
	}
	if a != outsideNode.Addr() {
		t.Fatalf("the outside machine saw %s, want the node's %s", a, outsideNode.Addr())
	}
	if a, err := w.peer(t, w.remote, remotePodIP.Addr()); err != nil || a != podIP {
		t.Fatalf("pod -> another node's pod: saw %s (%v), want the pod's own %s", a, err, podIP)
	}
	// Read back from the kernel (skiff trace shows them).
	rs, err := rules()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(rs, "\n")
	for _, want := range []string{proxytest.PodCIDR.String(), proxytest.ClusterCIDR.String(), "224.0.0.0/4", "MASQUERADE|masquerade"} {
		alts := strings.Split(want, "|")
		if !slices.ContainsFunc(alts, func(a string) bool { return strings.Contains(text, a) }) {
			t.Errorf("rules read back lack %q:\n%s", want, text)
		}
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if rs, err := rules(); err != nil || len(rs) != 0 {
		t.Errorf("rules read back after Remove: %q (%v)", rs, err)
	}
	if a, err := w.peer(t, w.outside, outsideIP.Addr()); err == nil {
		t.Fatalf("the outside machine still answered the pod (saw %s) after Remove", a)
	}
}

func TestKernelIPTables(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ex := iptables.OSExec{NetNS: w.node.Path}
	mode, err := iptables.Detect(ctx, ex)
	if err != nil {
		t.Fatal(err)
	}
	rec := &restoreCounter{Exec: ex}
	b := IPTables{Exec: rec, Mode: mode}
	check(t, w, func(c Config) error { return b.Ensure(ctx, c) }, func() error { return b.Remove(ctx) }, func() ([]string, error) { return b.Rules(ctx) })
	// check ensured twice: the second found the rules as iptables -S
	// prints them and wrote nothing (Remove writes once more).
	if rec.restores != 2 {
		t.Errorf("%d iptables-restore runs for Ensure, Ensure, Remove; want 2", rec.restores)
	}
	out, err := w.node.Run(mode.Tool("iptables-save"), "-t", "nat")
	if err != nil {
		t.Fatal(err, out)
	}
	if strings.Contains(out, Chain) {
		t.Fatalf("nat table after Remove:\n%s", out)
	}
}

// restoreCounter counts the iptables-restore runs.
type restoreCounter struct {
	iptables.Exec
	restores int
}

func (r *restoreCounter) Run(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	if strings.Contains(name, "restore") {
		r.restores++
	}
	return r.Exec.Run(ctx, stdin, name, args...)
}

func TestKernelNFTables(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	f, err := os.Open(w.node.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k, err := nftables.NewNetlink(nftables.NetlinkOptions{NetNSFd: int(f.Fd())})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	b := NFTables{Kernel: k}
	check(t, w, func(c Config) error { return b.Ensure(ctx, c) }, func() error { return b.Remove(ctx) }, func() ([]string, error) { return b.Rules(ctx) })
	if out, err := w.node.Run("nft", "list", "tables"); err != nil || strings.Contains(out, Table) {
		t.Fatalf("tables after Remove (%v):\n%s", err, out)
	}
}
