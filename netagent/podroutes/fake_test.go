package podroutes

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// fakeNetlink is a stateful stand-in for a namespace's main routing table
// that refuses what the kernel refuses: a second route with the same
// table, destination and metric (EEXIST), a gateway on no connected
// network (ENETUNREACH), deleting a route that is not there (ESRCH), and
// malformed requests.
type fakeNetlink struct {
	mu        sync.Mutex
	connected []netip.Prefix // on-link networks
	routes    []netlink.Route
	adds      int
	dels      int
}

func newFake(connected ...string) *fakeNetlink {
	f := &fakeNetlink{}
	for _, c := range connected {
		f.connected = append(f.connected, netip.MustParsePrefix(c))
	}
	return f
}

func table(rt *netlink.Route) int {
	if rt.Table == 0 {
		return unix.RT_TABLE_MAIN
	}
	return rt.Table
}

func prefixOf(n *net.IPNet) netip.Prefix {
	a, _ := netip.AddrFromSlice(n.IP)
	bits, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), bits)
}

func (f *fakeNetlink) RouteListFiltered(family int, filter *netlink.Route, mask uint64) ([]netlink.Route, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if family != netlink.FAMILY_V4 {
		return nil, fmt.Errorf("fake: family %d: only IPv4 is expected", family)
	}
	if filter == nil {
		return nil, fmt.Errorf("fake: an unfiltered dump is not expected")
	}
	var out []netlink.Route
	for _, rt := range f.routes {
		if mask&netlink.RT_FILTER_PROTOCOL != 0 && rt.Protocol != filter.Protocol {
			continue
		}
		if mask&netlink.RT_FILTER_TABLE != 0 && table(&rt) != table(filter) {
			continue
		}
		if mask&netlink.RT_FILTER_TABLE == 0 && table(&rt) != unix.RT_TABLE_MAIN {
			continue
		}
		out = append(out, clone(rt))
	}
	return out, nil
}

func clone(rt netlink.Route) netlink.Route {
	c := rt
	if rt.Dst != nil {
		c.Dst = &net.IPNet{IP: slices.Clone(rt.Dst.IP), Mask: slices.Clone(rt.Dst.Mask)}
	}
	c.Gw = slices.Clone(rt.Gw)
	return c
}

func (f *fakeNetlink) onLink(gw net.IP) bool {
	a, ok := netip.AddrFromSlice(gw)
	if !ok {
		return false
	}
	for _, c := range f.connected {
		if c.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

func (f *fakeNetlink) RouteAdd(rt *netlink.Route) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rt.Dst == nil || rt.Dst.IP.To4() == nil {
		return fmt.Errorf("fake: add: no IPv4 destination: %w", unix.EINVAL)
	}
	if p := prefixOf(rt.Dst); p != p.Masked() {
		return fmt.Errorf("fake: add %v: host bits set: %w", p, unix.EINVAL)
	}
	if rt.Gw != nil && !f.onLink(rt.Gw) {
		return fmt.Errorf("fake: add via %v: %w", rt.Gw, unix.ENETUNREACH)
	}
	for _, have := range f.routes {
		if table(&have) == table(rt) && prefixOf(have.Dst) == prefixOf(rt.Dst) && have.Priority == rt.Priority {
			return fmt.Errorf("fake: add %v: %w", rt.Dst, unix.EEXIST)
		}
	}
	f.routes = append(f.routes, clone(*rt))
	f.adds++
	return nil
}

func (f *fakeNetlink) RouteDel(rt *netlink.Route) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rt.Dst == nil {
		return fmt.Errorf("fake: delete without a destination: %w", unix.EINVAL)
	}
	for i, have := range f.routes {
		if table(&have) != table(rt) || prefixOf(have.Dst) != prefixOf(rt.Dst) || have.Priority != rt.Priority {
			continue
		}
		if rt.Protocol != 0 && rt.Protocol != have.Protocol {
			continue
		}
		if rt.Gw != nil && !rt.Gw.Equal(have.Gw) {
			continue
		}
		f.routes = slices.Delete(f.routes, i, i+1)
		f.dels++
		return nil
	}
	return fmt.Errorf("fake: delete %v: %w", rt.Dst, unix.ESRCH)
}

// addForeign adds a route that is not Skiff's (protocol static).
func (f *fakeNetlink) addForeign(dst, gw string) {
	p := netip.MustParsePrefix(dst)
	f.routes = append(f.routes, netlink.Route{
		Dst:      &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), 32)},
		Gw:       net.ParseIP(gw).To4(),
		Protocol: unix.RTPROT_STATIC, Table: unix.RT_TABLE_MAIN,
	})
}

// table returns "dst via gw proto N" lines, sorted.
func (f *fakeNetlink) dump() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, rt := range f.routes {
		out = append(out, fmt.Sprintf("%v via %v proto %d", prefixOf(rt.Dst), rt.Gw, rt.Protocol))
	}
	slices.Sort(out)
	return out
}
