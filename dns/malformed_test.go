package dns

import (
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

// Hand-built packets, so that the server sees exactly the bytes a broken or
// hostile client sends.

func header(id, flags, qd, an, ns, ar uint16) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint16(b[0:], id)
	binary.BigEndian.PutUint16(b[2:], flags)
	binary.BigEndian.PutUint16(b[4:], qd)
	binary.BigEndian.PutUint16(b[6:], an)
	binary.BigEndian.PutUint16(b[8:], ns)
	binary.BigEndian.PutUint16(b[10:], ar)
	return b
}

func wireName(name string) []byte {
	var b []byte
	for _, l := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if l == "" {
			continue
		}
		b = append(b, byte(len(l)))
		b = append(b, l...)
	}
	return append(b, 0)
}

func question(name string, qtype, qclass uint16) []byte {
	b := wireName(name)
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(b, qtype), qclass)
}

// opt is an OPT record: size, extended rcode 0, version, flags.
func opt(name []byte, size uint16, version byte) []byte {
	b := append([]byte{}, name...)
	b = binary.BigEndian.AppendUint16(b, mdns.TypeOPT)
	b = binary.BigEndian.AppendUint16(b, size)
	b = append(b, 0, version, 0, 0) // TTL: ext rcode, version, flags
	return binary.BigEndian.AppendUint16(b, 0)
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

const opQuery, opStatus, opNotify, opUpdate = 0, 2 << 11, 4 << 11, 5 << 11
const flagRD, flagQR = 1 << 8, 1 << 15

// rawExchange sends pkt and returns the first response whose ID is id.
func rawExchange(t *testing.T, network, addr string, pkt []byte) *mdns.Msg {
	t.Helper()
	c, err := net.Dial(network, addr)
	must(t, err)
	defer c.Close()
	must(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	if network == "tcp" {
		pkt = append(binary.BigEndian.AppendUint16(nil, uint16(len(pkt))), pkt...)
	}
	_, err = c.Write(pkt)
	must(t, err)
	buf := make([]byte, 65536)
	var n int
	if network == "tcp" {
		if _, err := readFull(c, buf[:2]); err != nil {
			t.Fatalf("read length: %v", err)
		}
		l := int(binary.BigEndian.Uint16(buf))
		n, err = readFull(c, buf[:l])
	} else {
		n, err = c.Read(buf)
	}
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	m := new(mdns.Msg)
	if err := m.Unpack(buf[:n]); err != nil {
		t.Fatalf("unpack response: %v", err)
	}
	return m
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := c.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func TestMalformed(t *testing.T) {
	ts := startServer(t, Config{}, fixtureStore(t))
	q := question("web.default.svc.cluster.local.", mdns.TypeA, mdns.ClassINET)
	long := strings.Repeat(strings.Repeat("a", 63)+".", 5)              // 320 bytes: over the 255 limit
	loop := cat([]byte{3, 'w', 'e', 'b', 0xC0, 12}, []byte{0, 1, 0, 1}) // pointer back to itself

	tests := []struct {
		name  string
		pkt   []byte
		rcode int
	}{
		{"no question", header(1, opQuery|flagRD, 0, 0, 0, 0), mdns.RcodeFormatError},
		{"two questions", cat(header(2, opQuery, 2, 0, 0, 0), q, q), mdns.RcodeFormatError},
		{"question count without a question", header(3, opQuery, 1, 0, 0, 0), mdns.RcodeFormatError},
		{"truncated question", cat(header(4, opQuery, 1, 0, 0, 0), q[:10]), mdns.RcodeFormatError},
		{"name over 255 bytes", cat(header(5, opQuery, 1, 0, 0, 0), question(long, mdns.TypeA, mdns.ClassINET)), mdns.RcodeFormatError},
		{"compression loop", cat(header(6, opQuery, 1, 0, 0, 0), loop), mdns.RcodeFormatError},
		{"extended label type", cat(header(7, opQuery, 1, 0, 0, 0), []byte{0x41, 0, 0, 1, 0, 1}), mdns.RcodeFormatError},
		{"too many additional records", cat(header(8, opQuery, 1, 0, 0, 3), q), mdns.RcodeFormatError},
		{"STATUS opcode", cat(header(9, opStatus, 1, 0, 0, 0), q), mdns.RcodeNotImplemented},
		{"NOTIFY opcode", cat(header(10, opNotify, 1, 0, 0, 0), q), mdns.RcodeNotImplemented},
		{"UPDATE opcode", cat(header(11, opUpdate, 1, 0, 0, 0), q), mdns.RcodeNotImplemented},
		{"CHAOS class", cat(header(12, opQuery, 1, 0, 0, 0), question("version.bind.", mdns.TypeTXT, mdns.ClassCHAOS)), mdns.RcodeRefused},
		{"ANY class", cat(header(13, opQuery, 1, 0, 0, 0), question("web.default.svc.cluster.local.", mdns.TypeA, mdns.ClassANY)), mdns.RcodeNotImplemented},
		{"AXFR", cat(header(14, opQuery, 1, 0, 0, 0), question("cluster.local.", mdns.TypeAXFR, mdns.ClassINET)), mdns.RcodeRefused},
		{"OPT as question type", cat(header(15, opQuery, 1, 0, 0, 0), question("cluster.local.", mdns.TypeOPT, mdns.ClassINET)), mdns.RcodeFormatError},
		{"EDNS version 1", cat(header(16, opQuery, 1, 0, 0, 1), q, opt([]byte{0}, 1232, 1)), mdns.RcodeBadVers},
		{"two OPT records", cat(header(17, opQuery, 1, 0, 0, 2), q, opt([]byte{0}, 1232, 0), opt([]byte{0}, 1232, 0)), mdns.RcodeFormatError},
		{"OPT not at the root", cat(header(18, opQuery, 1, 0, 0, 1), q, opt(wireName("x."), 1232, 0)), mdns.RcodeFormatError},
		{"a good query still works", cat(header(19, opQuery, 1, 0, 0, 0), q), mdns.RcodeSuccess},
	}
	for _, network := range []string{"udp", "tcp"} {
		for _, tc := range tests {
			t.Run(network+"/"+tc.name, func(t *testing.T) {
				r := rawExchange(t, network, map[string]string{"udp": ts.udpAddr, "tcp": ts.tcpAddr}[network], tc.pkt)
				id := binary.BigEndian.Uint16(tc.pkt)
				if r.Id != id || !r.Response {
					t.Errorf("id %d qr %v, want id %d qr", r.Id, r.Response, id)
				}
				if r.Rcode != tc.rcode {
					t.Errorf("rcode %s, want %s", mdns.RcodeToString[r.Rcode], mdns.RcodeToString[tc.rcode])
				}
				if tc.rcode != mdns.RcodeSuccess && len(r.Answer) != 0 {
					t.Errorf("error response carries answers: %v", r.Answer)
				}
				if tc.rcode == mdns.RcodeBadVers && r.IsEdns0() == nil {
					t.Error("BADVERS without OPT")
				}
			})
		}
	}
}

// TestIgnored: responses and runt packets get no answer at all (an answer
// to an answer is how reflection loops start). The test sends the bad packet
// and then a good query on the same socket: the first reply must be the
// good query's.
func TestIgnored(t *testing.T) {
	ts := startServer(t, Config{}, fixtureStore(t))
	q := question("web.default.svc.cluster.local.", mdns.TypeA, mdns.ClassINET)
	tests := []struct {
		name string
		pkt  []byte
	}{
		{"response bit set", cat(header(100, flagQR, 1, 0, 0, 0), q)},
		{"runt", []byte{0, 101, 1, 0, 0}},
		{"empty", []byte{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("udp", ts.udpAddr)
			must(t, err)
			defer c.Close()
			must(t, c.SetDeadline(time.Now().Add(5*time.Second)))
			_, err = c.Write(tc.pkt)
			must(t, err)
			_, err = c.Write(cat(header(4242, opQuery, 1, 0, 0, 0), q))
			must(t, err)
			buf := make([]byte, 4096)
			n, err := c.Read(buf)
			must(t, err)
			m := new(mdns.Msg)
			must(t, m.Unpack(buf[:n]))
			if m.Id != 4242 {
				t.Errorf("first reply has id %d: the bad packet was answered", m.Id)
			}
		})
	}
}
