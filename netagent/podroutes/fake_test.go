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
	// links by index (the vxlan mode's device), their addresses and the
	// neighbour/forwarding entries on them.
	links     map[int]netlink.Link
	nextIndex int
	addrs     map[int][]netip.Prefix
	neighs    []netlink.Neigh
	linkAdds  int
}

func newFake(connected ...string) *fakeNetlink {
	f := &fakeNetlink{links: map[int]netlink.Link{}, nextIndex: 10, addrs: map[int][]netip.Prefix{}}
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
	onlink := rt.Flags&int(netlink.FLAG_ONLINK) != 0
	if rt.LinkIndex != 0 {
		if _, ok := f.links[rt.LinkIndex]; !ok {
			return fmt.Errorf("fake: add via link %d: %w", rt.LinkIndex, unix.ENODEV)
		}
	} else if onlink {
		return fmt.Errorf("fake: onlink without a device: %w", unix.EINVAL)
	}
	if rt.Gw != nil && !onlink && !f.onLink(rt.Gw) {
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
		l := fmt.Sprintf("%v via %v proto %d", prefixOf(rt.Dst), rt.Gw, rt.Protocol)
		if rt.LinkIndex != 0 {
			l += fmt.Sprintf(" dev %d", rt.LinkIndex)
		}
		if rt.Flags&int(netlink.FLAG_ONLINK) != 0 {
			l += " onlink"
		}
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

func (f *fakeNetlink) linkByNameLocked(name string) (netlink.Link, bool) {
	for _, l := range f.links {
		if l.Attrs().Name == name {
			return l, true
		}
	}
	return nil, false
}

func (f *fakeNetlink) LinkByName(name string) (netlink.Link, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l, ok := f.linkByNameLocked(name); ok {
		c := *l.(*netlink.Vxlan)
		return &c, nil
	}
	return nil, netlink.LinkNotFoundError{}
}

func (f *fakeNetlink) LinkAdd(l netlink.Link) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	vx, ok := l.(*netlink.Vxlan)
	if !ok {
		return fmt.Errorf("fake: only vxlan links are expected, got %T: %w", l, unix.EOPNOTSUPP)
	}
	if vx.Name == "" || len(vx.Name) > 15 {
		return fmt.Errorf("fake: link name %q: %w", vx.Name, unix.EINVAL)
	}
	if _, dup := f.linkByNameLocked(vx.Name); dup {
		return fmt.Errorf("fake: link %s: %w", vx.Name, unix.EEXIST)
	}
	if vx.VxlanId == 0 || vx.SrcAddr == nil {
		return fmt.Errorf("fake: vxlan without an id or a local address: %w", unix.EINVAL)
	}
	c := *vx
	c.Index = f.nextIndex
	c.Flags &^= net.FlagUp
	f.nextIndex++
	f.links[c.Index] = &c
	f.linkAdds++
	return nil
}

func (f *fakeNetlink) LinkDel(l netlink.Link) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	idx := l.Attrs().Index
	if _, ok := f.links[idx]; !ok {
		return fmt.Errorf("fake: delete link %d: %w", idx, unix.ENODEV)
	}
	// As the kernel: routes, addresses and entries through it go too.
	delete(f.links, idx)
	delete(f.addrs, idx)
	f.routes = slices.DeleteFunc(f.routes, func(rt netlink.Route) bool { return rt.LinkIndex == idx })
	f.neighs = slices.DeleteFunc(f.neighs, func(n netlink.Neigh) bool { return n.LinkIndex == idx })
	return nil
}

func (f *fakeNetlink) LinkSetUp(l netlink.Link) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	have, ok := f.links[l.Attrs().Index]
	if !ok {
		return fmt.Errorf("fake: link %d: %w", l.Attrs().Index, unix.ENODEV)
	}
	have.Attrs().Flags |= net.FlagUp
	return nil
}

