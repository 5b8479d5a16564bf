package proxy

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// NetlinkConntrack deletes entries through netlink (ctnetlink). Handle nil
// means the caller's network namespace; netlink.NewHandleAt gives a handle
// in another one.
type NetlinkConntrack struct {
	Handle *netlink.Handle
}

var _ Conntrack = NetlinkConntrack{}

// DeleteUDP dumps the conntrack table once per address family and deletes
// the matching entries.
func (c NetlinkConntrack) DeleteUDP(ctx context.Context, filters []ConntrackFilter) (int, error) {
	var v4, v6 []netlink.CustomConntrackFilter
	for _, f := range filters {
		is6 := (f.OrigDst.IsValid() && f.OrigDst.Is6()) || (f.ReplySrc.IsValid() && f.ReplySrc.Is6())
		is4 := (f.OrigDst.IsValid() && f.OrigDst.Is4()) || (f.ReplySrc.IsValid() && f.ReplySrc.Is4())
		if !is6 {
			v4 = append(v4, flowFilter(f))
		}
		if !is4 {
			v6 = append(v6, flowFilter(f))
		}
	}
	total := 0
	for _, fam := range []struct {
		family  netlink.InetFamily
		filters []netlink.CustomConntrackFilter
	}{{unix.AF_INET, v4}, {unix.AF_INET6, v6}} {
		if len(fam.filters) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
		var n uint
		var err error
		if c.Handle != nil {
			n, err = c.Handle.ConntrackDeleteFilters(netlink.ConntrackTable, fam.family, fam.filters...)
		} else {
			n, err = netlink.ConntrackDeleteFilters(netlink.ConntrackTable, fam.family, fam.filters...)
		}
		total += int(n)
		if err != nil {
			return total, fmt.Errorf("proxy: conntrack: delete: %w", err)
		}
	}
	return total, nil
}

// flowFilter adapts a ConntrackFilter to netlink's filter interface.
type flowFilter ConntrackFilter

func (f flowFilter) MatchConntrackFlow(flow *netlink.ConntrackFlow) bool {
	if flow.Forward.Protocol != unix.IPPROTO_UDP {
		return false
	}
	if f.OrigDst.IsValid() && !ipEqual(flow.Forward.DstIP, f.OrigDst) {
		return false
	}
	if f.OrigDstPort != 0 && flow.Forward.DstPort != f.OrigDstPort {
		return false
	}
	if f.ReplySrc.IsValid() && !ipEqual(flow.Reverse.SrcIP, f.ReplySrc) {
		return false
	}
	if f.NotNATed && !flow.Reverse.SrcIP.Equal(flow.Forward.DstIP) {
		return false
	}
	return true
}

func ipEqual(ip net.IP, a netip.Addr) bool {
	b, ok := netip.AddrFromSlice(ip)
	return ok && b.Unmap() == a.Unmap()
}
