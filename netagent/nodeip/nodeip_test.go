package nodeip

import (
	"net/netip"
	"testing"
)

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, 0, len(ss))
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestFirstIPv4(t *testing.T) {
	for _, tc := range []struct {
		name string
		ips  []netip.Addr
		want string // "" = none
	}{
		{name: "none given", want: ""},
		{name: "IPv6 only", ips: addrs("fd00::1", "2001:db8::1"), want: ""},
		{name: "first of two", ips: addrs("10.0.0.2", "10.0.0.3"), want: "10.0.0.2"},
		{name: "after an IPv6 one", ips: addrs("fd00::1", "192.168.1.5"), want: "192.168.1.5"},
		{name: "mapped is unmapped", ips: addrs("::ffff:10.1.2.3"), want: "10.1.2.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := FirstIPv4(tc.ips)
			if tc.want == "" {
				if ok {
					t.Fatalf("FirstIPv4 = %v, want none", got)
				}
				return
			}
			if !ok || got != netip.MustParseAddr(tc.want) {
				t.Fatalf("FirstIPv4 = %v, %v; want %s", got, ok, tc.want)
			}
		})
	}
}

func TestFirstGlobalIPv4(t *testing.T) {
	for _, tc := range []struct {
		name  string
		addrs []netip.Addr
		want  string
	}{
		{name: "none", want: ""},
		{name: "loopback and link-local skipped", addrs: addrs("127.0.0.1", "169.254.1.1", "10.0.0.9"), want: "10.0.0.9"},
		{name: "IPv6 skipped", addrs: addrs("2001:db8::1", "172.16.0.4"), want: "172.16.0.4"},
		{name: "mapped", addrs: addrs("::ffff:192.0.2.7"), want: "192.0.2.7"},
		{name: "only unusable", addrs: addrs("127.0.0.1", "0.0.0.0", "224.0.0.1"), want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := firstGlobalIPv4(tc.addrs)
			if tc.want == "" {
				if ok {
					t.Fatalf("firstGlobalIPv4 = %v, want none", got)
				}
				return
			}
			if !ok || got != netip.MustParseAddr(tc.want) {
				t.Fatalf("firstGlobalIPv4 = %v, %v; want %s", got, ok, tc.want)
			}
		})
	}
}
