package podroutes

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/api"
)

// Protocol marks Skiff's routes (rtm_protocol; `ip route` shows "proto 92"
// unless /etc/iproute2/rt_protos names it). No registered routing daemon
// uses 92.
const Protocol netlink.RouteProtocol = 92

// Netlink is the part of *netlink.Handle the reconciler uses; the handle
// must be bound to the node's network namespace. The link, address and
// neighbour methods serve the vxlan mode (and, in host-gw mode, the
// removal of a vxlan device an earlier mode left).
type Netlink interface {
	RouteListFiltered(family int, filter *netlink.Route, filterMask uint64) ([]netlink.Route, error)
	RouteAdd(route *netlink.Route) error
	RouteDel(route *netlink.Route) error
	LinkByName(name string) (netlink.Link, error)
	LinkAdd(link netlink.Link) error
	LinkDel(link netlink.Link) error
	LinkSetUp(link netlink.Link) error
	AddrList(link netlink.Link, family int) ([]netlink.Addr, error)
	AddrAdd(link netlink.Link, addr *netlink.Addr) error
	AddrDel(link netlink.Link, addr *netlink.Addr) error
	NeighList(linkIndex, family int) ([]netlink.Neigh, error)
	NeighAdd(neigh *netlink.Neigh) error
	NeighDel(neigh *netlink.Neigh) error
}

var _ Netlink = (*netlink.Handle)(nil)

// Peer is another node whose pods are reached through it.
type Peer struct {
	Node    string
	PodCIDR netip.Prefix
	NodeIP  netip.Addr
}

func (p Peer) String() string { return fmt.Sprintf("%s (%v via %v)", p.Node, p.PodCIDR, p.NodeIP) }

// Peers picks the route peers out of nodes for the node self, whose own
// pod range is selfCIDR and addresses selfIPs (see the package's
// invariants). The result is sorted by node name; skipped lists the nodes
// left out and why.
func Peers(self string, selfCIDR netip.Prefix, selfIPs []netip.Addr, nodes []*api.Node) (peers []Peer, skipped []string) {
	sorted := slices.Clone(nodes)
	slices.SortFunc(sorted, func(a, b *api.Node) int { return strings.Compare(a.Name, b.Name) })
	for _, n := range sorted {
		if n.Name == self || n.DeletionTimestamp != nil {
			continue
		}
		cidr, ok := nodePodCIDR(n)
		if !ok {
			continue // no podCIDR yet: nodeipam has not got to it
		}
		ip, ok := nodeInternalIP(n)
		if !ok {
			skipped = append(skipped, n.Name+": no IPv4 InternalIP")
			continue
		}
		if slices.Contains(selfIPs, ip) {
			skipped = append(skipped, fmt.Sprintf("%s: InternalIP %v is this node's", n.Name, ip))
			continue
		}
		if selfCIDR.IsValid() && cidr.Overlaps(selfCIDR) {
			skipped = append(skipped, fmt.Sprintf("%s: podCIDR %v overlaps this node's %v", n.Name, cidr, selfCIDR))
			continue
		}
		if i := slices.IndexFunc(peers, func(p Peer) bool { return p.PodCIDR.Overlaps(cidr) }); i >= 0 {
			skipped = append(skipped, fmt.Sprintf("%s: podCIDR %v overlaps %s's %v", n.Name, cidr, peers[i].Node, peers[i].PodCIDR))
			continue
		}
		peers = append(peers, Peer{Node: n.Name, PodCIDR: cidr, NodeIP: ip})
	}
	return peers, skipped
}

func nodePodCIDR(n *api.Node) (netip.Prefix, bool) {
	for _, s := range append([]string{n.Spec.PodCIDR}, n.Spec.PodCIDRs...) {
		if p, err := netip.ParsePrefix(s); err == nil && p.Addr().Is4() {
			return p.Masked(), true
		}
	}
	return netip.Prefix{}, false
}

func nodeInternalIP(n *api.Node) (netip.Addr, bool) {
	for _, a := range n.Status.Addresses {
		if a.Type != api.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

// Result is what one Sync did.
type Result struct {
	Added, Deleted []netip.Prefix
	// Failed are the peers whose route could not be added: Conflict (a
	// route of someone else's has the destination) or another error
	// (ENETUNREACH: the peer is not on-link).
	Failed map[string]error
}

// ErrConflict: a route not made by Skiff already has the destination.
var ErrConflict = errors.New("podroutes: a route not made by skiff has this destination")

// Reconciler keeps the Skiff routes of one node's namespace.
type Reconciler struct {
	h   Netlink
	log *slog.Logger
	vx  *VXLAN // nil: host-gw
	// checked: host-gw mode looked for a vxlan device to remove.
	checked bool
}

// NewReconciler returns a host-gw reconciler over h (nil log discards).
func NewReconciler(h Netlink, log *slog.Logger) *Reconciler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reconciler{h: h, log: log}
}

// Routes lists the Skiff routes in the main table.
func (r *Reconciler) Routes() ([]netlink.Route, error) {
	rs, err := r.h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Protocol: Protocol, Table: unix.RT_TABLE_MAIN},
		netlink.RT_FILTER_PROTOCOL|netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, fmt.Errorf("podroutes: list routes: %w", err)
	}
	return rs, nil
}

