package netnstest

import (
	"net"
	"net/netip"
)

// IPNet converts an address with its prefix length (10.0.0.1/24) to the
// *net.IPNet netlink wants, keeping the host bits.
func IPNet(p netip.Prefix) *net.IPNet {
	a := p.Addr()
	return &net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(p.Bits(), a.BitLen())}
}
