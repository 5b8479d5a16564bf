package ipvs

import (
	"cmp"
	"fmt"
	"net/netip"
	"strconv"
	"syscall"

	mobyipvs "github.com/moby/ipvs"
)

// Handle is what the backend needs of an IPVS handle. *ipvs.Handle of
// github.com/moby/ipvs satisfies it (see OpenKernel, which also checks that
// the kernel really has IPVS: moby/ipvs itself fails silently without it);
// tests give it ipvstest.Fake, which validates every call as the kernel
// would.
type Handle interface {
	GetServices() ([]*mobyipvs.Service, error)
	GetService(*mobyipvs.Service) (*mobyipvs.Service, error)
	NewService(*mobyipvs.Service) error
	UpdateService(*mobyipvs.Service) error
	DelService(*mobyipvs.Service) error
	GetDestinations(*mobyipvs.Service) ([]*mobyipvs.Destination, error)
	NewDestination(*mobyipvs.Service, *mobyipvs.Destination) error
	UpdateDestination(*mobyipvs.Service, *mobyipvs.Destination) error
	DelDestination(*mobyipvs.Service, *mobyipvs.Destination) error
}

// AddrBinder holds the virtual IPs on a local interface, so that the
// kernel delivers packets for them locally, where IPVS takes them.
type AddrBinder interface {
	// Ensure creates the interface when missing.
	Ensure() error
	// List returns the IPv4 addresses on the interface.
	List() ([]netip.Addr, error)
	// Add binds a as a /32; binding a bound address is not an error.
	Add(a netip.Addr) error
	// Del unbinds a; unbinding an absent address is not an error.
	Del(a netip.Addr) error
	// Remove deletes the interface (Cleanup).
	Remove() error
}

// Kernel constants (linux/ip_vs.h) the backend uses.
const (
	// FlagPersistent is IP_VS_SVC_F_PERSISTENT: sessionAffinity ClientIP.
	FlagPersistent = 0x1
	// FlagHashed is IP_VS_SVC_F_HASHED: the kernel sets it on every
	// service it lists; it is not part of what the backend asks for.
	FlagHashed = 0x2
	// netmask32 is the persistence netmask for IPv4 (one client address).
	netmask32 = 0xffffffff
)

// Protocol numbers (IPPROTO_*).
const (
	protoTCP  = syscall.IPPROTO_TCP
	protoUDP  = syscall.IPPROTO_UDP
	protoSCTP = syscall.IPPROTO_SCTP
)

// protoNumber maps "TCP"/"UDP"/"SCTP" to its IPPROTO number (0 if other).
func protoNumber(p string) uint16 {
	switch p {
	case "TCP":
		return protoTCP
	case "UDP":
		return protoUDP
	case "SCTP":
		return protoSCTP
	}
	return 0
}

// ProtoName is "TCP", "UDP", "SCTP" or the number.
func ProtoName(p uint16) string {
	switch p {
	case protoTCP:
		return "TCP"
	case protoUDP:
		return "UDP"
	case protoSCTP:
		return "SCTP"
	}
	return strconv.Itoa(int(p))
}

// vsKey identifies a virtual server: protocol, address, port.
type vsKey struct {
	proto uint16
	addr  netip.Addr
	port  uint16
}

// String is "TCP 10.96.0.10:80", as ipvsadm names a virtual service.
// compare orders keys by address, port and protocol.
func (k vsKey) compare(o vsKey) int {
	return cmp.Or(k.addr.Compare(o.addr), cmp.Compare(k.port, o.port), cmp.Compare(k.proto, o.proto))
}

func (k vsKey) String() string {
	return ProtoName(k.proto) + " " + netip.AddrPortFrom(k.addr, k.port).String()
}

// service is the moby/ipvs value for a key with the given options.
func (k vsKey) service(sched string, flags, timeout uint32) *mobyipvs.Service {
	return &mobyipvs.Service{
		Address:       k.addr.AsSlice(),
		Protocol:      k.proto,
		Port:          k.port,
		SchedName:     sched,
		Flags:         flags,
		Timeout:       timeout,
		Netmask:       netmask32,
		AddressFamily: syscall.AF_INET,
	}
}

// keyOf is the key of a service the kernel listed; ok is false for
// firewall-mark and non-IPv4 services (never the backend's).
func keyOf(s *mobyipvs.Service) (vsKey, bool) {
	if s.FWMark != 0 || s.AddressFamily != syscall.AF_INET {
		return vsKey{}, false
	}
	a, ok := netip.AddrFromSlice(s.Address)
	if !ok {
		return vsKey{}, false
	}
	return vsKey{proto: s.Protocol, addr: a.Unmap(), port: s.Port}, true
}

// vsSpec is one virtual server as the backend wants it (or as the kernel
// has it).
type vsSpec struct {
	key     vsKey
	sched   string
	flags   uint32 // without FlagHashed
	timeout uint32 // seconds; only with FlagPersistent
	dests   map[netip.AddrPort]int
}

// sameOptions reports whether two specs need no UpdateService.
func (s *vsSpec) sameOptions(o *vsSpec) bool {
	return s.sched == o.sched && s.flags == o.flags && s.timeout == o.timeout
}

func (s *vsSpec) service() *mobyipvs.Service { return s.key.service(s.sched, s.flags, s.timeout) }

// destination is the moby/ipvs value of a real server (masquerading, the
// default forwarding method, as kube-proxy uses).
func destination(ap netip.AddrPort, weight int) *mobyipvs.Destination {
	return &mobyipvs.Destination{
		Address:       ap.Addr().AsSlice(),
		Port:          ap.Port(),
		Weight:        weight,
		AddressFamily: syscall.AF_INET,
	}
}

// destKey is the address and port of a listed destination.
func destKey(d *mobyipvs.Destination) (netip.AddrPort, error) {
	a, ok := netip.AddrFromSlice(d.Address)
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("ipvs: destination with a bad address %v", d.Address)
	}
	return netip.AddrPortFrom(a.Unmap(), d.Port), nil
}
