package nftables

import (
	"context"
	"strings"
	"testing"

	"github.com/vishvananda/netns"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// TestKernelCases runs the real-kernel cases every mode shares
// (proxytest.KernelCases) with the Proxier programming the node namespace
// through netlink, then a restarted Proxier's first full sync over the
// table under a live connection. Each Proxier's Cleanup must leave no
// table behind.
func TestKernelCases(t *testing.T) {
	k := proxytest.RunKernelCases(t, func(t testing.TB, node *proxytest.Node) proxy.Backend {
		return newKernelProxier(t, node, true)
	})
	t.Run("nft lists the table", func(t *testing.T) {
		out, err := k.Node.Run("nft", "list", "table", "ip", TableName)
		if err != nil || !strings.Contains(out, "e2e/web/tcp/http") {
			t.Errorf("nft list table ip %s: %v\n%s", TableName, err, out)
		}
	})
	t.Run("a restarted backend re-syncs without dropping a connection", func(t *testing.T) {
		k.CheckRestart(t, func(t testing.TB, node *proxytest.Node) proxy.Backend { return newKernelProxier(t, node, false) })
	})
}

// newKernelProxier is a Proxier on a netlink socket in node's namespace.
// With cleanup, at the end of the test it cleans up and checks that no
// table is left (a restarted Proxier leaves the table to the first one).
func newKernelProxier(t testing.TB, node *proxytest.Node, cleanup bool) proxy.Backend {
	h, err := netns.GetFromPath(node.Path)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewNetlink(NetlinkOptions{NetNSFd: int(h)})
	if err != nil {
		h.Close()
		t.Fatal(err)
	}
	p, err := New(Config{Kernel: k, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer h.Close()
		defer k.Close()
		if !cleanup {
			return
		}
		if err := p.Cleanup(context.Background()); err != nil {
			t.Errorf("Cleanup: %v", err)
		}
		if out, _ := node.Run("nft", "list", "tables"); strings.Contains(out, "skiff") {
			t.Errorf("Cleanup left a table in the node namespace:\n%s", out)
		}
	})
	return p
}
