package portalloc

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

func mustParse(t testing.TB, s string) *Allocator {
	t.Helper()
	a, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkInvariants(t, a) })
	return a
}

func checkInvariants(t testing.TB, a *Allocator) {
	t.Helper()
	snap := a.Snapshot()
	if len(snap) != a.Used() {
		t.Errorf("Snapshot has %d ports, Used() = %d", len(snap), a.Used())
	}
	if a.Used()+a.Free() != a.Size() {
		t.Errorf("Used %d + Free %d != Size %d", a.Used(), a.Free(), a.Size())
	}
	low := 0
	for _, p := range snap {
		if !a.Has(p) {
			t.Errorf("Snapshot lists %d but Has is false", p)
		}
		if p-a.Base() < a.pool.Offset() {
			low++
		}
	}
	if low != a.pool.LowUsed() {
		t.Errorf("static band holds %d ports, counter says %d", low, a.pool.LowUsed())
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantErr    string
		wantRange  string
		wantSize   int
		wantStatic int
	}{
		{name: "default", in: "30000-32767", wantRange: "30000-32767", wantSize: 2768, wantStatic: 86},
		{name: "whitespace", in: " 30000-32767 ", wantRange: "30000-32767", wantSize: 2768, wantStatic: 86},
		{name: "plus notation", in: "30000+99", wantRange: "30000-30099", wantSize: 100, wantStatic: 16},
		{name: "single port", in: "30000", wantRange: "30000-30000", wantSize: 1, wantStatic: 0},
		{name: "sixteen ports no band", in: "30000-30015", wantRange: "30000-30015", wantSize: 16, wantStatic: 0},
		{name: "big range capped band", in: "1024-65535", wantRange: "1024-65535", wantSize: 64512, wantStatic: 128},
		{name: "whole range", in: "1-65535", wantRange: "1-65535", wantSize: 65535, wantStatic: 128},
		{name: "empty", in: "", wantErr: `portalloc: unable to parse port range "": "" is not a port number`},
		{name: "garbage", in: "abc", wantErr: `portalloc: unable to parse port range "abc": "abc" is not a port number`},
		{name: "both notations", in: "1-2+3", wantErr: `portalloc: unable to parse port range "1-2+3"`},
		{name: "too high", in: "30000-70000", wantErr: "portalloc: the port range cannot be greater than 65535: 30000-70000"},
		{name: "plus too high", in: "65000+1000", wantErr: "portalloc: the port range cannot be greater than 65535: 65000+1000"},
		{name: "reversed", in: "32767-30000", wantErr: "portalloc: end port cannot be less than start port: 32767-30000"},
		{name: "port zero", in: "0-100", wantErr: "portalloc: port range 0-100 must lie within 1-65535"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Parse(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Range() != tt.wantRange || a.Size() != tt.wantSize || a.Free() != tt.wantSize {
				t.Fatalf("Range/Size/Free = %s/%d/%d, want %s/%d/%d", a.Range(), a.Size(), a.Free(), tt.wantRange, tt.wantSize, tt.wantSize)
			}
			if a.pool.Offset() != tt.wantStatic {
				t.Fatalf("static band = %d, want %d", a.pool.Offset(), tt.wantStatic)
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name       string
		base, size int
		want       string
	}{
		{"zero size", 30000, 0, "portalloc: port range size 0 must be at least 1"},
		{"negative base", -1, 10, "portalloc: port range -1-8 must lie within 1-65535"},
		{"past 65535", 65530, 7, "portalloc: port range 65530-65536 must lie within 1-65535"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.base, tt.size); err == nil || err.Error() != tt.want {
				t.Fatalf("New(%d, %d) error = %v, want %q", tt.base, tt.size, err, tt.want)
			}
		})
	}
	if a, err := New(65535, 1); err != nil || a.Range() != "65535-65535" {
		t.Fatalf("New(65535, 1) = %v, %v", a, err)
	}
}

func TestAllocate(t *testing.T) {
	const rangeText = "provided port is not in the valid range. The range of valid ports is 30000-32767"
	tests := []struct {
		name    string
		port    int
		wantErr error
		text    string
	}{
		{name: "first", port: 30000},
		{name: "last", port: 32767},
		{name: "middle", port: 31000},
		{name: "below", port: 29999, wantErr: ErrNotInRange, text: rangeText},
		{name: "above", port: 32768, wantErr: ErrNotInRange, text: rangeText},
		{name: "zero", port: 0, wantErr: ErrNotInRange, text: rangeText},
		{name: "already allocated", port: 30080, wantErr: ErrAllocated, text: "provided port is already allocated"},
	}
	a := mustParse(t, "30000-32767")
	if err := a.Allocate(30080); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			used := a.Used()
			err := a.Allocate(tt.port)
			if tt.wantErr == nil {
				if err != nil || !a.Has(tt.port) || a.Used() != used+1 {
					t.Fatalf("Allocate(%d) = %v; Has %v, Used %d (was %d)", tt.port, err, a.Has(tt.port), a.Used(), used)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || err.Error() != tt.text {
				t.Fatalf("Allocate(%d) = %v, want %q", tt.port, err, tt.text)
			}
			if a.Used() != used {
				t.Fatalf("failed Allocate changed Used")
			}
		})
	}
}

