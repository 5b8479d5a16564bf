package cni

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// Link is what Setup needs to know about a network interface.
type Link struct {
	Name  string
	Kind  string // "bridge", "veth", "device", ...
	Up    bool   // administratively up
	MTU   int
	MAC   net.HardwareAddr
	Addrs []netip.Prefix // IPv4 addresses, each with its prefix length
}

// Links programs interfaces, addresses and routes in the calling
// thread's network namespace.
type Links interface {
	// Link returns the link called name, or an error wrapping
	// ErrLinkNotFound.
	Link(name string) (Link, error)
	AddBridge(name string, mtu int, mac net.HardwareAddr) error
	AddrAdd(name string, addr netip.Prefix) error
	AddrDel(name string, addr netip.Prefix) error
	SetUp(name string) error
	// RouteReplace installs dst via dev with source address src and
	// link scope (ip route replace DST dev DEV src SRC).
	RouteReplace(dst netip.Prefix, dev string, src netip.Addr) error
}

// NetlinkLinks is the real Links, over netlink.
type NetlinkLinks struct{}

var _ Links = NetlinkLinks{}

// dumpRetries bounds retries of a netlink dump the kernel interrupted
// (netlink.ErrDumpInterrupted: the table changed while it was read).
const dumpRetries = 5

func (NetlinkLinks) link(name string) (netlink.Link, error) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("%w: %s", ErrLinkNotFound, name)
		}
		return nil, fmt.Errorf("cni: link %s: %w", name, err)
	}
	return l, nil
}

// Link implements Links.
func (n NetlinkLinks) Link(name string) (Link, error) {
	l, err := n.link(name)
	if err != nil {
		return Link{}, err
	}
	var addrs []netlink.Addr
	for i := 0; ; i++ {
		addrs, err = netlink.AddrList(l, netlink.FAMILY_V4)
		if err == nil || !errors.Is(err, netlink.ErrDumpInterrupted) || i == dumpRetries {
			break
		}
	}
	if err != nil {
		return Link{}, fmt.Errorf("cni: addresses of %s: %w", name, err)
	}
	a := l.Attrs()
	out := Link{Name: a.Name, Kind: l.Type(), Up: a.Flags&net.FlagUp != 0, MTU: a.MTU, MAC: a.HardwareAddr}
	for _, ad := range addrs {
		ip, ok := netip.AddrFromSlice(ad.IP.To4())
		if !ok {
			continue
		}
		bits, _ := ad.Mask.Size()
		out.Addrs = append(out.Addrs, netip.PrefixFrom(ip, bits))
	}
	return out, nil
}

// AddBridge implements Links.
func (NetlinkLinks) AddBridge(name string, mtu int, mac net.HardwareAddr) error {
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{
		Name:         name,
		MTU:          mtu,
		HardwareAddr: mac,
		// -1: the kernel's default queue length, not a zero-length queue.
		TxQLen: -1,
	}}
	if err := netlink.LinkAdd(br); err != nil {
		return fmt.Errorf("cni: add bridge %s: %w", name, err)
	}
	return nil
}

// AddrAdd implements Links.
func (n NetlinkLinks) AddrAdd(name string, addr netip.Prefix) error {
	l, err := n.link(name)
	if err != nil {
		return err
	}
	if err := netlink.AddrAdd(l, &netlink.Addr{IPNet: ipNet(addr)}); err != nil {
		return fmt.Errorf("cni: add %s to %s: %w", addr, name, err)
	}
	return nil
}

// AddrDel implements Links.
func (n NetlinkLinks) AddrDel(name string, addr netip.Prefix) error {
	l, err := n.link(name)
	if err != nil {
		return err
	}
	if err := netlink.AddrDel(l, &netlink.Addr{IPNet: ipNet(addr)}); err != nil {
		return fmt.Errorf("cni: delete %s from %s: %w", addr, name, err)
	}
	return nil
}

// SetUp implements Links.
func (n NetlinkLinks) SetUp(name string) error {
	l, err := n.link(name)
	if err != nil {
		return err
	}
	if err := netlink.LinkSetUp(l); err != nil {
		return fmt.Errorf("cni: set %s up: %w", name, err)
	}
	return nil
}

// RouteReplace implements Links.
func (n NetlinkLinks) RouteReplace(dst netip.Prefix, dev string, src netip.Addr) error {
	l, err := n.link(dev)
	if err != nil {
		return err
	}
	r := &netlink.Route{
		LinkIndex: l.Attrs().Index,
		Dst:       ipNet(dst.Masked()),
		Src:       net.IP(src.AsSlice()),
		Scope:     netlink.SCOPE_LINK,
	}
	if err := netlink.RouteReplace(r); err != nil {
		return fmt.Errorf("cni: route %s dev %s src %s: %w", dst, dev, src, err)
	}
	return nil
}

// ipNet converts 10.0.0.1/24 to the *net.IPNet netlink wants, keeping
// the host bits.
func ipNet(p netip.Prefix) *net.IPNet {
	a := p.Addr()
	return &net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(p.Bits(), a.BitLen())}
}