// Sync makes the Skiff routes exactly one per peer. In vxlan mode the
// device and its neighbour and forwarding entries are made first (and a
// host-gw reconciler's first Sync deletes a device an earlier vxlan mode
// left). A route whose destination no peer has, or whose next hop
// changed, is deleted; then the missing ones are added. The error is for
// the device, the listing, an entry or a delete; a failed route add is
// reported in Result.Failed and the other peers are still done.
func (r *Reconciler) Sync(peers []Peer) (Result, error) {
	res := Result{Failed: map[string]error{}}
	idx := 0 // the vxlan device's index; 0 in host-gw mode
	var errs []error
	if r.vx != nil {
		var err error
		if idx, err = r.ensureDevice(); err != nil {
			return res, err
		}
		if err := r.syncTunnelEntries(idx, peers); err != nil {
			errs = append(errs, err)
		}
	} else if !r.checked {
		if err := r.removeDevice(); err != nil {
			return res, err
		}
		r.checked = true
	}
	have, err := r.Routes()
	if err != nil {
		return res, err
	}
	want := make(map[netip.Prefix]Peer, len(peers))
	for _, p := range peers {
		want[p.PodCIDR] = p
	}
	ok := map[netip.Prefix]bool{}
	for _, rt := range have {
		dst, gw, valid := routeKey(rt)
		if p, found := want[dst]; valid && found && !ok[dst] && gw == r.gateway(p) && rt.LinkIndex == cmp.Or(idx, rt.LinkIndex) && rt.Priority == 0 {
			ok[dst] = true
			continue
		}
		del := rt
		if err := r.h.RouteDel(&del); err != nil {
			errs = append(errs, fmt.Errorf("podroutes: delete route %v via %v: %w", rt.Dst, rt.Gw, err))
			continue
		}
		r.log.Info("pod route deleted", "dst", rt.Dst, "via", rt.Gw)
		if valid {
			res.Deleted = append(res.Deleted, dst)
		}
	}
	for _, p := range peers {
		if ok[p.PodCIDR] {
			continue
		}
		err := r.h.RouteAdd(r.routeFor(p, idx))
		switch {
		case errors.Is(err, unix.EEXIST):
			err = fmt.Errorf("%w: %v", ErrConflict, p.PodCIDR)
		case errors.Is(err, unix.ENETUNREACH) && r.vx == nil:
			err = fmt.Errorf("podroutes: %v is not on-link (host-gw needs the nodes on one L2 segment): %w", p.NodeIP, err)
		case err != nil:
			err = fmt.Errorf("podroutes: add route %v via %v: %w", p.PodCIDR, p.NodeIP, err)
		}
		if err != nil {
			res.Failed[p.Node] = err
			r.log.Warn("pod route not added", "node", p.Node, "dst", p.PodCIDR, "via", p.NodeIP, "err", err)
			continue
		}
		r.log.Info("pod route added", "node", p.Node, "dst", p.PodCIDR, "via", p.NodeIP)
		res.Added = append(res.Added, p.PodCIDR)
	}
	slices.SortFunc(res.Added, cmpPrefix)
	slices.SortFunc(res.Deleted, cmpPrefix)
	return res, errors.Join(errs...)
}

func cmpPrefix(a, b netip.Prefix) int {
	return cmp.Or(a.Addr().Compare(b.Addr()), cmp.Compare(a.Bits(), b.Bits()))
}

// gateway is the next hop to p's pods: its InternalIP (host-gw) or its
// VTEP address (vxlan).
func (r *Reconciler) gateway(p Peer) netip.Addr {
	if r.vx != nil {
		return p.PodCIDR.Addr()
	}
	return p.NodeIP
}

// routeFor is the route to p's pods (idx: the vxlan device, 0 in host-gw
// mode).
func (r *Reconciler) routeFor(p Peer, idx int) *netlink.Route {
	rt := &netlink.Route{
		Dst:      &net.IPNet{IP: net.IP(p.PodCIDR.Addr().AsSlice()), Mask: net.CIDRMask(p.PodCIDR.Bits(), 32)},
		Gw:       net.IP(r.gateway(p).AsSlice()),
		Protocol: Protocol,
		Table:    unix.RT_TABLE_MAIN,
		Scope:    netlink.SCOPE_UNIVERSE,
	}
	if idx != 0 {
		rt.LinkIndex = idx
		rt.Flags = int(netlink.FLAG_ONLINK)
	}
	return rt
}

// routeKey is a listed route's destination and gateway (valid: both are
// IPv4 and the route has no multipath).
func routeKey(rt netlink.Route) (dst netip.Prefix, gw netip.Addr, valid bool) {
	if rt.Dst == nil || len(rt.MultiPath) > 0 {
		return dst, gw, false
	}
	a, ok := netip.AddrFromSlice(rt.Dst.IP)
	if !ok {
		return dst, gw, false
	}
	bits, _ := rt.Dst.Mask.Size()
	dst = netip.PrefixFrom(a.Unmap(), bits)
	g, ok := netip.AddrFromSlice(rt.Gw)
	if !ok {
		return dst, gw, false
	}
	return dst, g.Unmap(), true
}