func TestDynamicPrefersUpperBand(t *testing.T) {
	tests := []struct {
		name   string
		rng    string
		static int
	}{
		{"hundred ports", "30000-30099", 16},
		{"default range", "30000-32767", 86},
		{"small range no band", "30000-30009", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustParse(t, tt.rng)
			static := func(p int) bool { return p-a.Base() < tt.static }
			for i := range a.Size() - tt.static {
				p, err := a.AllocateNext()
				if err != nil {
					t.Fatal(err)
				}
				if static(p) {
					t.Fatalf("allocation %d got static-band port %d while the dynamic band had free ports", i, p)
				}
			}
			for i := range tt.static {
				p, err := a.AllocateNext()
				if err != nil {
					t.Fatal(err)
				}
				if !static(p) {
					t.Fatalf("allocation %d of the static band got %d", i, p)
				}
			}
			p, err := a.AllocateNext()
			if !errors.Is(err, ErrFull) || err.Error() != "range is full" {
				t.Fatalf("AllocateNext on a full range = %d, %v; want ErrFull", p, err)
			}
			// Release then reallocate: the freed port is the only free one.
			freed := a.Base() + a.Size() - 1
			if !a.Release(freed) {
				t.Fatalf("Release(%d) = false", freed)
			}
			if got, err := a.AllocateNext(); err != nil || got != freed {
				t.Fatalf("AllocateNext after release = %d, %v; want %d", got, err, freed)
			}
		})
	}
}

func TestReleaseAndReallocate(t *testing.T) {
	tests := []struct {
		name        string
		port        int
		allocate    bool
		wantRelease bool
	}{
		{"allocated", 30500, true, true},
		{"free", 30501, false, false},
		{"out of range", 80, false, false},
	}
	a := mustParse(t, "30000-32767")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.allocate {
				if err := a.Allocate(tt.port); err != nil {
					t.Fatal(err)
				}
			}
			if got := a.Release(tt.port); got != tt.wantRelease {
				t.Fatalf("Release(%d) = %v, want %v", tt.port, got, tt.wantRelease)
			}
			if a.Has(tt.port) || a.Release(tt.port) {
				t.Fatalf("port %d still allocated after Release", tt.port)
			}
			if tt.allocate {
				if err := a.Allocate(tt.port); err != nil {
					t.Fatalf("re-Allocate(%d) = %v", tt.port, err)
				}
			}
		})
	}
}

func TestRestore(t *testing.T) {
	a := mustParse(t, "30000-32767")
	if err := a.Allocate(32000); err != nil {
		t.Fatal(err)
	}
	ports := []int{31000, 30001, 31000, 32767}
	want := []int{30001, 31000, 32767}
	for round := range 2 {
		if err := a.Restore(ports); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if got := a.Snapshot(); !slices.Equal(got, want) {
			t.Fatalf("round %d: Snapshot = %v, want %v", round, got, want)
		}
		if a.Has(32000) || a.Used() != 3 {
			t.Fatalf("round %d: Restore kept the previous state", round)
		}
		checkInvariants(t, a)
	}
	err := a.Restore([]int{30005, 80})
	if !errors.Is(err, ErrNotInRange) {
		t.Fatalf("Restore with port 80 = %v, want ErrNotInRange", err)
	}
	if want := "80: provided port is not in the valid range. The range of valid ports is 30000-32767"; err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	if got := a.Snapshot(); !slices.Equal(got, []int{30005}) {
		t.Fatalf("Snapshot = %v, want [30005]", got)
	}
}

func TestConcurrentAllocateNext(t *testing.T) {
	const goroutines = 200
	const perGoroutine = 10
	a := mustParse(t, "30000-32767")
	results := make([][]int, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range perGoroutine {
				p, err := a.AllocateNext()
				if err != nil {
					t.Error(err)
					return
				}
				results[g] = append(results[g], p)
				if err := a.Allocate(p); !errors.Is(err, ErrAllocated) {
					t.Errorf("Allocate(%d) of an allocated port = %v", p, err)
				}
			}
		})
	}
	wg.Wait()
	seen := map[int]int{}
	for g, ps := range results {
		for _, p := range ps {
			if prev, dup := seen[p]; dup {
				t.Fatalf("port %d handed to goroutines %d and %d", p, prev, g)
			}
			seen[p] = g
		}
	}
	if len(seen) != goroutines*perGoroutine || a.Used() != len(seen) {
		t.Fatalf("allocated %d distinct, Used() = %d, want %d", len(seen), a.Used(), goroutines*perGoroutine)
	}
}

func BenchmarkAllocateNextHalfFull(b *testing.B) {
	a, err := Parse("30000-32767")
	if err != nil {
		b.Fatal(err)
	}
	for range a.Size() / 2 {
		if _, err := a.AllocateNext(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		p, err := a.AllocateNext()
		if err != nil {
			b.Fatal(err)
		}
		a.Release(p)
	}
}
