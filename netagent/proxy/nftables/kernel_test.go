package nftables

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// testCluster is proxytest's simulated node (the "node" netns with the
// bridge skiff0 at proxytest.Gateway, the service CIDR routed onto it,
// pods behind it answering "<pod> <client ip:port>" over HTTP on :8080,
// a "client" netns on a veth to proxytest.NodeIP) with a Proxier
// programming the node through netlink; the pods are 10.244.0.10 and up.
type testCluster struct {
	node, client *testNS
	pods         []*testNS
	podIPs       []netip.Addr
	proxier      *Proxier
	kernel       *Netlink
	st           *proxy.State
}

func newTestCluster(t testing.TB, npods int) *testCluster {
	t.Helper()
	n := proxytest.NewNode(t)
	c := &testCluster{node: &testNS{n.NetNS}, client: &testNS{n.Client}}
	for i := range npods {
		ip := netip.MustParseAddr(fmt.Sprintf("10.244.0.%d", 10+i))
		pod := n.AddPod(fmt.Sprintf("pod%d", i), ip)
		c.pods = append(c.pods, &testNS{pod.NetNS})
		c.podIPs = append(c.podIPs, ip)
	}
	k, err := NewNetlink(NetlinkOptions{NetNSFd: c.node.fd(t)})
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
	c.st.NodeIPs = []netip.Addr{proxytest.NodeIP}
	return c
}

// fetch makes an HTTP request from inside ns to addr and returns the
// answer.
func fetch(ns *testNS, addr string) (string, error) {
	return proxytest.HTTPGet(ns.NetNS, "http://"+addr+"/")
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
