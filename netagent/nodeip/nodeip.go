// Package nodeip picks a node's IPv4 address: from a list of addresses
// (the node's --node-ip), or from the machine's interfaces when it was not
// told one. It uses only the standard library.
package nodeip

import (
	"net"
	"net/netip"
)

// FirstIPv4 is the first IPv4 address of ips (an IPv4-mapped IPv6 address
// counts, unmapped).
func FirstIPv4(ips []netip.Addr) (netip.Addr, bool) {
	for _, ip := range ips {
		if ip = ip.Unmap(); ip.Is4() {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

// FirstGlobalIPv4 is the first global unicast IPv4 address of an up,
// non-loopback interface of the machine (of the calling thread's network
// namespace).
func FirstGlobalIPv4() (netip.Addr, bool) {
	ifs, err := net.Interfaces()
	if err != nil {
		return netip.Addr{}, false
	}
	var addrs []netip.Addr
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		as, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range as {
			if pn, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(pn.IP); ok {
					addrs = append(addrs, ip)
				}
			}
		}
	}
	return firstGlobalIPv4(addrs)
}

// firstGlobalIPv4 is the first global unicast IPv4 address of addrs.
func firstGlobalIPv4(addrs []netip.Addr) (netip.Addr, bool) {
	for _, ip := range addrs {
		if ip = ip.Unmap(); ip.Is4() && ip.IsGlobalUnicast() {
			return ip, true
		}
	}
	return netip.Addr{}, false
}
