package nodeipam

import (
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
)

// Errors of the Allocator.
var (
	// ErrFull: every subnet of the cluster CIDR is taken.
	ErrFull = errors.New("nodeipam: no remaining CIDRs in the cluster CIDR")
	// ErrNotInRange: a subnet outside the cluster CIDR or of another size.
	ErrNotInRange = errors.New("nodeipam: CIDR is not a node subnet of the cluster CIDR")
	// ErrAllocated: a subnet already held.
	ErrAllocated = errors.New("nodeipam: CIDR is already allocated")
)

// MaxSubnetBits bounds the number of node subnets (2^20) so the bitmap
// stays small (128 KiB).
const MaxSubnetBits = 20

// Allocator hands out fixed-size subnets of a cluster CIDR. It is not safe
// for concurrent use; the controller serialises calls under its lock.
type Allocator struct {
	cidr  netip.Prefix
	mask  int  // node subnet prefix length
	shift uint // host bits of a node subnet
	size  int  // number of subnets
	used  []uint64
	free  int
	next  int // where the next search starts (round robin)
}

// NewAllocator splits cidr into subnets of prefix length mask.
func NewAllocator(cidr netip.Prefix, mask int) (*Allocator, error) {
	if !cidr.IsValid() {
		return nil, fmt.Errorf("nodeipam: invalid cluster CIDR")
	}
	cidr = cidr.Masked()
	blen := cidr.Addr().BitLen()
	if mask < cidr.Bits() || mask > blen {
		return nil, fmt.Errorf("nodeipam: node CIDR mask size %d must be between the cluster CIDR's %d and %d", mask, cidr.Bits(), blen)
	}
	if mask-cidr.Bits() > MaxSubnetBits {
		return nil, fmt.Errorf("nodeipam: node CIDR mask size %d gives more than 2^%d subnets of %s", mask, MaxSubnetBits, cidr)
	}
	if blen == 32 && mask > 30 {
		return nil, fmt.Errorf("nodeipam: node CIDR mask size %d leaves no room for pods (at most /30 for IPv4)", mask)
	}
	size := 1 << (mask - cidr.Bits())
	return &Allocator{cidr: cidr, mask: mask, shift: uint(blen - mask), size: size,
		used: make([]uint64, (size+63)/64), free: size}, nil
}

// Size is the number of subnets; Free how many are not held.
func (a *Allocator) Size() int { return a.size }
func (a *Allocator) Free() int { return a.free }

func (a *Allocator) isUsed(i int) bool { return a.used[i/64]&(1<<(uint(i)%64)) != 0 }
func (a *Allocator) set(i int, v bool) {
	if v {
		a.used[i/64] |= 1 << (uint(i) % 64)
	} else {
		a.used[i/64] &^= 1 << (uint(i) % 64)
	}
}

// Allocate takes the next free subnet.
func (a *Allocator) Allocate() (netip.Prefix, error) {
	if a.free == 0 {
		return netip.Prefix{}, ErrFull
	}
	for k := range a.size {
		i := (a.next + k) % a.size
		if !a.isUsed(i) {
			a.set(i, true)
			a.free--
			a.next = (i + 1) % a.size
			return a.prefix(i), nil
		}
	}
	return netip.Prefix{}, ErrFull
}

// Occupy marks p as held (rebuilding from existing nodes).
func (a *Allocator) Occupy(p netip.Prefix) error {
	i, err := a.index(p)
	if err != nil {
		return err
	}
	if a.isUsed(i) {
		return fmt.Errorf("%w: %s", ErrAllocated, p)
	}
	a.set(i, true)
	a.free--
	return nil
}

// Release frees p; releasing a free or foreign subnet is a no-op.
func (a *Allocator) Release(p netip.Prefix) {
	i, err := a.index(p)
	if err != nil || !a.isUsed(i) {
		return
	}
	a.set(i, false)
	a.free++
}

// Contains reports whether p is one of the allocator's subnets.
func (a *Allocator) Contains(p netip.Prefix) bool {
	_, err := a.index(p)
	return err == nil
}

func (a *Allocator) index(p netip.Prefix) (int, error) {
	if !p.IsValid() || p.Bits() != a.mask || p.Addr().BitLen() != a.cidr.Addr().BitLen() ||
		p.Masked() != p || !a.cidr.Contains(p.Addr()) {
		return 0, fmt.Errorf("%w: %s (cluster CIDR %s, /%d per node)", ErrNotInRange, p, a.cidr, a.mask)
	}
	hi, lo := toU128(p.Addr())
	bhi, blo := toU128(a.cidr.Addr())
	lo, borrow := bits.Sub64(lo, blo, 0)
	hi, _ = bits.Sub64(hi, bhi, borrow)
	// (hi:lo) >> shift, which fits in an int (at most MaxSubnetBits bits).
	var idx uint64
	if a.shift >= 64 {
		idx = hi >> (a.shift - 64)
	} else {
		idx = lo>>a.shift | hi<<(64-a.shift)
		if a.shift == 0 {
			idx = lo
		}
	}
	return int(idx), nil
}

func (a *Allocator) prefix(i int) netip.Prefix {
	bhi, blo := toU128(a.cidr.Addr())
	var ohi, olo uint64
	if a.shift >= 64 {
		ohi = uint64(i) << (a.shift - 64)
	} else {
		olo = uint64(i) << a.shift
		if a.shift > 0 {
			ohi = uint64(i) >> (64 - a.shift)
		}
	}
	lo, carry := bits.Add64(blo, olo, 0)
	hi, _ := bits.Add64(bhi, ohi, carry)
	return netip.PrefixFrom(fromU128(hi, lo, a.cidr.Addr().Is4()), a.mask)
}

func toU128(a netip.Addr) (hi, lo uint64) {
	b := a.As16()
	for i := range 8 {
		hi = hi<<8 | uint64(b[i])
		lo = lo<<8 | uint64(b[8+i])
	}
	return hi, lo
}

func fromU128(hi, lo uint64, is4 bool) netip.Addr {
	var b [16]byte
	for i := 7; i >= 0; i-- {
		b[i] = byte(hi)
		b[8+i] = byte(lo)
		hi >>= 8
		lo >>= 8
	}
	a := netip.AddrFrom16(b)
	if is4 {
		return a.Unmap()
	}
	return a
}
