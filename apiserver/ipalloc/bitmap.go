package ipalloc

// This file is duplicated, identically apart from the package clause, in
// apiserver/portalloc; keep the two in step.

import (
	"math/bits"
	"math/rand/v2"
)

// bandBitmap records which of size items (indexes 0..size-1) are taken. The
// items are split into a static band [0, offset) and a dynamic band
// [offset, size) (KEP-3070/KEP-3668): next takes a random free item of the
// dynamic band and falls back to the static band only when the dynamic band
// is full. It is not safe for concurrent use; its owner locks around it.
type bandBitmap struct {
	words  []uint64
	size   int
	offset int
	used   int // items taken, in both bands
	low    int // items taken in the static band
}

func newBandBitmap(size, offset int) *bandBitmap {
	return &bandBitmap{words: make([]uint64, (size+63)/64), size: size, offset: offset}
}

func (b *bandBitmap) has(i int) bool { return b.words[i>>6]&(1<<(i&63)) != 0 }

// set takes item i and reports whether it was free.
func (b *bandBitmap) set(i int) bool {
	if b.has(i) {
		return false
	}
	b.words[i>>6] |= 1 << (i & 63)
	b.used++
	if i < b.offset {
		b.low++
	}
	return true
}

// clear frees item i and reports whether it was taken.
func (b *bandBitmap) clear(i int) bool {
	if !b.has(i) {
		return false
	}
	b.words[i>>6] &^= 1 << (i & 63)
	b.used--
	if i < b.offset {
		b.low--
	}
	return true
}

// reset frees every item.
func (b *bandBitmap) reset() {
	clear(b.words)
	b.used, b.low = 0, 0
}

// next takes a free item: a random one of the dynamic band while it has
// one, else a random one of the static band. It reports false when every
// item is taken.
func (b *bandBitmap) next(rnd *rand.Rand) (int, bool) {
	if n := b.size - b.offset; b.used-b.low < n {
		if i, ok := b.scan(b.offset, b.size, b.offset+rnd.IntN(n)); ok {
			b.set(i)
			return i, true
		}
	}
	if b.low < b.offset {
		if i, ok := b.scan(0, b.offset, rnd.IntN(b.offset)); ok {
			b.set(i)
			return i, true
		}
	}
	return 0, false
}

// scan returns the first free item in [start, hi), else the first in
// [lo, start).
func (b *bandBitmap) scan(lo, hi, start int) (int, bool) {
	if i, ok := b.firstFree(start, hi); ok {
		return i, true
	}
	return b.firstFree(lo, start)
}

// firstFree returns the lowest free item in [from, to), a word at a time.
func (b *bandBitmap) firstFree(from, to int) (int, bool) {
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

// taken calls fn for every taken item in increasing order.
func (b *bandBitmap) taken(fn func(i int)) {
	for w, word := range b.words {
		for word != 0 {
			fn(w<<6 + bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
}
