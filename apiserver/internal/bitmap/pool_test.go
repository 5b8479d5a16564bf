package bitmap

import (
	"slices"
	"sync"
	"testing"
)

// TestPoolConcurrentExhaust races 200 goroutines for the 100 items of a
// pool with a static band: exactly 100 win, none twice, and the counters
// agree with the taken set. (The allocators' race tests moved here with
// the lock.)
func TestPoolConcurrentExhaust(t *testing.T) {
	p := NewPool(100, StaticBand(100, 32, 128))
	var (
		mu   sync.Mutex
		got  = map[int]bool{}
		full int
		wg   sync.WaitGroup
	)
	for range 200 {
		wg.Go(func() {
			i, ok := p.TakeNext()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case !ok:
				full++
			case got[i]:
				t.Errorf("item %d handed out twice", i)
			default:
				got[i] = true
			}
		})
	}
	wg.Wait()
	if len(got) != 100 || full != 100 {
		t.Fatalf("%d taken, %d refused; want 100, 100", len(got), full)
	}
	if p.Used() != 100 || p.Free() != 0 || p.LowUsed() != p.Offset() {
		t.Fatalf("Used %d Free %d LowUsed %d (offset %d); want 100 0 %d", p.Used(), p.Free(), p.LowUsed(), p.Offset(), p.Offset())
	}
}

func TestPoolTakeReleaseRestore(t *testing.T) {
	p := NewPool(130, 16)
	if !p.Take(70) || p.Take(70) {
		t.Fatal("Take(70) twice: want true then false")
	}
	if !p.Has(70) || p.Has(71) {
		t.Fatal("Has(70), Has(71): want true, false")
	}
	p.Take(3)
	if got := p.Taken(); !slices.Equal(got, []int{3, 70}) || p.LowUsed() != 1 {
		t.Fatalf("Taken = %v, LowUsed = %d; want [3 70], 1", got, p.LowUsed())
	}
	if !p.Release(70) || p.Release(70) {
		t.Fatal("Release(70) twice: want true then false")
	}
	p.Restore([]int{129, 5, 5, 64})
	if got := p.Taken(); !slices.Equal(got, []int{5, 64, 129}) || p.Used() != 3 || p.Free() != 127 || p.LowUsed() != 1 {
		t.Fatalf("after Restore: Taken %v Used %d Free %d LowUsed %d; want [5 64 129] 3 127 1", got, p.Used(), p.Free(), p.LowUsed())
	}
}

func TestStaticBand(t *testing.T) {
	for _, tc := range []struct {
		size       uint64
		step, most int
		want       int
	}{
		{16, 16, 256, 0},        // too small for a static band
		{17, 16, 256, 16},       // at least 16
		{1 << 12, 16, 256, 256}, // /20: 4096/16 = 256
		{1 << 20, 16, 256, 256}, // capped
		{2768, 32, 128, 86},     // 30000-32767
		{1 << 40, 16, 256, 256},
	} {
		if got := StaticBand(tc.size, tc.step, tc.most); got != tc.want {
			t.Errorf("StaticBand(%d, %d, %d) = %d, want %d", tc.size, tc.step, tc.most, got, tc.want)
		}
	}
}
