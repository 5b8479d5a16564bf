package ipalloc

import (
	"errors"
	"net/netip"
	"slices"
	"sync"
	"testing"
)

func mustNew(t testing.TB, cidr string) *Allocator {
	t.Helper()
	a, err := New(netip.MustParsePrefix(cidr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { checkInvariants(t, a) })
	return a
}

// checkInvariants verifies the counters against the bitmap.
func checkInvariants(t testing.TB, a *Allocator) {
	t.Helper()
	snap := a.Snapshot()
	if len(snap) != a.Used() {
		t.Errorf("Snapshot has %d addresses, Used() = %d", len(snap), a.Used())
	}
	if a.Used()+a.Free() != a.Size() {
		t.Errorf("Used %d + Free %d != Size %d", a.Used(), a.Free(), a.Size())
	}
	low := 0
	for _, ip := range snap {
		if !a.Has(ip) {
			t.Errorf("Snapshot lists %s but Has is false", ip)
		}
		if i, _ := a.index(ip); i < a.pool.Offset() {
			low++
		}
	}
	if low != a.pool.LowUsed() {
		t.Errorf("static band holds %d addresses, counter says %d", low, a.pool.LowUsed())
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name       string
		cidr       string
		wantErr    string
		wantCIDR   string
		wantFirst  string
		wantSize   int
		wantStatic int
		wantLast   string // last usable address
	}{
		{name: "default", cidr: "10.96.0.0/12", wantCIDR: "10.96.0.0/12", wantFirst: "10.96.0.1", wantSize: 1<<20 - 2, wantStatic: 256, wantLast: "10.111.255.254"},
		{name: "slash 16", cidr: "10.96.0.0/16", wantCIDR: "10.96.0.0/16", wantFirst: "10.96.0.1", wantSize: 65534, wantStatic: 256, wantLast: "10.96.255.254"},
		{name: "unmasked input is masked", cidr: "10.96.7.9/24", wantCIDR: "10.96.7.0/24", wantFirst: "10.96.7.1", wantSize: 254, wantStatic: 16, wantLast: "10.96.7.254"},
		{name: "slash 20 static band 256", cidr: "192.168.0.0/20", wantCIDR: "192.168.0.0/20", wantFirst: "192.168.0.1", wantSize: 4094, wantStatic: 256, wantLast: "192.168.15.254"},
		{name: "slash 22 static band size/16", cidr: "192.168.0.0/22", wantCIDR: "192.168.0.0/22", wantFirst: "192.168.0.1", wantSize: 1022, wantStatic: 64, wantLast: "192.168.3.254"},
		{name: "slash 27 static band min", cidr: "192.168.1.0/27", wantCIDR: "192.168.1.0/27", wantFirst: "192.168.1.1", wantSize: 30, wantStatic: 16, wantLast: "192.168.1.30"},
		{name: "slash 28 no static band", cidr: "192.168.1.0/28", wantCIDR: "192.168.1.0/28", wantFirst: "192.168.1.1", wantSize: 14, wantStatic: 0, wantLast: "192.168.1.14"},
		{name: "slash 30", cidr: "192.168.1.0/30", wantCIDR: "192.168.1.0/30", wantFirst: "192.168.1.1", wantSize: 2, wantStatic: 0, wantLast: "192.168.1.2"},
		{name: "v6 slash 112 keeps all-ones", cidr: "fd00:10:96::/112", wantCIDR: "fd00:10:96::/112", wantFirst: "fd00:10:96::1", wantSize: 65535, wantStatic: 256, wantLast: "fd00:10:96::ffff"},
		{name: "v6 slash 120", cidr: "fd00::/120", wantCIDR: "fd00::/120", wantFirst: "fd00::1", wantSize: 255, wantStatic: 16, wantLast: "fd00::ff"},
		{name: "v6 slash 64 capped", cidr: "fd00:1:2:3::/64", wantCIDR: "fd00:1:2:3::/64", wantFirst: "fd00:1:2:3::1", wantSize: 1 << 20, wantStatic: 256, wantLast: "fd00:1:2:3::10:0"},
		{name: "v6 slash 127", cidr: "fd00::/127", wantCIDR: "fd00::/127", wantFirst: "fd00::1", wantSize: 1, wantStatic: 0, wantLast: "fd00::1"},
		{name: "v4 slash 31 empty", cidr: "10.0.0.0/31", wantErr: "ipalloc: service CIDR 10.0.0.0/31 has no usable addresses"},
		{name: "v4 slash 32 empty", cidr: "10.0.0.1/32", wantErr: "ipalloc: service CIDR 10.0.0.1/32 has no usable addresses"},
		{name: "v6 slash 128 empty", cidr: "fd00::1/128", wantErr: "ipalloc: service CIDR fd00::1/128 has no usable addresses"},
		{name: "v4 too large", cidr: "10.0.0.0/8", wantErr: "ipalloc: service CIDR 10.0.0.0/8 is too large: an IPv4 prefix must be /12 or longer"},
		{name: "v6 too large", cidr: "fd00::/48", wantErr: "ipalloc: service CIDR fd00::/48 is too large: an IPv6 prefix must be /64 or longer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := New(netip.MustParsePrefix(tt.cidr))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("New(%s) error = %v, want %q", tt.cidr, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := a.CIDR().String(); got != tt.wantCIDR {
				t.Errorf("CIDR() = %s, want %s", got, tt.wantCIDR)
			}
			if got := a.FirstIP().String(); got != tt.wantFirst {
				t.Errorf("FirstIP() = %s, want %s", got, tt.wantFirst)
			}
			if a.Size() != tt.wantSize || a.Free() != tt.wantSize || a.Used() != 0 {
				t.Errorf("Size/Free/Used = %d/%d/%d, want %d/%d/0", a.Size(), a.Free(), a.Used(), tt.wantSize, tt.wantSize)
			}
			if a.pool.Offset() != tt.wantStatic {
				t.Errorf("static band = %d, want %d", a.pool.Offset(), tt.wantStatic)
			}
			last := netip.MustParseAddr(tt.wantLast)
			if !a.InRange(last) || a.InRange(last.Next()) {
				t.Errorf("last usable address is not %s", last)
			}
			if a.InRange(a.FirstIP().Prev()) {
				t.Errorf("network address %s is in range", a.FirstIP().Prev())
			}
			if err := a.Allocate(last); err != nil {
				t.Errorf("Allocate(last %s) = %v", last, err)
			}
		})
	}
	if _, err := New(netip.Prefix{}); err == nil {
		t.Error("New(zero prefix) succeeded")
	}
}

