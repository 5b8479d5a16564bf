package ipalloc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/skiff-dev/skiff/apiserver/internal/bitmap"
)

// maxSize caps the number of addresses one Allocator tracks (its bitmap is
// maxSize bits, 128 KiB): a /12 for IPv4, and the first 2^20 host addresses
// of a larger IPv6 prefix.
const maxSize = 1 << 20

// Prefix length limits, as kube-apiserver enforces for its service range.
const (
	minBits4 = 12
	minBits6 = 64
)

// Static band bounds (KEP-3070): min(max(16, cidrSize/16), 256).
const (
	bandMax  = 256
	bandStep = 16
)

// Allocator hands out the addresses of one service CIDR. It is safe for
// concurrent use: its bitmap.Pool takes one lock around every use.
type Allocator struct {
	// These are set by New and never change.
	cidr    netip.Prefix
	is4     bool
	hi      uint64 // upper 64 bits (of the 16-byte form) shared by every address
	firstLo uint64 // lower 64 bits of the first usable address

	pool *bitmap.Pool // the taken indexes; it locks itself
}

// New returns an allocator for cidr (masked first). The usable range is
// every address of the prefix except the network address and, for IPv4,
// the broadcast address; for IPv6 prefixes with more than 2^20 host
// addresses it is the first 2^20 of them. An IPv4 prefix must be /12 or
// longer and an IPv6 prefix /64 or longer, as kube-apiserver requires.
func New(cidr netip.Prefix) (*Allocator, error) {
	if !cidr.IsValid() {
		return nil, fmt.Errorf("ipalloc: invalid service CIDR %s", cidr)
	}
	cidr = cidr.Masked()
	is4 := cidr.Addr().Is4()
	hostBits := cidr.Addr().BitLen() - cidr.Bits()
	switch {
	case is4 && cidr.Bits() < minBits4:
		return nil, fmt.Errorf("ipalloc: service CIDR %s is too large: an IPv4 prefix must be /%d or longer", cidr, minBits4)
	case !is4 && cidr.Bits() < minBits6:
		return nil, fmt.Errorf("ipalloc: service CIDR %s is too large: an IPv6 prefix must be /%d or longer", cidr, minBits6)
	}
	// cidrSize is the prefix's address count, saturated well above maxSize.
	var cidrSize uint64 = 1 << min(hostBits, 40)
	usable := cidrSize - 1 // no network address
	if is4 && usable > 0 {
		usable-- // no broadcast address
	}
	if usable == 0 {
		return nil, fmt.Errorf("ipalloc: service CIDR %s has no usable addresses", cidr)
	}
	size := int(min(usable, maxSize))
	b := cidr.Addr().As16()
	a := &Allocator{
		cidr:    cidr,
		is4:     is4,
		hi:      binary.BigEndian.Uint64(b[:8]),
		firstLo: binary.BigEndian.Uint64(b[8:]) + 1,
		pool:    bitmap.NewPool(size, staticBand(cidrSize)),
	}
	return a, nil
}

// staticBand is the size of the lower band reserved for static (user
// chosen) addresses, from KEP-3070: min(max(16, cidrSize/16), 256), and 0
// for prefixes of 16 addresses or fewer.
func staticBand(cidrSize uint64) int { return bitmap.StaticBand(cidrSize, bandStep, bandMax) }

// index returns ip's bitmap index, or false when ip is outside the usable
// range. An IPv4-mapped IPv6 address is treated as its IPv4 address.
func (a *Allocator) index(ip netip.Addr) (int, bool) {
	ip = ip.Unmap()
	if !a.cidr.Contains(ip) {
		return 0, false
	}
	b := ip.As16()
	if binary.BigEndian.Uint64(b[:8]) != a.hi {
		return 0, false
	}
	lo := binary.BigEndian.Uint64(b[8:])
	if lo < a.firstLo || lo-a.firstLo >= uint64(a.pool.Size()) {
		return 0, false
	}
	return int(lo - a.firstLo), true
}

func (a *Allocator) addr(i int) netip.Addr {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], a.hi)
	binary.BigEndian.PutUint64(b[8:], a.firstLo+uint64(i))
	ip := netip.AddrFrom16(b)
	if a.is4 {
		return ip.Unmap()
	}
	return ip
}

// notInRange is ErrNotInRange with Kubernetes' range text.
func (a *Allocator) notInRange() error {
	return fmt.Errorf("%w. The range of valid IPs is %s", ErrNotInRange, a.cidr)
}

// CIDR returns the (masked) service CIDR.
func (a *Allocator) CIDR() netip.Prefix { return a.cidr }

// FirstIP returns the first usable address (10.96.0.1 for 10.96.0.0/12),
// which the API server gives the "kubernetes" Service.
func (a *Allocator) FirstIP() netip.Addr { return a.addr(0) }

// Size returns the number of usable addresses.
func (a *Allocator) Size() int { return a.pool.Size() }

// InRange reports whether ip is a usable address of the range.
func (a *Allocator) InRange(ip netip.Addr) bool {
	_, ok := a.index(ip)
	return ok
}

// Allocate takes a specific address. It fails with ErrNotInRange (wrapped
// with the range text) or ErrAllocated.
func (a *Allocator) Allocate(ip netip.Addr) error {
	i, ok := a.index(ip)
	if !ok {
		return a.notInRange()
	}
	if !a.pool.Take(i) {
		return ErrAllocated
	}
	return nil
}

// AllocateNext takes a random free address of the upper (dynamic) band, or
// of the lower (static) band once the upper one is full. It fails with
// ErrFull when no address is free.
func (a *Allocator) AllocateNext() (netip.Addr, error) {
	i, ok := a.pool.TakeNext()
	if !ok {
		return netip.Addr{}, ErrFull
	}
	return a.addr(i), nil
}

// Release frees ip and reports whether it was allocated. Releasing a free
// or out-of-range address does nothing.
func (a *Allocator) Release(ip netip.Addr) bool {
	i, ok := a.index(ip)
	if !ok {
		return false
	}
	return a.pool.Release(i)
}

// Has reports whether ip is allocated.
func (a *Allocator) Has(ip netip.Addr) bool {
	i, ok := a.index(ip)
	if !ok {
		return false
	}
	return a.pool.Has(i)
}

// Used returns the number of allocated addresses.
func (a *Allocator) Used() int {
	return a.pool.Used()
}

// Free returns the number of free addresses.
func (a *Allocator) Free() int {
	return a.pool.Free()
}

// Snapshot returns the allocated addresses in increasing order.
func (a *Allocator) Snapshot() []netip.Addr {
	idx := a.pool.Taken()
	out := make([]netip.Addr, len(idx))
	for j, i := range idx {
		out[j] = a.addr(i)
	}
	return out
}

// Restore replaces the allocated set with ips, for the repair pass that
// rebuilds the allocator from the store. Duplicates are harmless, so
// restoring the same list twice gives the same state. Addresses outside
// the range are skipped and reported, each wrapping ErrNotInRange, in the
// returned error; the rest are restored regardless.
func (a *Allocator) Restore(ips []netip.Addr) error {
	var errs []error
	idx := make([]int, 0, len(ips))
	for _, ip := range ips {
		i, ok := a.index(ip)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %w", ip, a.notInRange()))
			continue
		}
		idx = append(idx, i)
	}
	a.pool.Restore(idx)
	return errors.Join(errs...)
}
