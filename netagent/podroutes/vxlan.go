package podroutes

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The vxlan mode's device, as flannel's vxlan backend (flannel.1) but
// Skiff's own: VNI 1 on UDP 8472 (the Linux kernel's and flannel's port).
const (
	VXLANDevice = "skiff.vxlan"
	VXLANID     = 1
	VXLANPort   = 8472
	// VXLANOverhead is what encapsulation adds to a packet (outer IPv4,
	// UDP, VXLAN and Ethernet headers).
	VXLANOverhead = 50
	// DefaultVXLANMTU fits a 1500-byte underlay.
	DefaultVXLANMTU = 1500 - VXLANOverhead
)

// VXLAN is this node's tunnel end.
type VXLAN struct {
	// NodeIP is the tunnel's local address (the node's InternalIP).
	NodeIP netip.Addr
	// PodCIDR is this node's; the device holds its network address as /32.
	PodCIDR netip.Prefix
	// MTU of the device (default DefaultVXLANMTU).
	MTU int
}

// VtepMAC is the MAC of the vxlan device of the node owning podCIDR:
// 0e:5c followed by the podCIDR's network address (locally administered,
// unicast). Every node derives every peer's MAC from its Node's podCIDR,
// so nothing has to be published.
func VtepMAC(podCIDR netip.Prefix) net.HardwareAddr {
	a := podCIDR.Masked().Addr().As4()
	return net.HardwareAddr{0x0e, 0x5c, a[0], a[1], a[2], a[3]}
}

// NewVXLANReconciler returns a reconciler of the vxlan mode: each peer's
// podCIDR is routed via the peer's VTEP address (its podCIDR's network
// address) onlink through VXLANDevice, with a permanent neighbour entry
// (VTEP address -> VtepMAC) and a forwarding entry (VtepMAC -> the peer's
// InternalIP). The underlay needs no L2 adjacency, only UDP 8472 between
// the nodes.
func NewVXLANReconciler(h Netlink, v VXLAN, log *slog.Logger) (*Reconciler, error) {
	if !v.NodeIP.Is4() || !v.PodCIDR.Addr().Is4() {
		return nil, fmt.Errorf("podroutes: vxlan needs an IPv4 node address and podCIDR (got %v, %v)", v.NodeIP, v.PodCIDR)
	}
	if v.MTU <= 0 {
		v.MTU = DefaultVXLANMTU
	}
	v.PodCIDR = v.PodCIDR.Masked()
	r := NewReconciler(h, log)
	r.vx = &v
	return r, nil
}

func ipOf(a netip.Addr) net.IP { return net.IP(a.AsSlice()) }

// prefixOf converts a netlink address or destination, keeping host bits.
func prefixOf(n *net.IPNet) netip.Prefix {
	if n == nil {
		return netip.Prefix{}
	}
	a, _ := netip.AddrFromSlice(n.IP)
	bits, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), bits)
}

// ensureDevice makes VXLANDevice as r.vx says (replacing a device of that
// name that differs), holding the VTEP address, up; it returns its index.
func (r *Reconciler) ensureDevice() (int, error) {
	v := r.vx
	mac := VtepMAC(v.PodCIDR)
	l, err := r.h.LinkByName(VXLANDevice)
	var nf netlink.LinkNotFoundError
	switch {
	case errors.As(err, &nf):
		l = nil
	case err != nil:
		return 0, fmt.Errorf("podroutes: %s: %w", VXLANDevice, err)
	}
	if vx, ok := l.(*netlink.Vxlan); l != nil && (!ok || vx.VxlanId != VXLANID || vx.Port != VXLANPort || !vx.SrcAddr.Equal(ipOf(v.NodeIP)) ||
		vx.Learning || vx.HardwareAddr.String() != mac.String() || vx.MTU != v.MTU) {
		r.log.Info("replacing the vxlan device", "device", VXLANDevice)
		if err := r.h.LinkDel(l); err != nil {
			return 0, fmt.Errorf("podroutes: delete %s: %w", VXLANDevice, err)
		}
		l = nil
	}
	if l == nil {
		nl := &netlink.Vxlan{
			LinkAttrs: netlink.LinkAttrs{Name: VXLANDevice, MTU: v.MTU, HardwareAddr: mac},
			VxlanId:   VXLANID, Port: VXLANPort, SrcAddr: ipOf(v.NodeIP), Learning: false,
		}
		if err := r.h.LinkAdd(nl); err != nil {
			return 0, fmt.Errorf("podroutes: add %s: %w", VXLANDevice, err)
		}
		if l, err = r.h.LinkByName(VXLANDevice); err != nil {
			return 0, fmt.Errorf("podroutes: %s: %w", VXLANDevice, err)
		}
		r.log.Info("vxlan device created", "device", VXLANDevice, "local", v.NodeIP, "mac", mac)
	}
	addrs, err := r.h.AddrList(l, netlink.FAMILY_V4)
	if err != nil {
		return 0, fmt.Errorf("podroutes: %s addresses: %w", VXLANDevice, err)
	}
	want := netip.PrefixFrom(v.PodCIDR.Addr(), 32)
	found := false
	for _, a := range addrs {
		if prefixOf(a.IPNet) == want {
			found = true
			continue
		}
		del := a
		if err := r.h.AddrDel(l, &del); err != nil {
			return 0, fmt.Errorf("podroutes: %s: delete %v: %w", VXLANDevice, a.IPNet, err)
		}
	}
	if !found {
		if err := r.h.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: ipOf(want.Addr()), Mask: net.CIDRMask(32, 32)}}); err != nil {
			return 0, fmt.Errorf("podroutes: %s: add %v: %w", VXLANDevice, want, err)
		}
	}
	if l.Attrs().Flags&net.FlagUp == 0 {
		if err := r.h.LinkSetUp(l); err != nil {
			return 0, fmt.Errorf("podroutes: %s up: %w", VXLANDevice, err)
		}
	}
	return l.Attrs().Index, nil
}

