package nodeipam

import (
	"errors"
	"net/netip"
	"testing"
)

func TestNewAllocator(t *testing.T) {
	cases := []struct {
		name    string
		cidr    string
		mask    int
		size    int
		wantErr bool
	}{
		{"default /16 into /24", "10.244.0.0/16", 24, 256, false},
		{"unmasked cidr is masked", "10.244.7.9/16", 24, 256, false},
		{"same size", "10.244.0.0/24", 24, 1, false},
		{"mask shorter than cidr", "10.244.0.0/16", 15, 0, true},
		{"mask longer than /30", "10.244.0.0/24", 31, 0, true},
		{"too many subnets", "10.0.0.0/8", 30, 0, true},
		{"ipv6 /48 into /64", "fd00:1::/48", 64, 65536, false},
		{"ipv6 mask past 128", "fd00::/120", 129, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAllocator(netip.MustParsePrefix(tc.cidr), tc.mask)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("want an error, got an allocator of %d", a.Size())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Size() != tc.size || a.Free() != tc.size {
				t.Fatalf("size %d free %d, want %d", a.Size(), a.Free(), tc.size)
			}
		})
	}
}

func TestAllocatorSequence(t *testing.T) {
	cases := []struct {
		name string
		cidr string
		mask int
		want []string
	}{
		{"ipv4 /22 by /24", "10.244.0.0/22", 24, []string{"10.244.0.0/24", "10.244.1.0/24", "10.244.2.0/24", "10.244.3.0/24"}},
		{"ipv4 /24 by /26", "192.168.5.0/24", 26, []string{"192.168.5.0/26", "192.168.5.64/26", "192.168.5.128/26", "192.168.5.192/26"}},
		{"ipv6 /62 by /64", "fd00:10:0:4::/62", 64, []string{"fd00:10:0:4::/64", "fd00:10:0:5::/64", "fd00:10:0:6::/64", "fd00:10:0:7::/64"}},
		{"ipv6 subnet boundary past 64 bits", "fd00::/126", 127, []string{"fd00::/127", "fd00::2/127"}},
		{"ipv6 /63 by /64 above the low word", "fd00:0:0:fffe::/63", 64, []string{"fd00:0:0:fffe::/64", "fd00:0:0:ffff::/64"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := NewAllocator(netip.MustParsePrefix(tc.cidr), tc.mask)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tc.want {
				p, err := a.Allocate()
				if err != nil {
					t.Fatalf("allocation %d: %v", i, err)
				}
				if p.String() != w {
					t.Fatalf("allocation %d = %s, want %s", i, p, w)
				}
				if !a.Contains(p) {
					t.Fatalf("%s not contained", p)
				}
			}
			if _, err := a.Allocate(); !errors.Is(err, ErrFull) {
				t.Fatalf("allocation past the end: %v, want ErrFull", err)
			}
			// Release the second, allocate again: it comes back.
			second := netip.MustParsePrefix(tc.want[1])
			a.Release(second)
			if a.Free() != 1 {
				t.Fatalf("free after release = %d", a.Free())
			}
			p, err := a.Allocate()
			if err != nil || p != second {
				t.Fatalf("after release got %s, %v; want %s", p, err, second)
			}
		})
	}
}

func TestAllocatorOccupy(t *testing.T) {
	a, err := NewAllocator(netip.MustParsePrefix("10.244.0.0/22"), 24)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		p    string
		want error
	}{
		{"in range", "10.244.2.0/24", nil},
		{"twice", "10.244.2.0/24", ErrAllocated},
		{"outside", "10.245.0.0/24", ErrNotInRange},
		{"wrong size", "10.244.1.0/25", ErrNotInRange},
		{"not aligned", "10.244.1.7/24", ErrNotInRange},
		{"other family", "fd00::/24", ErrNotInRange},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := a.Occupy(netip.MustParsePrefix(tc.p))
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Occupy(%s) = %v, want %v", tc.p, err, tc.want)
			}
		})
	}
	// The occupied subnet is skipped.
	var got []string
	for {
		p, err := a.Allocate()
		if err != nil {
			break
		}
		got = append(got, p.String())
	}
	want := []string{"10.244.0.0/24", "10.244.1.0/24", "10.244.3.0/24"}
	if len(got) != len(want) {
		t.Fatalf("allocated %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("allocated %v, want %v", got, want)
		}
	}
	// Releasing a foreign prefix changes nothing.
	a.Release(netip.MustParsePrefix("10.9.0.0/24"))
	if a.Free() != 0 {
		t.Fatalf("free = %d after a foreign release", a.Free())
	}
}
