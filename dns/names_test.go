package dns

import (
	"net/netip"
	"testing"

	mdns "github.com/miekg/dns"
)

func TestDashed(t *testing.T) {
	tests := []struct {
		name  string
		label string
		addr  string // "" when the label is no address
	}{
		{"IPv4", "10-244-1-5", "10.244.1.5"},
		{"IPv4 zeros", "0-0-0-0", "0.0.0.0"},
		{"IPv4 max", "255-255-255-255", "255.255.255.255"},
		{"IPv6", "fd00-244--3", "fd00:244::3"},
		{"IPv6 full", "2001-db8-1-2-3-4-5-6", "2001:db8:1:2:3:4:5:6"},
		{"leading zero", "10-244-01-5", ""},
		{"octet too big", "10-244-256-5", ""},
		{"three octets", "10-244-1", ""},
		{"five octets", "10-244-1-5-6", ""},
		{"trailing dash", "10-244-1-5-", ""},
		{"not a number", "web-0", ""},
		{"empty", "", ""},
		{"IPv6 non-canonical", "fd00-0244--3", ""},
		{"IPv6 uppercase", "FD00-244--3", ""},
		{"IPv4-mapped", "--ffff-a00-1", ""},
		{"IPv6 that looks mapped", "--ffff-10-0-0-1", "::ffff:10:0:0:1"},
		{"dotted", "10.244.1.5", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := parseDashed(tc.label)
			if tc.addr == "" {
				if ok {
					t.Fatalf("parseDashed(%q) = %v, want no address", tc.label, a)
				}
				return
			}
			if !ok || a != netip.MustParseAddr(tc.addr) {
				t.Fatalf("parseDashed(%q) = %v %v, want %s", tc.label, a, ok, tc.addr)
			}
			if got := dashedAddr(a); got != tc.label {
				t.Errorf("dashedAddr(%v) = %q, want %q", a, got, tc.label)
			}
		})
	}
}

func TestParseReverse(t *testing.T) {
	tests := []struct {
		name  string
		rname string
		addr  string
	}{
		{"IPv4", "10.0.96.10.in-addr.arpa.", "10.96.0.10"},
		{"IPv4 zero", "0.0.0.0.in-addr.arpa.", "0.0.0.0"},
		{"IPv4 partial", "96.10.in-addr.arpa.", ""},
		{"IPv4 too long", "1.10.0.96.10.in-addr.arpa.", ""},
		{"IPv4 leading zero", "010.0.96.10.in-addr.arpa.", ""},
		{"IPv4 big octet", "300.0.96.10.in-addr.arpa.", ""},
		{"IPv4 empty label", ".0.96.10.in-addr.arpa.", ""},
		{"IPv6", "0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.0.d.f.ip6.arpa.", "fd00:96::10"},
		{"IPv6 partial", "0.0.0.0.d.f.ip6.arpa.", ""},
		{"IPv6 bad nibble", "g.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.0.d.f.ip6.arpa.", ""},
		{"IPv6 two-char label", "01.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.0.d.f.ip6.arpa.", ""},
		{"not reverse", "example.org.", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := parseReverse(tc.rname)
			if tc.addr == "" {
				if ok {
					t.Fatalf("parseReverse(%q) = %v, want none", tc.rname, a)
				}
				return
			}
			want := netip.MustParseAddr(tc.addr)
			if !ok || a != want {
				t.Fatalf("parseReverse(%q) = %v %v, want %v", tc.rname, a, ok, want)
			}
			// miekg's ReverseAddr is the inverse.
			if r, err := mdns.ReverseAddr(tc.addr); err != nil || r != tc.rname {
				t.Errorf("ReverseAddr(%s) = %q, want %q", tc.addr, r, tc.rname)
			}
		})
	}
}

func TestReverseZone(t *testing.T) {
	tests := []struct {
		prefix string
		zone   string
	}{
		{"10.96.0.0/12", "10.in-addr.arpa."},
		{"10.96.0.0/16", "96.10.in-addr.arpa."},
		{"10.244.1.0/24", "1.244.10.in-addr.arpa."},
		{"10.244.1.7/32", "7.1.244.10.in-addr.arpa."},
		{"0.0.0.0/0", "in-addr.arpa."},
		{"fd00:96::/112", "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.0.d.f.ip6.arpa."},
		{"fd00::/8", "d.f.ip6.arpa."},
		{"fd00::/6", "f.ip6.arpa."},
	}
	for _, tc := range tests {
		t.Run(tc.prefix, func(t *testing.T) {
			if got := reverseZone(netip.MustParsePrefix(tc.prefix)); got != tc.zone {
				t.Errorf("reverseZone(%s) = %q, want %q", tc.prefix, got, tc.zone)
			}
		})
	}
}

func TestLowerName(t *testing.T) {
	for in, want := range map[string]string{
		"web.default.":  "web.default.",
		"WEB.Default.":  "web.default.",
		`a\065b.`:       `a\065b.`,
		"\u00c9xample.": "\u00c9xample.", // only ASCII folds, as in DNS
	} {
		if got := lowerName(in); got != want {
			t.Errorf("lowerName(%q) = %q, want %q", in, got, want)
		}
	}
	s := "already.lower."
	if n := testing.AllocsPerRun(100, func() { _ = lowerName(s) }); n != 0 {
		t.Errorf("lowerName of a lowercase name allocates %v times", n)
	}
}

func TestValidHostname(t *testing.T) {
	long := ""
	for range 64 {
		long += "a"
	}
	tests := []struct {
		name string
		want bool
	}{
		{"www.example.com.", true},
		{"_sip._udp.example.com.", true},
		{"a.", true},
		{".", false},
		{"www.example.com", false},
		{"a..b.", false},
		{"not a name.", false},
		{"UPPER.example.", false}, // callers lowercase first
		{long + ".example.", false},
		{`a\.b.`, false},
	}
	for _, tc := range tests {
		if got := validHostname(tc.name); got != tc.want {
			t.Errorf("validHostname(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
