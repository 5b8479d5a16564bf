package portalloc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/apiserver/internal/bitmap"
)

// Static band bounds (KEP-3668): min(max(16, size/32), 128).
const (
	bandMax  = 128
	bandStep = 32
)

// Allocator hands out the ports of one node-port range. It is safe for
// concurrent use: its bitmap.Pool takes one lock around every use.
type Allocator struct {
	// These are set by New and never change.
	base int
	size int

	pool *bitmap.Pool // the taken indexes; it locks itself
}

// New returns an allocator for the size ports base..base+size-1, which
// must lie within 1..65535.
func New(base, size int) (*Allocator, error) {
	switch {
	case size < 1:
		return nil, fmt.Errorf("portalloc: port range size %d must be at least 1", size)
	case base < 1 || base > 65535 || size > 65536-base:
		return nil, fmt.Errorf("portalloc: port range %d-%d must lie within 1-65535", base, base+size-1)
	}
	return &Allocator{
		base: base,
		size: size,
		pool: bitmap.NewPool(size, staticBand(size)),
	}, nil
}

// Parse returns an allocator for a range written as Kubernetes'
// --service-node-port-range accepts it: "30000-32767", "30000+2767" (base
// and offset) or a single port "30000". Surrounding whitespace is ignored.
func Parse(s string) (*Allocator, error) {
	base, size, err := ParseRange(s)
	if err != nil {
		return nil, err
	}
	return New(base, size)
}

// ParseRange parses a port range (see Parse) into its base and size.
func ParseRange(s string) (base, size int, err error) {
	v := strings.TrimSpace(s)
	num := func(p string) (int, error) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("portalloc: unable to parse port range %q: %q is not a port number", s, p)
		}
		return n, nil
	}
	var low, high int
	hyphen, plus := strings.IndexByte(v, '-'), strings.IndexByte(v, '+')
	switch {
	case hyphen >= 0 && plus >= 0:
		return 0, 0, fmt.Errorf("portalloc: unable to parse port range %q", s)
	case hyphen >= 0:
		if low, err = num(v[:hyphen]); err != nil {
			return 0, 0, err
		}
		if high, err = num(v[hyphen+1:]); err != nil {
			return 0, 0, err
		}
	case plus >= 0:
		if low, err = num(v[:plus]); err != nil {
			return 0, 0, err
		}
		off, err := num(v[plus+1:])
		if err != nil {
			return 0, 0, err
		}
		high = low + min(off, 65536) // saturate; checked below
	default:
		if low, err = num(v); err != nil {
			return 0, 0, err
		}
		high = low
	}
	switch {
	case low > 65535 || high > 65535:
		return 0, 0, fmt.Errorf("portalloc: the port range cannot be greater than 65535: %s", s)
	case high < low:
		return 0, 0, fmt.Errorf("portalloc: end port cannot be less than start port: %s", s)
	}
	return low, high - low + 1, nil
}

// staticBand is the size of the lower band reserved for static (user
// chosen) ports, from KEP-3668: min(max(16, size/32), 128), and 0 for
// ranges of 16 ports or fewer.
func staticBand(size int) int { return bitmap.StaticBand(uint64(size), bandStep, bandMax) }

// index returns port's bitmap index, or false when it is outside the range.
func (a *Allocator) index(port int) (int, bool) {
	if port < a.base || port-a.base >= a.size {
		return 0, false
	}
	return port - a.base, true
}

// notInRange is ErrNotInRange with Kubernetes' range text.
func (a *Allocator) notInRange() error {
	return fmt.Errorf("%w. The range of valid ports is %s", ErrNotInRange, a.Range())
}

// Range renders the range as "30000-32767".
func (a *Allocator) Range() string { return fmt.Sprintf("%d-%d", a.base, a.base+a.size-1) }

// Base returns the first port of the range.
func (a *Allocator) Base() int { return a.base }

// Size returns the number of ports in the range.
func (a *Allocator) Size() int { return a.size }

// InRange reports whether port belongs to the range.
func (a *Allocator) InRange(port int) bool {
	_, ok := a.index(port)
	return ok
}

// Allocate takes a specific port. It fails with ErrNotInRange (wrapped
// with the range text) or ErrAllocated.
func (a *Allocator) Allocate(port int) error {
	i, ok := a.index(port)
	if !ok {
		return a.notInRange()
	}
	if !a.pool.Take(i) {
		return ErrAllocated
	}
	return nil
}

// AllocateNext takes a random free port of the upper (dynamic) band, or of
// the lower (static) band once the upper one is full. It fails with ErrFull
// when no port is free.
func (a *Allocator) AllocateNext() (int, error) {
	i, ok := a.pool.TakeNext()
	if !ok {
		return 0, ErrFull
	}
	return a.base + i, nil
}

// Release frees port and reports whether it was allocated. Releasing a
// free or out-of-range port does nothing.
func (a *Allocator) Release(port int) bool {
	i, ok := a.index(port)
	if !ok {
		return false
	}
	return a.pool.Release(i)
}

// Has reports whether port is allocated.
func (a *Allocator) Has(port int) bool {
	i, ok := a.index(port)
	if !ok {
		return false
	}
	return a.pool.Has(i)
}

// Used returns the number of allocated ports.
func (a *Allocator) Used() int {
	return a.pool.Used()
}

// Free returns the number of free ports.
func (a *Allocator) Free() int {
	return a.pool.Free()
}

// Snapshot returns the allocated ports in increasing order.
func (a *Allocator) Snapshot() []int {
	out := a.pool.Taken()
	for j := range out {
		out[j] += a.base
	}
	return out
}

// Restore replaces the allocated set with ports, for the repair pass that
// rebuilds the allocator from the store. Duplicates are harmless, so
// restoring the same list twice gives the same state. Ports outside the
// range are skipped and reported, each wrapping ErrNotInRange, in the
// returned error; the rest are restored regardless.
func (a *Allocator) Restore(ports []int) error {
	var errs []error
	idx := make([]int, 0, len(ports))
	for _, p := range ports {
		i, ok := a.index(p)
		if !ok {
			errs = append(errs, fmt.Errorf("%d: %w", p, a.notInRange()))
			continue
		}
		idx = append(idx, i)
	}
	a.pool.Restore(idx)
	return errors.Join(errs...)
}
