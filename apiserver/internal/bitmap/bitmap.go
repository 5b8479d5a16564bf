// Package bitmap is the two-band allocation bitmap behind the ClusterIP
// (apiserver/ipalloc) and NodePort (apiserver/portalloc) allocators: Band,
// the bitmap itself, and Pool, a Band behind one lock that the allocators
// drive by index (they only map addresses or ports to indexes and word the
// errors).
package bitmap

import (
	"math/bits"
	"math/rand/v2"
)

// Band records which of size items (indexes 0..size-1) are taken. The
// items are split into a static band [0, offset) and a dynamic band
// [offset, size) (KEP-3070/KEP-3668): next takes a random free item of the
// dynamic band and falls back to the static band only when the dynamic band
// is full. It is not safe for concurrent use; its owner locks around it.
type Band struct {
	words  []uint64
	size   int
	offset int
	used   int // items taken, in both bands
	low    int // items taken in the static band
}

func NewBand(size, offset int) *Band {
	return &Band{words: make([]uint64, (size+63)/64), size: size, offset: offset}
}

func (b *Band) Has(i int) bool { return b.words[i>>6]&(1<<(i&63)) != 0 }

// Set takes item i and reports whether it was free.
func (b *Band) Set(i int) bool {
	if b.Has(i) {
		return false
	}
	b.words[i>>6] |= 1 << (i & 63)
	b.used++
	if i < b.offset {
		b.low++
	}
	return true
}

// Clear frees item i and reports whether it was taken.
func (b *Band) Clear(i int) bool {
	if !b.Has(i) {
		return false
	}
	b.words[i>>6] &^= 1 << (i & 63)
	b.used--
	if i < b.offset {
		b.low--
	}
	return true
}

// Reset frees every item.
func (b *Band) Reset() {
	clear(b.words)
	b.used, b.low = 0, 0
}

// Next takes a free item: a random one of the dynamic band while it has
// one, else a random one of the static band. It reports false when every
// item is taken.
func (b *Band) Next(rnd *rand.Rand) (int, bool) {
	if n := b.size - b.offset; b.used-b.low < n {
		if i, ok := b.scan(b.offset, b.size, b.offset+rnd.IntN(n)); ok {
			b.Set(i)
			return i, true
		}
	}
	if b.low < b.offset {
		if i, ok := b.scan(0, b.offset, rnd.IntN(b.offset)); ok {
			b.Set(i)
			return i, true
		}
	}
	return 0, false
}

// scan returns the first free item in [start, hi), else the first in
// [lo, start).
func (b *Band) scan(lo, hi, start int) (int, bool) {
	if i, ok := b.firstFree(start, hi); ok {
		return i, true
	}
	return b.firstFree(lo, start)
}

// firstFree returns the lowest free item in [from, to), a word at a time.
func (b *Band) firstFree(from, to int) (int, bool) {
	for from < to {
		w := from >> 6
		if free := ^b.words[w] >> (from & 63); free != 0 {
			i := from + bits.TrailingZeros64(free)
			return i, i < to
		}
		from = (w + 1) << 6
	}
	return 0, false
}

// Taken calls fn for every taken item in increasing order.
func (b *Band) Taken(fn func(i int)) {
	for w, word := range b.words {
		for word != 0 {
			fn(w<<6 + bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
}

// Size is how many items the bitmap holds.
func (b *Band) Size() int { return b.size }

// Used is how many items are taken.
func (b *Band) Used() int { return b.used }

// Offset is where the dynamic band starts (the static band's size).
func (b *Band) Offset() int { return b.offset }

// LowUsed is how many items of the static band are taken.
func (b *Band) LowUsed() int { return b.low }
