package nftables

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
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
