package cnitest

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"syscall"

	"github.com/skiff-dev/skiff/netagent/cni"
)

// Route is a route the fake Links holds.
type Route struct {
	Dst netip.Prefix
	Dev string
	Src netip.Addr
}

// Links is a fake cni.Links: a namespace's links, addresses and routes.
type Links struct {
	mu     sync.Mutex
	links  map[string]*cni.Link
	routes map[netip.Prefix]Route
	calls  []string
}

var _ cni.Links = (*Links)(nil)

// NewLinks returns a namespace with only lo (up, 127.0.0.1/8).
func NewLinks() *Links {
	return &Links{
		links: map[string]*cni.Link{"lo": {
			Name: "lo", Kind: "device", Up: true, MTU: 65536,
			Addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")},
		}},
		routes: map[netip.Prefix]Route{},
	}
}

func (l *Links) record(format string, a ...any) { l.calls = append(l.calls, fmt.Sprintf(format, a...)) }

func notFound(name string) error { return fmt.Errorf("%w: %s", cni.ErrLinkNotFound, name) }

// Link implements cni.Links.
func (l *Links) Link(name string) (cni.Link, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lk, ok := l.links[name]
	if !ok {
		return cni.Link{}, notFound(name)
	}
	c := *lk
	c.Addrs = slices.Clone(lk.Addrs)
	c.MAC = slices.Clone(lk.MAC)
	return c, nil
}

// AddLink adds a link of any kind (down, no address), as something else
// on the node would.
func (l *Links) AddLink(name, kind string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.links[name]; ok {
		return fmt.Errorf("add %s: %w", name, syscall.EEXIST)
	}
	l.links[name] = &cni.Link{Name: name, Kind: kind, MTU: 1500}
	return nil
}

// AddBridge implements cni.Links.
func (l *Links) AddBridge(name string, mtu int, mac net.HardwareAddr) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record("AddBridge %s mtu=%d mac=%s", name, mtu, mac)
	if len(name) == 0 || len(name) > 15 {
		return fmt.Errorf("add bridge %q: %w", name, syscall.EINVAL)
	}
	if _, ok := l.links[name]; ok {
		return fmt.Errorf("add bridge %s: %w", name, syscall.EEXIST)
	}
	if mtu < 68 || mtu > 65535 {
		return fmt.Errorf("add bridge %s mtu %d: %w", name, mtu, syscall.EINVAL)
	}
	if mac != nil && (len(mac) != 6 || mac[0]&1 == 1) {
		return fmt.Errorf("add bridge %s mac %s: %w", name, mac, syscall.EADDRNOTAVAIL)
	}
	l.links[name] = &cni.Link{Name: name, Kind: "bridge", MTU: mtu, MAC: slices.Clone(mac)}
	return nil
}

// AddrAdd implements cni.Links.
func (l *Links) AddrAdd(name string, addr netip.Prefix) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record("AddrAdd %s %s", name, addr)
	lk, ok := l.links[name]
	if !ok {
		return notFound(name)
	}
	if !addr.IsValid() {
		return fmt.Errorf("add %v to %s: %w", addr, name, syscall.EINVAL)
	}
	if slices.Contains(lk.Addrs, addr) {
		return fmt.Errorf("add %s to %s: %w", addr, name, syscall.EEXIST)
	}
	lk.Addrs = append(lk.Addrs, addr)
	return nil
}

// AddrDel implements cni.Links. Routes whose source was the address go
// with it, as in the kernel.
func (l *Links) AddrDel(name string, addr netip.Prefix) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record("AddrDel %s %s", name, addr)
	lk, ok := l.links[name]
	if !ok {
		return notFound(name)
	}
	i := slices.Index(lk.Addrs, addr)
	if i < 0 {
		return fmt.Errorf("delete %s from %s: %w", addr, name, syscall.EADDRNOTAVAIL)
	}
	lk.Addrs = slices.Delete(lk.Addrs, i, i+1)
	for dst, r := range l.routes {
		if r.Src == addr.Addr() {
			delete(l.routes, dst)
		}
	}
	return nil
}

// SetUp implements cni.Links.
func (l *Links) SetUp(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record("SetUp %s", name)
	lk, ok := l.links[name]
	if !ok {
		return notFound(name)
	}
	lk.Up = true
	return nil
}

// RouteReplace implements cni.Links.
func (l *Links) RouteReplace(dst netip.Prefix, dev string, src netip.Addr) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.record("RouteReplace %s dev %s src %s", dst, dev, src)
	lk, ok := l.links[dev]
	if !ok {
		return notFound(dev)
	}
	if !dst.IsValid() || dst != dst.Masked() {
		return fmt.Errorf("route %v: %w", dst, syscall.EINVAL)
	}
	if !lk.Up {
		return fmt.Errorf("route %s dev %s: %w", dst, dev, syscall.ENETDOWN)
	}
	if src.IsValid() && !l.isLocal(src) {
		return fmt.Errorf("route %s src %s: %w", dst, src, syscall.EINVAL)
	}
	l.routes[dst] = Route{Dst: dst, Dev: dev, Src: src}
	return nil
}

func (l *Links) isLocal(a netip.Addr) bool {
	for _, lk := range l.links {
		for _, p := range lk.Addrs {
			if p.Addr() == a {
				return true
			}
		}
	}
	return false
}

// Routes lists the routes, sorted by destination.
func (l *Links) Routes() []Route {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Route, 0, len(l.routes))
	for _, r := range l.routes {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Route) int { return a.Dst.Addr().Compare(b.Dst.Addr()) })
	return out
}

// Calls lists the mutating calls made, in order.
func (l *Links) Calls() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}
