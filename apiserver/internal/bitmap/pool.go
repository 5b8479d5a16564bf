package bitmap

import (
	"math/rand/v2"
	"sync"
)

// Pool is a Band behind a lock, with its own random source: the index half
// of the ClusterIP and NodePort allocators, which only map their addresses
// or ports to indexes 0..size-1 and word the errors. It is safe for
// concurrent use: every method takes the one lock.
type Pool struct {
	mu   sync.RWMutex
	band *Band
	rand *rand.Rand
}

// NewPool returns a pool of size free items whose static band is
// [0, offset).
func NewPool(size, offset int) *Pool {
	return &Pool{band: NewBand(size, offset), rand: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
}

// StaticBand is the size of the static band of a range of size items,
// min(max(16, size/step), most), and 0 for a range of 16 items or fewer:
// KEP-3070 (ClusterIPs: step 16, most 256) and KEP-3668 (NodePorts: step
// 32, most 128).
func StaticBand(size uint64, step, most int) int {
	const least = 16
	if size <= least {
		return 0
	}
	return int(min(max(least, size/uint64(step)), uint64(most)))
}

// Take takes item i and reports whether it was free.
func (p *Pool) Take(i int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.band.Set(i)
}

// TakeNext takes a free item as Band.Next does, false when none is free.
func (p *Pool) TakeNext() (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.band.Next(p.rand)
}

// Release frees item i and reports whether it was taken.
func (p *Pool) Release(i int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.band.Clear(i)
}

// Has reports whether item i is taken.
func (p *Pool) Has(i int) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.band.Has(i)
}

// Size is how many items the pool holds; it never changes.
func (p *Pool) Size() int { return p.band.Size() }

// Offset is where the dynamic band starts; it never changes.
func (p *Pool) Offset() int { return p.band.Offset() }

// Used is how many items are taken.
func (p *Pool) Used() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.band.Used()
}

// Free is how many items are free.
func (p *Pool) Free() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.band.Size() - p.band.Used()
}

// LowUsed is how many items of the static band are taken.
func (p *Pool) LowUsed() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.band.LowUsed()
}

// Taken returns the taken items in increasing order.
func (p *Pool) Taken() []int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]int, 0, p.band.Used())
	p.band.Taken(func(i int) { out = append(out, i) })
	return out
}

// Restore makes exactly the items idx taken (duplicates are harmless), in
// one step under the lock. Every index must be below Size.
func (p *Pool) Restore(idx []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.band.Reset()
	for _, i := range idx {
		p.band.Set(i)
	}
}