func TestAllocate(t *testing.T) {
	const rangeText = "provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/16"
	tests := []struct {
		name    string
		ip      string
		wantErr error
		text    string
	}{
		{name: "first", ip: "10.96.0.1"},
		{name: "static band", ip: "10.96.0.10"},
		{name: "dynamic band", ip: "10.96.200.7"},
		{name: "last", ip: "10.96.255.254"},
		{name: "ipv4-mapped", ip: "::ffff:10.96.3.3"},
		{name: "network address", ip: "10.96.0.0", wantErr: ErrNotInRange, text: rangeText},
		{name: "broadcast address", ip: "10.96.255.255", wantErr: ErrNotInRange, text: rangeText},
		{name: "outside", ip: "10.97.0.1", wantErr: ErrNotInRange, text: rangeText},
		{name: "other family", ip: "fd00::1", wantErr: ErrNotInRange, text: rangeText},
		{name: "already allocated", ip: "10.96.0.5", wantErr: ErrAllocated, text: "provided IP is already allocated"},
	}
	a := mustNew(t, "10.96.0.0/16")
	if err := a.Allocate(netip.MustParseAddr("10.96.0.5")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ip := netip.MustParseAddr(tt.ip)
			used := a.Used()
			err := a.Allocate(ip)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Allocate(%s) = %v", ip, err)
				}
				if !a.Has(ip) || a.Used() != used+1 {
					t.Fatalf("after Allocate(%s): Has=%v Used=%d (was %d)", ip, a.Has(ip), a.Used(), used)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || err.Error() != tt.text {
				t.Fatalf("Allocate(%s) = %v, want %q (errors.Is %v)", ip, err, tt.text, tt.wantErr)
			}
			if a.Used() != used {
				t.Fatalf("failed Allocate changed Used from %d to %d", used, a.Used())
			}
		})
	}
}

func TestExhaustSmallRange(t *testing.T) {
	a := mustNew(t, "192.168.1.0/28")
	seen := map[netip.Addr]bool{}
	for i := range 14 {
		ip, err := a.AllocateNext()
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if seen[ip] {
			t.Fatalf("%s handed out twice", ip)
		}
		if !a.InRange(ip) {
			t.Fatalf("%s is not in range", ip)
		}
		seen[ip] = true
	}
	ip, err := a.AllocateNext()
	if !errors.Is(err, ErrFull) || err.Error() != "range is full" {
		t.Fatalf("AllocateNext on a full range = %s, %v; want ErrFull", ip, err)
	}
	if a.Free() != 0 || a.Used() != 14 {
		t.Fatalf("Free/Used = %d/%d, want 0/14", a.Free(), a.Used())
	}
	// A release makes exactly that address available again.
	freed := netip.MustParseAddr("192.168.1.7")
	if !a.Release(freed) {
		t.Fatalf("Release(%s) = false", freed)
	}
	if got, err := a.AllocateNext(); err != nil || got != freed {
		t.Fatalf("AllocateNext after release = %s, %v; want %s", got, err, freed)
	}
}