// removeDevice deletes VXLANDevice if an earlier vxlan mode left it (the
// kernel drops the routes through it).
func (r *Reconciler) removeDevice() error {
	l, err := r.h.LinkByName(VXLANDevice)
	var nf netlink.LinkNotFoundError
	if errors.As(err, &nf) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("podroutes: %s: %w", VXLANDevice, err)
	}
	if err := r.h.LinkDel(l); err != nil {
		return fmt.Errorf("podroutes: delete %s: %w", VXLANDevice, err)
	}
	r.log.Info("vxlan device of an earlier mode deleted", "device", VXLANDevice)
	return nil
}

// syncTunnelEntries makes the device's neighbour entries (VTEP address ->
// MAC) and forwarding entries (MAC -> node address) exactly the peers'.
// The device is Skiff's: every entry on it is.
func (r *Reconciler) syncTunnelEntries(idx int, peers []Peer) error {
	type arp struct {
		ip  netip.Addr
		mac string
	}
	type fdb struct {
		mac string
		dst netip.Addr
	}
	wantARP := map[arp]bool{}
	wantFDB := map[fdb]bool{}
	for _, p := range peers {
		mac := VtepMAC(p.PodCIDR).String()
		wantARP[arp{p.PodCIDR.Addr(), mac}] = true
		wantFDB[fdb{mac, p.NodeIP}] = true
	}
	var errs []error
	neighs, err := r.h.NeighList(idx, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("podroutes: %s neighbours: %w", VXLANDevice, err)
	}
	for _, n := range neighs {
		a, _ := netip.AddrFromSlice(n.IP)
		k := arp{a.Unmap(), n.HardwareAddr.String()}
		if wantARP[k] && n.State&netlink.NUD_PERMANENT != 0 {
			delete(wantARP, k)
			continue
		}
		del := n
		if err := r.h.NeighDel(&del); err != nil {
			errs = append(errs, fmt.Errorf("podroutes: delete neighbour %v: %w", n.IP, err))
		}
	}
	fdbs, err := r.h.NeighList(idx, unix.AF_BRIDGE)
	if err != nil {
		return fmt.Errorf("podroutes: %s forwarding entries: %w", VXLANDevice, err)
	}
	for _, n := range fdbs {
		a, _ := netip.AddrFromSlice(n.IP)
		k := fdb{n.HardwareAddr.String(), a.Unmap()}
		if wantFDB[k] {
			delete(wantFDB, k)
			continue
		}
		del := n
		if err := r.h.NeighDel(&del); err != nil {
			errs = append(errs, fmt.Errorf("podroutes: delete forwarding entry %v: %w", n.HardwareAddr, err))
		}
	}
	// Added in a stable order (tests compare what the fake was asked).
	arps := make([]arp, 0, len(wantARP))
	for k := range wantARP {
		arps = append(arps, k)
	}
	slices.SortFunc(arps, func(a, b arp) int { return a.ip.Compare(b.ip) })
	for _, k := range arps {
		mac, _ := net.ParseMAC(k.mac)
		if err := r.h.NeighAdd(&netlink.Neigh{LinkIndex: idx, Family: netlink.FAMILY_V4, State: netlink.NUD_PERMANENT,
			IP: ipOf(k.ip), HardwareAddr: mac}); err != nil {
			errs = append(errs, fmt.Errorf("podroutes: neighbour %v: %w", k.ip, err))
		}
	}
	fdbAdds := make([]fdb, 0, len(wantFDB))
	for k := range wantFDB {
		fdbAdds = append(fdbAdds, k)
	}
	slices.SortFunc(fdbAdds, func(a, b fdb) int { return a.dst.Compare(b.dst) })
	for _, k := range fdbAdds {
		mac, _ := net.ParseMAC(k.mac)
		if err := r.h.NeighAdd(&netlink.Neigh{LinkIndex: idx, Family: unix.AF_BRIDGE, State: netlink.NUD_PERMANENT,
			Flags: netlink.NTF_SELF, IP: ipOf(k.dst), HardwareAddr: mac}); err != nil {
			errs = append(errs, fmt.Errorf("podroutes: forwarding entry %v -> %v: %w", k.mac, k.dst, err))
		}
	}
	return errors.Join(errs...)
}
