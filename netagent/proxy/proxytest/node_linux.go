package proxytest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/skiff-dev/skiff/netagent/netns/netnstest"

	"github.com/skiff-dev/skiff/netagent/proxy"
)

// Node is a simulated node: a "node" network namespace with a bridge
// (skiff0, Gateway/24) that pods hang off, the service CIDR routed onto the
// bridge (docs/networking.md, "Safety of the data plane"), and a "client" namespace on a veth (NodeIP <->
// ClientIP) standing for a machine outside the cluster.
type Node struct {
	*NetNS
	Client *NetNS
	Pods   []*Pod

	t      testing.TB
	h      *netlink.Handle
	bridge netlink.Link
}

// Pod is a pod namespace on the node's bridge running an HTTP server on
// PodHTTPPort and a UDP server on PodUDPPort, both answering
// "<name> <client address>".
type Pod struct {
	*NetNS
	Name string
	IP   netip.Addr
}

// NewNode builds the node and client namespaces.
func NewNode(t testing.TB) *Node {
	t.Helper()
	n := &Node{NetNS: NewNetNS(t, "node"), Client: NewNetNS(t, "client"), t: t}
	n.h = n.Handle(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("node %s: %s: %v", n.Name, what, err)
		}
	}
	must("ip_forward", n.Sysctl("net.ipv4.ip_forward", "1"))
	must("bridge-nf-call-iptables", n.Sysctl("net.bridge.bridge-nf-call-iptables", "1"))
	// A pod's packet to a ClusterIP is routed back out of the bridge it
	// came in on; with redirects on, the node answers it with an ICMP
	// redirect, which uses up the per-host ICMP rate limit, so the REJECT
	// of a Service without endpoints is never sent: the client times out
	// instead of being refused. The node agent must turn them off too.
	must("send_redirects", n.Sysctl("net.ipv4.conf.all.send_redirects", "0"))
	must("send_redirects", n.Sysctl("net.ipv4.conf.default.send_redirects", "0"))
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "skiff0"}}
	must("bridge", n.h.LinkAdd(br))
	link, err := n.h.LinkByName("skiff0")
	must("bridge", err)
	n.bridge = link
	must("bridge address", n.h.AddrAdd(link, &netlink.Addr{IPNet: netnstest.IPNet(netip.PrefixFrom(Gateway, PodCIDR.Bits()))}))
	must("bridge up", n.h.LinkSetUp(link))
	must("send_redirects", n.Sysctl("net.ipv4.conf.skiff0.send_redirects", "0"))
	// docs/networking.md, "Safety of the data plane": the service CIDR is routed onto the bridge, so a node
	// process can connect to a ClusterIP and nothing leaves the node.
	must("service route", n.h.RouteAdd(&netlink.Route{LinkIndex: link.Attrs().Index,
		Dst: netnstest.IPNet(ServiceCIDR), Src: Gateway.AsSlice(), Scope: netlink.SCOPE_LINK}))

	// The outside client.
	netnstest.Connect(t, netnstest.End{NS: n.NS, Name: "eth0", Addr: netip.PrefixFrom(NodeIP, 24)},
		netnstest.End{NS: n.Client.NS, Name: "eth0", Addr: netip.PrefixFrom(ClientIP, 24)})
	must("client route", n.Client.Handle(t).RouteAdd(&netlink.Route{Dst: netnstest.IPNet(netip.MustParsePrefix("0.0.0.0/0")), Gw: NodeIP.AsSlice()}))
	return n
}