func TestDynamicPrefersUpperBand(t *testing.T) {
	tests := []struct {
		name   string
		cidr   string
		static int
	}{
		{"v4 slash 24", "10.0.0.0/24", 16},
		{"v4 slash 22", "10.0.0.0/22", 64},
		{"v6 slash 120", "fd00::/120", 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustNew(t, tt.cidr)
			band := func(ip netip.Addr) bool { // true for the static band
				i, ok := a.index(ip)
				if !ok {
					t.Fatalf("%s not in range", ip)
				}
				return i < tt.static
			}
			upper := a.Size() - tt.static
			for i := range upper {
				ip, err := a.AllocateNext()
				if err != nil {
					t.Fatal(err)
				}
				if band(ip) {
					t.Fatalf("allocation %d got %s from the static band while the dynamic band had %d free", i, ip, upper-i)
				}
			}
			for i := range tt.static {
				ip, err := a.AllocateNext()
				if err != nil {
					t.Fatal(err)
				}
				if !band(ip) {
					t.Fatalf("allocation %d of the static band got %s", i, ip)
				}
			}
			if _, err := a.AllocateNext(); !errors.Is(err, ErrFull) {
				t.Fatalf("want ErrFull, got %v", err)
			}
			// Freeing one dynamic address sends the next allocation back there.
			var dyn netip.Addr
			for _, ip := range a.Snapshot() {
				if !band(ip) {
					dyn = ip
					break
				}
			}
			a.Release(dyn)
			if got, _ := a.AllocateNext(); got != dyn {
				t.Fatalf("AllocateNext = %s, want the freed %s", got, dyn)
			}
		})
	}
}

func TestDynamicIsRandom(t *testing.T) {
	// Two allocators should not hand out the same first ten addresses; a
	// sequential scan would.
	a, b := mustNew(t, "10.96.0.0/16"), mustNew(t, "10.96.0.0/16")
	same := 0
	for range 10 {
		x, _ := a.AllocateNext()
		y, _ := b.AllocateNext()
		if x == y {
			same++
		}
	}
	if same == 10 {
		t.Fatal("dynamic allocation is not randomized")
	}
}

func TestReleaseAndReallocate(t *testing.T) {
	tests := []struct {
		name        string
		ip          string
		allocate    bool
		wantRelease bool
	}{
		{"allocated", "10.0.0.40", true, true},
		{"free", "10.0.0.41", false, false},
		{"out of range", "10.1.0.1", false, false},
		{"network", "10.0.0.0", false, false},
	}
	a := mustNew(t, "10.0.0.0/24")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ip := netip.MustParseAddr(tt.ip)
			if tt.allocate {
				if err := a.Allocate(ip); err != nil {
					t.Fatal(err)
				}
			}
			if got := a.Release(ip); got != tt.wantRelease {
				t.Fatalf("Release(%s) = %v, want %v", ip, got, tt.wantRelease)
			}
			if a.Has(ip) {
				t.Fatalf("Has(%s) after Release", ip)
			}
			if a.Release(ip) {
				t.Fatalf("second Release(%s) = true", ip)
			}
			if tt.allocate {
				if err := a.Allocate(ip); err != nil {
					t.Fatalf("re-Allocate(%s) = %v", ip, err)
				}
			}
		})
	}
}

