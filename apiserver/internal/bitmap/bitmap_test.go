package bitmap

import (
	"math/rand/v2"
	"testing"
)

func TestBandBitmapFirstFree(t *testing.T) {
	tests := []struct {
		name     string
		size     int
		taken    []int
		from, to int
		want     int
		wantOK   bool
	}{
		{"empty range", 130, nil, 5, 5, 0, false},
		{"first bit", 130, nil, 0, 130, 0, true},
		{"skips taken", 130, []int{0, 1, 2}, 0, 130, 3, true},
		{"crosses word", 130, seq(0, 64), 0, 130, 64, true},
		{"crosses two words", 130, seq(0, 128), 0, 130, 128, true},
		{"last bit", 130, seq(0, 129), 0, 130, 129, true},
		{"full", 130, seq(0, 130), 0, 130, 0, false},
		{"mid-word start", 130, []int{70}, 70, 130, 71, true},
		{"free bit past to", 130, seq(0, 100), 0, 100, 0, false},
		{"padding bits are not items", 130, seq(100, 130), 100, 130, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBand(tt.size, 0)
			for _, i := range tt.taken {
				b.Set(i)
			}
			got, ok := b.firstFree(tt.from, tt.to)
			if ok != tt.wantOK || (ok && got != tt.want) {
				t.Fatalf("firstFree(%d, %d) = %d, %v; want %d, %v", tt.from, tt.to, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestBandBitmapNext(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name   string
		size   int
		offset int
	}{
		{"no static band", 70, 0},
		{"band inside a word", 70, 16},
		{"band across words", 300, 129},
		{"one item", 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBand(tt.size, tt.offset)
			seen := make([]bool, tt.size)
			for n := range tt.size {
				i, ok := b.Next(rnd)
				if !ok {
					t.Fatalf("next failed after %d items", n)
				}
				if seen[i] {
					t.Fatalf("item %d taken twice", i)
				}
				if upperFull := n >= tt.size-tt.offset; (i < tt.offset) != upperFull {
					t.Fatalf("allocation %d got item %d (static band %d)", n, i, tt.offset)
				}
				seen[i] = true
			}
			if _, ok := b.Next(rnd); ok || b.used != tt.size || b.low != tt.offset {
				t.Fatalf("full bitmap: ok=%v used=%d low=%d", ok, b.used, b.low)
			}
			var taken []int
			b.Taken(func(i int) { taken = append(taken, i) })
			if len(taken) != tt.size {
				t.Fatalf("taken lists %d items, want %d", len(taken), tt.size)
			}
			b.Reset()
			if b.used != 0 || b.low != 0 || b.Has(0) {
				t.Fatal("reset left items taken")
			}
		})
	}
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}