// AddPod creates a pod namespace with address ip on the bridge (its
// bridge port in hairpin mode, as the CNI bridge plugin sets it) and
// starts its servers.
func (n *Node) AddPod(name string, ip netip.Addr) *Pod {
	t := n.t
	t.Helper()
	p := &Pod{NetNS: NewNetNS(t, name), Name: name, IP: ip}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("pod %s: %s: %v", name, what, err)
		}
	}
	host := fmt.Sprintf("veth%d", len(n.Pods))
	netnstest.Connect(t, netnstest.End{NS: n.NS, Name: host},
		netnstest.End{NS: p.NS, Name: "eth0", Addr: netip.PrefixFrom(ip, PodCIDR.Bits())})
	hl, err := n.h.LinkByName(host)
	must("veth", err)
	must("bridge port", n.h.LinkSetMaster(hl, n.bridge))
	must("hairpin", n.h.LinkSetHairpin(hl, true))
	must("pod route", p.Handle(t).RouteAdd(&netlink.Route{Dst: netnstest.IPNet(netip.MustParsePrefix("0.0.0.0/0")), Gw: Gateway.AsSlice()}))
	p.serve(t)
	n.Pods = append(n.Pods, p)
	return p
}

// serve starts the pod's HTTP and UDP servers, stopped at the end of the
// test.
func (p *Pod) serve(t testing.TB) {
	ln, err := p.Listen(context.Background(), "tcp", ":"+strconv.Itoa(PodHTTPPort))
	if err != nil {
		t.Fatalf("pod %s: listen: %v", p.Name, err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", p.Name, r.RemoteAddr)
	})}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ln) })
	var pc net.PacketConn
	if err := p.Do(func() error {
		var err error
		pc, err = net.ListenPacket("udp", ":"+strconv.Itoa(PodUDPPort))
		return err
	}); err != nil {
		t.Fatalf("pod %s: listen udp: %v", p.Name, err)
	}
	wg.Go(func() {
		buf := make([]byte, 1500)
		for {
			_, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo([]byte(p.Name+" "+from.String()), from)
		}
	})
	t.Cleanup(func() {
		_ = srv.Close()
		_ = pc.Close()
		wg.Wait()
	})
}

// Listen implements proxy.ListenFunc inside the node namespace.
func (n *Node) ListenFunc() proxy.ListenFunc { return n.Listen }

// Conntrack is the node namespace's conntrack table through netlink.
func (n *Node) Conntrack(t testing.TB) proxy.Conntrack {
	return proxy.NetlinkConntrack{Handle: n.ConntrackHandle(t)}
}

// HTTPGet fetches url from inside ns on a new connection and returns the
// body.
func HTTPGet(ns *NetNS, url string) (string, error) {
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return ns.Dial(network, addr, nil, 2*time.Second)
		},
	}}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return string(b), fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), err
}

// UDPAsk sends one datagram from ns (from srcPort, 0 for any) to addr and
// returns the answer.
func UDPAsk(ns *NetNS, addr string, srcPort int) (string, error) {
	var laddr net.Addr
	if srcPort != 0 {
		laddr = &net.UDPAddr{Port: srcPort}
	}
	c, err := ns.Dial("udp", addr, laddr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(time.Second)); err != nil {
		return "", err
	}
	if _, err := c.Write([]byte("who")); err != nil {
		return "", err
	}
	buf := make([]byte, 1500)
	k, err := c.Read(buf)
	if err != nil {
		return "", err
	}
	return string(buf[:k]), nil
}

// HostRules is the machine's own netfilter state, read in the test
// process's namespace: iptables-save of both backends and the names of
// the nftables tables. Tests compare it before and after to prove nothing
// leaked out of their namespaces.
func HostRules(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	for _, tool := range [][]string{{"iptables-nft-save"}, {"iptables-legacy-save"}, {"nft", "list", "tables"}} {
		out, err := exec.Command(tool[0], tool[1:]...).Output()
		if err != nil {
			var ee *exec.Error
			if errors.As(err, &ee) {
				continue // not installed
			}
			t.Fatalf("%s: %v", tool, err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			if l := sc.Text(); !strings.HasPrefix(l, "#") {
				// Chain policy counters move with the host's own traffic.
				b.WriteString(counters.ReplaceAllString(l, "[]"))
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

var counters = regexp.MustCompile(`\[\d+:\d+\]`)