func TestRestore(t *testing.T) {
	a := mustNew(t, "10.96.0.0/24")
	if err := a.Allocate(netip.MustParseAddr("10.96.0.200")); err != nil {
		t.Fatal(err)
	}
	ips := []netip.Addr{
		netip.MustParseAddr("10.96.0.1"),
		netip.MustParseAddr("10.96.0.77"),
		netip.MustParseAddr("10.96.0.77"), // duplicate
		netip.MustParseAddr("10.96.0.10"),
	}
	want := []netip.Addr{
		netip.MustParseAddr("10.96.0.1"),
		netip.MustParseAddr("10.96.0.10"),
		netip.MustParseAddr("10.96.0.77"),
	}
	for round := range 2 {
		if err := a.Restore(ips); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if got := a.Snapshot(); !slices.Equal(got, want) {
			t.Fatalf("round %d: Snapshot = %v, want %v", round, got, want)
		}
		if a.Used() != 3 || a.Has(netip.MustParseAddr("10.96.0.200")) {
			t.Fatalf("round %d: Restore kept the previous state", round)
		}
		checkInvariants(t, a)
	}
	// Restoring from a Snapshot is a no-op.
	if err := a.Restore(a.Snapshot()); err != nil || !slices.Equal(a.Snapshot(), want) {
		t.Fatalf("Restore(Snapshot()) changed the state: %v", err)
	}
	// Out-of-range addresses are reported and skipped; the rest restored.
	err := a.Restore([]netip.Addr{netip.MustParseAddr("10.96.0.5"), netip.MustParseAddr("10.97.0.5")})
	if !errors.Is(err, ErrNotInRange) {
		t.Fatalf("Restore with an out-of-range address = %v, want ErrNotInRange", err)
	}
	if want := "10.97.0.5: provided IP is not in the valid range. The range of valid IPs is 10.96.0.0/24"; err.Error() != want {
		t.Fatalf("error text %q, want %q", err, want)
	}
	if got := a.Snapshot(); len(got) != 1 || got[0] != netip.MustParseAddr("10.96.0.5") {
		t.Fatalf("Snapshot = %v, want [10.96.0.5]", got)
	}
	if err := a.Restore(nil); err != nil || a.Used() != 0 {
		t.Fatalf("Restore(nil): err %v, Used %d", err, a.Used())
	}
}

func TestSnapshotV6(t *testing.T) {
	a := mustNew(t, "fd00:1:2:3::/64")
	ips := []netip.Addr{
		netip.MustParseAddr("fd00:1:2:3::1"),
		netip.MustParseAddr("fd00:1:2:3::ab"),
		netip.MustParseAddr("fd00:1:2:3::10:0"),
	}
	for _, ip := range ips {
		if err := a.Allocate(ip); err != nil {
			t.Fatalf("Allocate(%s) = %v", ip, err)
		}
	}
	if got := a.Snapshot(); !slices.Equal(got, ips) {
		t.Fatalf("Snapshot = %v, want %v", got, ips)
	}
	// Past the 2^20 cap.
	if err := a.Allocate(netip.MustParseAddr("fd00:1:2:3::10:1")); !errors.Is(err, ErrNotInRange) {
		t.Fatalf("Allocate past the cap = %v, want ErrNotInRange", err)
	}
	ip, err := a.AllocateNext()
	if err != nil || !a.CIDR().Contains(ip) {
		t.Fatalf("AllocateNext = %s, %v", ip, err)
	}
}

func TestConcurrentAllocateNext(t *testing.T) {
	const goroutines = 200
	const perGoroutine = 20
	a := mustNew(t, "10.96.0.0/16")
	results := make([][]netip.Addr, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for range perGoroutine {
				ip, err := a.AllocateNext()
				if err != nil {
					t.Error(err)
					return
				}
				results[g] = append(results[g], ip)
				// Mix in reads and specific allocations of taken addresses.
				if !a.Has(ip) {
					t.Errorf("Has(%s) false right after allocating it", ip)
				}
				if err := a.Allocate(ip); !errors.Is(err, ErrAllocated) {
					t.Errorf("Allocate(%s) of an allocated address = %v", ip, err)
				}
			}
		})
	}
	wg.Wait()
	seen := map[netip.Addr]int{}
	for g, ips := range results {
		for _, ip := range ips {
			if prev, dup := seen[ip]; dup {
				t.Fatalf("%s handed to goroutines %d and %d", ip, prev, g)
			}
			seen[ip] = g
		}
	}
	if len(seen) != goroutines*perGoroutine || a.Used() != len(seen) {
		t.Fatalf("allocated %d distinct, Used() = %d, want %d", len(seen), a.Used(), goroutines*perGoroutine)
	}
}

func benchmarkHalfFull(b *testing.B, cidr string) {
	a, err := New(netip.MustParsePrefix(cidr))
	if err != nil {
		b.Fatal(err)
	}
	for range a.Size() / 2 {
		if _, err := a.AllocateNext(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ip, err := a.AllocateNext()
		if err != nil {
			b.Fatal(err)
		}
		a.Release(ip)
	}
}

func BenchmarkAllocateNext16HalfFull(b *testing.B) { benchmarkHalfFull(b, "10.96.0.0/16") }
func BenchmarkAllocateNext12HalfFull(b *testing.B) { benchmarkHalfFull(b, "10.96.0.0/12") }
