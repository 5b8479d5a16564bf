package proxytest

import (
	"fmt"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs"
)

// NetNS is a network namespace a test created (netnstest.New: in a
// directory of its own, removed when the test ends), with the handles
// and sysctls the proxy tests need. Run, Listen, Dial and Do come from
// netnstest.NS.
type NetNS struct {
	*netnstest.NS
}

// NewNetNS creates a network namespace called role with its loopback up
// (skipping the test when not root). It is deleted at the end of the test.
func NewNetNS(t testing.TB, role string) *NetNS {
	t.Helper()
	return &NetNS{NS: netnstest.New(t, role)}
}

// Handle returns a netlink (route) handle in the namespace, closed at the
// end of the test.
func (n *NetNS) Handle(t testing.TB) *netlink.Handle {
	t.Helper()
	return n.Netlink(t)
}

// ConntrackHandle returns a netfilter netlink handle in the namespace.
func (n *NetNS) ConntrackHandle(t testing.TB) *netlink.Handle {
	t.Helper()
	h, err := n.netlinkAt(unix.NETLINK_NETFILTER)
	if err != nil {
		t.Fatalf("netfilter netlink handle in %s: %v", n.Name, err)
	}
	t.Cleanup(h.Close)
	return h
}

func (n *NetNS) netlinkAt(proto int) (*netlink.Handle, error) {
	nsh, err := netns.GetFromPath(n.Path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", n.Path, err)
	}
	defer nsh.Close()
	return netlink.NewHandleAt(nsh, proto)
}

// Sysctl writes a /proc/sys value inside the namespace (/proc/sys/net is
// per network namespace).
func (n *NetNS) Sysctl(key, value string) error {
	return n.Do(func() error { return ipvs.WriteSysctl(key, value) })
}
