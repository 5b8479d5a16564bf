package dns

import (
	"net"
	"net/netip"
)

// acl is the client allowlist: loopback plus the configured networks. It is
// immutable after construction.
type acl struct {
	nets []netip.Prefix // unmapped and masked
}

func newACL(nets []netip.Prefix) acl {
	var a acl
	for _, p := range nets {
		if !p.IsValid() {
			continue
		}
		a.nets = append(a.nets, netip.PrefixFrom(p.Addr().Unmap(), unmapBits(p)).Masked())
	}
	return a
}

// allows reports whether a client at addr may ask this server anything.
// IPv4-mapped IPv6 addresses (from a dual-stack socket) count as IPv4.
func (a acl) allows(addr netip.Addr) bool {
	addr = addr.Unmap().WithZone("")
	if !addr.IsValid() {
		return false
	}
	if addr.IsLoopback() {
		return true
	}
	for _, p := range a.nets {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// clientAddr extracts the client's address and whether it came over UDP.
// An address of an unknown type is invalid (and so not allowed).
func clientAddr(ra net.Addr) (addr netip.Addr, udp bool) {
	switch a := ra.(type) {
	case *net.UDPAddr:
		return a.AddrPort().Addr(), true
	case *net.TCPAddr:
		return a.AddrPort().Addr(), false
	case nil:
		return netip.Addr{}, false
	}
	ap, err := netip.ParseAddrPort(ra.String())
	if err != nil {
		return netip.Addr{}, ra.Network() == "udp"
	}
	return ap.Addr(), ra.Network() == "udp"
}
