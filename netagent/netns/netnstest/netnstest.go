// Package netnstest makes throwaway network namespaces for root tests:
// a "node" namespace to run an agent's data plane in, pod or client
// namespaces, and veth pairs between them. Everything it makes is removed
// by t.Cleanup, and tests that cannot make namespaces (not root) are
// skipped with a message saying so (RequireRoot; RequireCNIPlugins also
// checks the CNI plugins a real pod network needs). An NS runs commands,
// listeners and connections inside itself (Run, Listen, Dial). It is
// the harness under netagent/proxy/proxytest's simulated node.
//
// # Invariants
//
//   - Nothing is created in the test process's own network namespace:
//     veth pairs are created through a netlink handle bound to one of the
//     test's namespaces and their peer is placed in the other.
//   - Each namespace file lives in its own t.TempDir, so parallel tests and
//     parallel packages never share a name.
//   - Cleanup deletes the namespace and fails the test if the file is left
//     behind.
package netnstest

import (
	"fmt"
	"net/netip"
	"os"
	"testing"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/netns"
)

// RequireRoot skips the test unless it can create network namespaces.
// It is the one root check of the repository's namespace tests.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces and programs the kernel inside them (CI runs as root)")
	}
}

// NS is a network namespace owned by a test.
type NS struct {
	Name string
	Path string
}

// NewNode makes a "node" namespace with loopback up.
func NewNode(t testing.TB) *NS { return New(t, "node") }

// New makes a namespace called name (in its own directory, so the name
// needs no uniqueness) with loopback up; t.Cleanup removes it.
func New(t testing.TB, name string) *NS {
	t.Helper()
	RequireRoot(t)
	m := netns.NewManager(t.TempDir())
	path, err := m.Create(name)
	if err != nil {
		t.Fatalf("netnstest: %v", err)
	}
	ns := &NS{Name: name, Path: path}
	t.Cleanup(func() {
		if err := m.Delete(name); err != nil {
			t.Errorf("netnstest: %v", err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("netnstest: %s left behind (stat: %v)", path, err)
		}
	})
	if err := ns.Do(func() error {
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return err
		}
		return netlink.LinkSetUp(lo)
	}); err != nil {
		t.Fatalf("netnstest: %s: loopback up: %v", name, err)
	}
	return ns
}

// Do runs fn on a locked thread inside the namespace (see netns.Do).
func (n *NS) Do(fn func() error) error { return netns.Do(n.Path, fn) }

// Netlink returns a netlink handle bound to the namespace, closed at
// cleanup.
func (n *NS) Netlink(t testing.TB) *netlink.Handle {
	t.Helper()
	h, err := n.handle()
	if err != nil {
		t.Fatalf("netnstest: %v", err)
	}
	t.Cleanup(h.Close)
	return h
}

func (n *NS) handle() (*netlink.Handle, error) {
	nsh, err := vnetns.GetFromPath(n.Path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", n.Path, err)
	}
	defer nsh.Close()
	// NETLINK_ROUTE only: kernels without xfrm_user refuse the default set.
	h, err := netlink.NewHandleAt(nsh, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlink handle in %s: %w", n.Name, err)
	}
	return h, nil
}

// End is one side of a veth pair: its namespace, interface name and
// address.
type End struct {
	NS   *NS
	Name string
	Addr netip.Prefix
}

// Connect makes a veth pair between a and b, addresses both ends and
// brings them up. The pair goes away with either namespace.
func Connect(t testing.TB, a, b End) {
	t.Helper()
	ha := a.NS.Netlink(t)
	hb := b.NS.Netlink(t)
	bns, err := vnetns.GetFromPath(b.NS.Path)
	if err != nil {
		t.Fatalf("netnstest: %v", err)
	}
	defer bns.Close()
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: a.Name},
		PeerName:      b.Name,
		PeerNamespace: netlink.NsFd(int(bns)),
	}
	if err := ha.LinkAdd(veth); err != nil {
		t.Fatalf("netnstest: veth %s/%s <-> %s/%s: %v", a.NS.Name, a.Name, b.NS.Name, b.Name, err)
	}
	for _, e := range []struct {
		h   *netlink.Handle
		end End
	}{{ha, a}, {hb, b}} {
		l, err := e.h.LinkByName(e.end.Name)
		if err != nil {
			t.Fatalf("netnstest: %s/%s: %v", e.end.NS.Name, e.end.Name, err)
		}
		if e.end.Addr.IsValid() {
			addr := &netlink.Addr{IPNet: IPNet(e.end.Addr)}
			if err := e.h.AddrAdd(l, addr); err != nil {
				t.Fatalf("netnstest: %s/%s addr %s: %v", e.end.NS.Name, e.end.Name, e.end.Addr, err)
			}
		}
		if err := e.h.LinkSetUp(l); err != nil {
			t.Fatalf("netnstest: %s/%s up: %v", e.end.NS.Name, e.end.Name, err)
		}
	}
}
