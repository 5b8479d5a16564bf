package nftables

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
	vnl "github.com/vishvananda/netlink"
)

// A simulated node: the "node" netns with a bridge skiff0 (10.244.0.1/24,
// the service CIDR routed onto it), pods in their own netns behind it, and
// a "client" netns on another link (the node is 192.168.1.10 there, the
// client 192.168.1.20). Every pod runs a TCP server on :8080 answering
// "<pod> <client ip:port>" and a UDP server on :5353 answering "<pod>".
type testCluster struct {
	node, client *testNS
	pods         []*testNS
	podIPs       []netip.Addr
	proxier      *Proxier
	kernel       *Netlink
	st           *proxy.State
}

const (
	tcNodeIP   = "192.168.1.10"
	tcClientIP = "192.168.1.20"
)

func newTestCluster(t *testing.T, npods int) *testCluster {
	t.Helper()
	c := &testCluster{node: newNS(t, "node"), client: newNS(t, "client")}
	n := c.node.name
	ipc := func(args ...string) {
		t.Helper()
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	c.node.run(t, "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.bridge.bridge-nf-call-iptables=1")
	ipc("-n", n, "link", "add", "skiff0", "type", "bridge")
	ipc("-n", n, "addr", "add", "10.244.0.1/24", "dev", "skiff0")
	ipc("-n", n, "link", "set", "skiff0", "up")
	for i := range npods {
		pod := newNS(t, fmt.Sprintf("pod%d", i))
		ip := netip.MustParseAddr(fmt.Sprintf("10.244.0.%d", 10+i))
		veth := fmt.Sprintf("veth%d", i)
		ipc("-n", n, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", pod.name)
		ipc("-n", n, "link", "set", veth, "master", "skiff0", "up")
		ipc("-n", n, "link", "set", veth, "type", "bridge_slave", "hairpin", "on")
		ipc("-n", pod.name, "addr", "add", ip.String()+"/24", "dev", "eth0")
		ipc("-n", pod.name, "link", "set", "eth0", "up")
		ipc("-n", pod.name, "route", "add", "default", "via", "10.244.0.1")
		c.pods = append(c.pods, pod)
		c.podIPs = append(c.podIPs, ip)
		c.serve(t, pod, fmt.Sprintf("pod%d", i))
	}
	ipc("-n", n, "link", "add", "eth-client", "type", "veth", "peer", "name", "eth0", "netns", c.client.name)
	ipc("-n", n, "addr", "add", tcNodeIP+"/24", "dev", "eth-client")
	ipc("-n", n, "link", "set", "eth-client", "up")
	ipc("-n", c.client.name, "addr", "add", tcClientIP+"/24", "dev", "eth0")
	ipc("-n", c.client.name, "link", "set", "eth0", "up")
	ipc("-n", c.client.name, "route", "add", "default", "via", tcNodeIP)
	ipc("-n", n, "route", "add", "10.96.0.0/16", "dev", "skiff0", "src", "10.244.0.1")

	k, err := NewNetlink(NetlinkOptions{NetNSFd: int(c.node.handle)})
	if err != nil {
		t.Fatal(err)
	}
	c.kernel = k
	p, err := New(Config{Kernel: k, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	c.proxier = p
	t.Cleanup(func() {
		if err := p.Cleanup(context.Background()); err != nil {
			t.Errorf("Cleanup: %v", err)
		}
		if out, _ := c.node.output("nft", "list", "tables"); strings.Contains(out, "skiff") {
			t.Errorf("Cleanup left a table in the node netns:\n%s", out)
		}
		k.Close()
	})
	c.st = newState()
	c.st.NodeIPs = []netip.Addr{netip.MustParseAddr(tcNodeIP)}
	return c
}

// serve starts the pod's servers (sockets opened inside its netns).
func (c *testCluster) serve(t *testing.T, pod *testNS, name string) {
	var ln net.Listener
	var pc net.PacketConn
	if err := pod.do(func() (err error) {
		if ln, err = net.Listen("tcp4", "0.0.0.0:8080"); err != nil {
			return err
		}
		pc, err = net.ListenPacket("udp4", "0.0.0.0:5353")
		return err
	}); err != nil {
		t.Fatalf("listen in %s: %v", pod.name, err)
	}
	t.Cleanup(func() { ln.Close(); pc.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(conn, "%s %s", name, conn.RemoteAddr())
			conn.Close()
		}
	}()
	go func() {
		buf := make([]byte, 1500)
		for {
			_, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo([]byte(name), addr)
		}
	}()
}

// fetch connects from inside ns to addr and returns the answer.
func fetch(ns *testNS, addr string) (string, error) {
	var conn net.Conn
	if err := ns.do(func() (err error) {
		conn, err = net.DialTimeout("tcp4", addr, 2*time.Second)
		return err
	}); err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	b, err := io.ReadAll(conn)
	return string(b), err
}

// answers fetches n times and counts answers by pod name; it fails the
// test on any error.
func answers(t *testing.T, ns *testNS, addr string, n int) map[string]int {
	t.Helper()
	got := map[string]int{}
	for i := range n {
		s, err := fetch(ns, addr)
		if err != nil {
			t.Fatalf("request %d from %s to %s: %v", i, ns.name, addr, err)
		}
		got[strings.Fields(s)[0]]++
	}
	return got
}

func (c *testCluster) endpoints(idx ...int) []proxy.Endpoint {
	var out []proxy.Endpoint
	for _, i := range idx {
		out = append(out, proxy.Endpoint{IP: c.podIPs[i], Port: 8080, Ready: true, Serving: true, IsLocal: true, NodeName: "node-a"})
	}
	return out
}

func (c *testCluster) sync(t *testing.T, changed ...proxy.ServicePortName) {
	t.Helper()
	var ch []proxy.ServicePortName
	if len(changed) > 0 {
		ch = changed
	}
	if err := c.proxier.Sync(context.Background(), c.st, ch); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

func wantPods(t *testing.T, what string, got map[string]int, pods ...string) {
	t.Helper()
	if len(got) != len(pods) {
		t.Errorf("%s: answers %v, want exactly %v", what, got, pods)
		return
	}
	for _, p := range pods {
		if got[p] == 0 {
			t.Errorf("%s: %s never answered (%v)", what, p, got)
		}
	}
}

// TestKernel runs the Service cases against the real kernel inside test
// network namespaces.
func TestKernel(t *testing.T) {
	needRoot(t)
	hostBefore, _ := exec.Command("nft", "list", "tables").CombinedOutput()
	c := newTestCluster(t, 5)
	web := spn("web", "http", "TCP")
	local := spn("local", "http", "TCP")
	empty := spn("empty", "http", "TCP")
	sticky := spn("sticky", "", "TCP") // unnamed port: names end in "tcp/"
	dns := spn("dns", "dns", "UDP")
	addSvc(c.st, web, "10.96.0.10", 80, nodePort(30080))
	c.st.Endpoints[web] = c.endpoints(0, 1, 2)
	addSvc(c.st, local, "10.96.0.11", 80, nodePort(30081), extLocal)
	c.st.Endpoints[local] = c.endpoints(0, 1)
	addSvc(c.st, empty, "10.96.0.12", 80, nodePort(30082))
	addSvc(c.st, sticky, "10.96.0.13", 80, affinity(time.Hour))
	c.st.Endpoints[sticky] = c.endpoints(0, 1, 2, 3, 4)
	addSvc(c.st, dns, "10.96.0.53", 53)
	c.st.Endpoints[dns] = []proxy.Endpoint{{IP: c.podIPs[0], Port: 5353, Ready: true, Serving: true, IsLocal: true}}
	c.sync(t)

	t.Run("ClusterIP from a pod", func(t *testing.T) {
		wantPods(t, "pod3 -> 10.96.0.10:80", answers(t, c.pods[3], "10.96.0.10:80", 40), "pod0", "pod1", "pod2")
	})
	t.Run("ClusterIP from the node", func(t *testing.T) {
		wantPods(t, "node -> 10.96.0.10:80", answers(t, c.node, "10.96.0.10:80", 40), "pod0", "pod1", "pod2")
	})
	t.Run("NodePort from another netns", func(t *testing.T) {
		wantPods(t, "client -> node:30080", answers(t, c.client, tcNodeIP+":30080", 40), "pod0", "pod1", "pod2")
		s, err := fetch(c.client, tcNodeIP+":30080")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s, tcClientIP) {
			t.Errorf("Cluster policy NodePort kept the client IP (not masqueraded): %q", s)
		}
	})
	t.Run("hairpin", func(t *testing.T) {
		// pod1 through its own Service: every request must succeed,
		// including those sent back to pod1 itself.
		got := answers(t, c.pods[1], "10.96.0.10:80", 40)
		wantPods(t, "pod1 -> 10.96.0.10:80", got, "pod0", "pod1", "pod2")
	})
	t.Run("Local policy keeps the client IP", func(t *testing.T) {
		for range 10 {
			s, err := fetch(c.client, tcNodeIP+":30081")
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(s)
			if len(f) != 2 || !strings.HasPrefix(f[1], tcClientIP+":") {
				t.Fatalf("answer %q: want the client address %s", s, tcClientIP)
			}
			if f[0] != "pod0" && f[0] != "pod1" {
				t.Fatalf("answer from %s, not a local endpoint", f[0])
			}
		}
	})
	t.Run("no endpoints: refused at once", func(t *testing.T) {
		for _, tc := range []struct {
			ns   *testNS
			addr string
		}{{c.pods[0], "10.96.0.12:80"}, {c.node, "10.96.0.12:80"}, {c.client, tcNodeIP + ":30082"},
			{c.pods[0], "10.96.0.10:81"}, {c.pods[0], "10.96.7.7:80"}} {
			start := time.Now()
			_, err := fetch(tc.ns, tc.addr)
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("%s -> %s: got %v, want connection refused", tc.ns.name, tc.addr, err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("%s -> %s: took %v", tc.ns.name, tc.addr, d)
			}
		}
	})
	t.Run("session affinity sticks", func(t *testing.T) {
		got := answers(t, c.pods[3], "10.96.0.13:80", 20)
		if len(got) != 1 {
			t.Errorf("one client reached %v, want one pod", got)
		}
		got = answers(t, c.node, "10.96.0.13:80", 20)
		if len(got) != 1 {
			t.Errorf("the node reached %v, want one pod", got)
		}
	})
	t.Run("UDP after an endpoint change", func(t *testing.T) {
		query := func() string {
			t.Helper()
			var conn *net.UDPConn
			if err := c.pods[3].do(func() (err error) {
				conn, err = net.DialUDP("udp4", &net.UDPAddr{Port: 40000}, &net.UDPAddr{IP: net.ParseIP("10.96.0.53"), Port: 53})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
			if _, err := conn.Write([]byte("q")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 100)
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatalf("UDP query: %v", err)
			}
			return string(buf[:n])
		}
		if got := query(); got != "pod0" {
			t.Fatalf("before: %q", got)
		}
		c.st.Endpoints[dns] = []proxy.Endpoint{{IP: c.podIPs[2], Port: 5353, Ready: true, Serving: true, IsLocal: true}}
		c.sync(t, dns)
		// The proxy core removes the conntrack entries of a removed UDP
		// endpoint; this test stands in for it, through netlink.
		if err := c.node.do(func() error {
			_, err := vnl.ConntrackDeleteFilters(vnl.ConntrackTable, vnl.FAMILY_V4, udpFilter(netip.MustParseAddr("10.96.0.53")))
			return err
		}); err != nil {
			t.Fatalf("conntrack clean-up: %v", err)
		}
		if got := query(); got != "pod2" {
			t.Fatalf("after the change: %q, want pod2", got)
		}
	})
	t.Run("scale 3 to 5", func(t *testing.T) {
		c.st.Endpoints[web] = c.endpoints(0, 1, 2, 3, 4)
		c.sync(t, web)
		wantPods(t, "after scale-up", answers(t, c.pods[0], "10.96.0.10:80", 80), "pod0", "pod1", "pod2", "pod3", "pod4")
	})
	t.Run("a pod that is not ready gets nothing", func(t *testing.T) {
		e := c.endpoints(0, 1, 2, 3, 4)
		e[4].Ready = false
		c.st.Endpoints[web] = e
		c.sync(t, web)
		wantPods(t, "pod4 not ready", answers(t, c.pods[0], "10.96.0.10:80", 60), "pod0", "pod1", "pod2", "pod3")
	})
	t.Run("a full resync keeps serving", func(t *testing.T) {
		c.sync(t)
		wantPods(t, "after a full sync", answers(t, c.client, tcNodeIP+":30080", 60), "pod0", "pod1", "pod2", "pod3")
	})
	hostAfter, _ := exec.Command("nft", "list", "tables").CombinedOutput()
	if strings.Contains(string(hostAfter), "table ip skiff") && !strings.Contains(string(hostBefore), "table ip skiff") {
		t.Errorf("a skiff table appeared in the machine's own netns:\n%s", hostAfter)
	}
}

type conntrackDst struct{ ip netip.Addr }

func udpFilter(ip netip.Addr) vnl.CustomConntrackFilter { return conntrackDst{ip} }

// MatchConntrackFlow matches UDP flows to the address.
func (f conntrackDst) MatchConntrackFlow(flow *vnl.ConntrackFlow) bool {
	a, _ := netip.AddrFromSlice(flow.Forward.DstIP)
	return flow.Forward.Protocol == syscall.IPPROTO_UDP && a.Unmap() == f.ip
}