func (f *fakeNetlink) AddrList(l netlink.Link, family int) ([]netlink.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.links[l.Attrs().Index]; !ok || family != netlink.FAMILY_V4 {
		return nil, fmt.Errorf("fake: addresses of link %d family %d: %w", l.Attrs().Index, family, unix.EINVAL)
	}
	var out []netlink.Addr
	for _, p := range f.addrs[l.Attrs().Index] {
		out = append(out, netlink.Addr{IPNet: &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), 32)}})
	}
	return out, nil
}

func (f *fakeNetlink) AddrAdd(l netlink.Link, a *netlink.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	idx := l.Attrs().Index
	if _, ok := f.links[idx]; !ok {
		return fmt.Errorf("fake: link %d: %w", idx, unix.ENODEV)
	}
	p := prefixOf(a.IPNet)
	if slices.Contains(f.addrs[idx], p) {
		return fmt.Errorf("fake: address %v: %w", p, unix.EEXIST)
	}
	f.addrs[idx] = append(f.addrs[idx], p)
	return nil
}

func (f *fakeNetlink) AddrDel(l netlink.Link, a *netlink.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	idx := l.Attrs().Index
	p := prefixOf(a.IPNet)
	i := slices.Index(f.addrs[idx], p)
	if i < 0 {
		return fmt.Errorf("fake: delete address %v: %w", p, unix.EADDRNOTAVAIL)
	}
	f.addrs[idx] = slices.Delete(f.addrs[idx], i, i+1)
	return nil
}

// sameNeigh: one entry per (link, family, IP) for neighbours and per
// (link, MAC, IP) for forwarding entries.
func sameNeigh(a, b *netlink.Neigh) bool {
	if a.LinkIndex != b.LinkIndex || a.Family != b.Family || !a.IP.Equal(b.IP) {
		return false
	}
	return a.Family != unix.AF_BRIDGE || a.HardwareAddr.String() == b.HardwareAddr.String()
}

func (f *fakeNetlink) NeighList(idx, family int) ([]netlink.Neigh, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.links[idx]; !ok {
		return nil, fmt.Errorf("fake: neighbours of link %d: %w", idx, unix.ENODEV)
	}
	var out []netlink.Neigh
	for _, n := range f.neighs {
		if n.LinkIndex == idx && n.Family == family {
			out = append(out, n)
		}
	}
	return out, nil
}

func (f *fakeNetlink) NeighAdd(n *netlink.Neigh) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.links[n.LinkIndex]; !ok {
		return fmt.Errorf("fake: neighbour on link %d: %w", n.LinkIndex, unix.ENODEV)
	}
	if n.IP == nil || len(n.HardwareAddr) != 6 || (n.Family != netlink.FAMILY_V4 && n.Family != unix.AF_BRIDGE) {
		return fmt.Errorf("fake: malformed neighbour %+v: %w", n, unix.EINVAL)
	}
	if n.Family == unix.AF_BRIDGE && n.Flags&netlink.NTF_SELF == 0 {
		return fmt.Errorf("fake: a vxlan forwarding entry needs NTF_SELF: %w", unix.EINVAL)
	}
	for i := range f.neighs {
		if sameNeigh(&f.neighs[i], n) {
			return fmt.Errorf("fake: neighbour %v: %w", n.IP, unix.EEXIST)
		}
	}
	f.neighs = append(f.neighs, *n)
	return nil
}

func (f *fakeNetlink) NeighDel(n *netlink.Neigh) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.neighs {
		if sameNeigh(&f.neighs[i], n) {
			f.neighs = slices.Delete(f.neighs, i, i+1)
			return nil
		}
	}
	return fmt.Errorf("fake: delete neighbour %v: %w", n.IP, unix.ENOENT)
}

// tunnel lists the neighbour ("ip lladdr mac") and forwarding ("mac dst
// ip") entries, sorted.
func (f *fakeNetlink) tunnel() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, n := range f.neighs {
		if n.Family == unix.AF_BRIDGE {
			out = append(out, fmt.Sprintf("%v dst %v", n.HardwareAddr, n.IP))
		} else {
			out = append(out, fmt.Sprintf("%v lladdr %v", n.IP, n.HardwareAddr))
		}
	}
	slices.Sort(out)
	return out
}
