package dns

import (
	"net/netip"
	"strings"
)

// Name helpers. Query names arrive as miekg presentation strings: absolute
// (trailing dot), with bytes outside letters, digits, '-' and '_' escaped
// ("\." for a dot inside a label, "\DDD" for others). Our own names never
// contain a backslash, so a query name with one cannot match a cluster name.

const (
	v4RevSuffix = ".in-addr.arpa."
	v6RevSuffix = ".ip6.arpa."
)

// dashedAddr is the label form of an address: 10-244-1-5, fd00--5.
func dashedAddr(a netip.Addr) string {
	if a.Is4() {
		var b [15]byte
		out := b[:0]
		v := a.As4()
		for i, o := range v {
			if i > 0 {
				out = append(out, '-')
			}
			out = appendUint8(out, o)
		}
		return string(out)
	}
	return strings.ReplaceAll(a.String(), ":", "-")
}

func appendUint8(b []byte, o byte) []byte {
	switch {
	case o >= 100:
		return append(b, '0'+o/100, '0'+o/10%10, '0'+o%10)
	case o >= 10:
		return append(b, '0'+o/10, '0'+o%10)
	}
	return append(b, '0'+o)
}

// parseDashed parses a dashed address label (10-244-1-5 or fd00--5). It
// accepts only the canonical form that dashedAddr produces, so that one
// address has exactly one pod name.
func parseDashed(s string) (netip.Addr, bool) {
	if a, ok := parseDashedV4(s); ok {
		return a, true
	}
	if strings.IndexByte(s, '-') < 0 || len(s) > 39 {
		return netip.Addr{}, false
	}
	var b [39]byte
	n := copy(b[:], s)
	for i := range n {
		if b[i] == '-' {
			b[i] = ':'
		}
	}
	a, err := netip.ParseAddr(string(b[:n]))
	if err != nil || !a.Is6() || a.Is4In6() || a.Zone() != "" {
		return netip.Addr{}, false
	}
	if dashedAddr(a) != s {
		return netip.Addr{}, false
	}
	return a, true
}

// parseDashedV4 parses "a-b-c-d" without allocating.
func parseDashedV4(s string) (netip.Addr, bool) {
	var v [4]byte
	for i := range 4 {
		o, rest, ok := parseOctet(s)
		if !ok {
			return netip.Addr{}, false
		}
		v[i] = o
		if i < 3 {
			if len(rest) == 0 || rest[0] != '-' {
				return netip.Addr{}, false
			}
			rest = rest[1:]
		} else if rest != "" {
			return netip.Addr{}, false
		}
		s = rest
	}
	return netip.AddrFrom4(v), true
}

// parseOctet parses a decimal 0..255 without leading zeros at the start of s.
func parseOctet(s string) (byte, string, bool) {
	n, i := 0, 0
	for i < len(s) && i < 3 && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		i++
	}
	if i == 0 || n > 255 || (i > 1 && s[0] == '0') {
		return 0, s, false
	}
	return byte(n), s[i:], true
}

// isReverse reports whether the lowercase name is under in-addr.arpa. or
// ip6.arpa.
func isReverse(lname string) bool {
	return strings.HasSuffix(lname, v4RevSuffix) || strings.HasSuffix(lname, v6RevSuffix) ||
		lname == "in-addr.arpa." || lname == "ip6.arpa."
}

// parseReverse parses a complete reverse name (d.c.b.a.in-addr.arpa. or 32
// nibbles then ip6.arpa.) of a lowercase name. Partial names (a whole
// network, such as 244.10.in-addr.arpa.) are not addresses: ok is false.
func parseReverse(lname string) (netip.Addr, bool) {
	if rest, found := strings.CutSuffix(lname, v4RevSuffix); found {
		var v [4]byte
		for i := 3; i >= 0; i-- {
			o, r, ok := parseOctet(rest)
			if !ok {
				return netip.Addr{}, false
			}
			v[i] = o
			if i > 0 {
				if len(r) == 0 || r[0] != '.' {
					return netip.Addr{}, false
				}
				r = r[1:]
			} else if r != "" {
				return netip.Addr{}, false
			}
			rest = r
		}
		return netip.AddrFrom4(v), true
	}
	if rest, found := strings.CutSuffix(lname, v6RevSuffix); found {
		if len(rest) != 63 {
			return netip.Addr{}, false
		}
		var v [16]byte
		for i := range 32 {
			c := rest[2*i]
			if i < 31 && rest[2*i+1] != '.' {
				return netip.Addr{}, false
			}
			var n byte
			switch {
			case c >= '0' && c <= '9':
				n = c - '0'
			case c >= 'a' && c <= 'f':
				n = c - 'a' + 10
			default:
				return netip.Addr{}, false
			}
			// Nibble i counts from the least significant end.
			b := 15 - i/2
			if i%2 == 0 {
				v[b] |= n
			} else {
				v[b] |= n << 4
			}
		}
		return netip.AddrFrom16(v), true
	}
	return netip.Addr{}, false
}

// reverseZone is the reverse zone name of a prefix, rounded down to a label
// boundary (8 bits for IPv4, 4 for IPv6): 10.96.0.0/12 -> 10.in-addr.arpa.
func reverseZone(p netip.Prefix) string {
	p = p.Masked()
	a := p.Addr()
	var sb strings.Builder
	if a.Is4() {
		v := a.As4()
		for i := p.Bits()/8 - 1; i >= 0; i-- {
			sb.Write(appendUint8(nil, v[i]))
			sb.WriteByte('.')
		}
		sb.WriteString("in-addr.arpa.")
		return sb.String()
	}
	v := a.As16()
	const hex = "0123456789abcdef"
	for i := p.Bits()/4 - 1; i >= 0; i-- {
		b := v[i/2]
		if i%2 == 0 {
			b >>= 4
		}
		sb.WriteByte(hex[b&0xf])
		sb.WriteByte('.')
	}
	sb.WriteString("ip6.arpa.")
	return sb.String()
}

// lastLabel splits "a.b.c" into "a.b" and "c"; a single label returns ("", s).
func lastLabel(s string) (rest, last string) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return "", s
	}
	return s[:i], s[i+1:]
}

// firstLabel splits "a.b.c" into "a" and "b.c"; a single label returns (s, "").
func firstLabel(s string) (first, rest string) {
	i := strings.IndexByte(s, '.')
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i+1:]
}

// lowerName returns the lowercase form of a DNS name; for a name already
// lowercase (nearly all) it returns s itself without allocating.
func lowerName(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return lowerASCII(s)
		}
	}
	return s
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
