package hardening

import (
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/skiff-dev/skiff/server/servertest"
)

// Wire builders of the malformed-packet set: the server must see exactly
// the bytes a broken or hostile client sends.

func dnsHeader(id, flags, qd, an, ns, ar uint16) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint16(b[0:], id)
	binary.BigEndian.PutUint16(b[2:], flags)
	binary.BigEndian.PutUint16(b[4:], qd)
	binary.BigEndian.PutUint16(b[6:], an)
	binary.BigEndian.PutUint16(b[8:], ns)
	binary.BigEndian.PutUint16(b[10:], ar)
	return b
}

func dnsName(name string) []byte {
	var b []byte
	for l := range strings.SplitSeq(strings.TrimSuffix(name, "."), ".") {
		if l != "" {
			b = append(b, byte(len(l)))
			b = append(b, l...)
		}
	}
	return append(b, 0)
}

func dnsQuestion(name []byte, qtype, qclass uint16) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(slices.Clone(name), qtype), qclass)
}

// dnsOPT is an OPT record at name with UDP size, version, flags and raw
// option data (rdlen is len(data) unless rdlen >= 0).
func dnsOPT(name []byte, size uint16, version byte, flags uint16, data []byte, rdlen int) []byte {
	b := slices.Clone(name)
	b = binary.BigEndian.AppendUint16(b, mdns.TypeOPT)
	b = binary.BigEndian.AppendUint16(b, size)
	b = append(b, 0, version)
	b = binary.BigEndian.AppendUint16(b, flags)
	if rdlen < 0 {
		rdlen = len(data)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(rdlen))
	return append(b, data...)
}

func dnsCat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

const (
	dnsValidName = "kubernetes.default.svc.cluster.local."
	dnsValidID   = 0xBEEF
	dnsFlagQR    = 1 << 15
	dnsFlagRD    = 1 << 8
	dnsFlagTC    = 1 << 9
)

func dnsOpcode(op uint16) uint16 { return op << 11 }

// dnsMalformed is the probe's malformed-packet set. None has the ID of
// the valid query that follows it.
func dnsMalformed() []struct {
	name string
	pkt  []byte
} {
	qname := dnsName(dnsValidName)
	q := dnsQuestion(qname, mdns.TypeA, mdns.ClassINET)
	good := dnsCat(dnsHeader(1, dnsFlagRD, 1, 0, 0, 0), q)
	rootOPT := func(size uint16, ver byte, flags uint16, data []byte, rdlen int) []byte {
		return dnsOPT([]byte{0}, size, ver, flags, data, rdlen)
	}
	label63 := strings.Repeat("a", 63)
	var out []struct {
		name string
		pkt  []byte
	}
	add := func(name string, pkt []byte) {
		out = append(out, struct {
			name string
			pkt  []byte
		}{name, pkt})
	}

	// Zero length and truncated headers.
	add("zero length", []byte{})
	for _, n := range []int{1, 2, 5, 11} {
		add("header of "+itoa(n)+" bytes", good[:n])
	}
	// Counts that lie.
	add("no question", dnsHeader(2, dnsFlagRD, 0, 0, 0, 0))
	add("qdcount 1, no question", dnsHeader(3, 0, 1, 0, 0, 0))
	add("qdcount 2, one question", dnsCat(dnsHeader(4, 0, 2, 0, 0, 0), q))
	add("qdcount 2, two questions", dnsCat(dnsHeader(5, 0, 2, 0, 0, 0), q, q))
	add("qdcount 65535", dnsCat(dnsHeader(6, 0, 65535, 0, 0, 0), q))
	add("ancount 65535", dnsCat(dnsHeader(7, 0, 1, 65535, 0, 0), q))
	add("nscount 65535", dnsCat(dnsHeader(8, 0, 1, 0, 65535, 0), q))
	add("arcount 65535", dnsCat(dnsHeader(9, 0, 1, 0, 0, 65535), q))
	// Truncated questions.
	for _, cut := range []int{1, 11, len(qname) - 1, len(qname), len(qname) + 3} {
		add("question cut at "+itoa(cut), dnsCat(dnsHeader(uint16(10+cut), 0, 1, 0, 0, 0), q[:cut]))
	}
	add("trailing garbage after the question", dnsCat(dnsHeader(20, 0, 1, 0, 0, 0), q, []byte{0xde, 0xad, 0xbe, 0xef}))
	// Labels.
	add("label length 64 (extended label type)", dnsCat(dnsHeader(21, 0, 1, 0, 0, 0), []byte{0x40}, make([]byte, 64), []byte{0, 0, 1, 0, 1}))
	add("label type 0x80 (reserved)", dnsCat(dnsHeader(22, 0, 1, 0, 0, 0), []byte{0x80, 'a', 0, 0, 1, 0, 1}))
	add("label longer than the packet", dnsCat(dnsHeader(23, 0, 1, 0, 0, 0), []byte{63, 'a', 'b'}))
	add("NUL inside a label", dnsCat(dnsHeader(24, 0, 1, 0, 0, 0), dnsQuestion([]byte{3, 'a', 0, 'b', 0}, mdns.TypeA, mdns.ClassINET)))
	add("dot inside a label", dnsCat(dnsHeader(25, 0, 1, 0, 0, 0), dnsQuestion([]byte{3, 'a', '.', 'b', 7, 'c', 'l', 'u', 's', 't', 'e', 'r', 5, 'l', 'o', 'c', 'a', 'l', 0}, mdns.TypeA, mdns.ClassINET)))
	add("binary label", dnsCat(dnsHeader(26, 0, 1, 0, 0, 0), dnsQuestion([]byte{4, 0xff, 0xfe, 0x00, 0x01, 0}, mdns.TypeA, mdns.ClassINET)))
	add("name of 257 bytes", dnsCat(dnsHeader(27, 0, 1, 0, 0, 0), dnsQuestion(dnsName(strings.Repeat(label63+".", 4)), mdns.TypeA, mdns.ClassINET)))
	add("name of 128 one-byte labels", dnsCat(dnsHeader(28, 0, 1, 0, 0, 0), dnsQuestion(dnsName(strings.Repeat("a.", 128)), mdns.TypeA, mdns.ClassINET)))
	add("longest legal name, in the zone", dnsCat(dnsHeader(29, 0, 1, 0, 0, 0), dnsQuestion(dnsName(strings.Repeat("a.", 113)+"svc.cluster.local."), mdns.TypeA, mdns.ClassINET)))
	// Compression pointers.
	add("pointer to itself", dnsCat(dnsHeader(30, 0, 1, 0, 0, 0), []byte{0xC0, 12, 0, 1, 0, 1}))
	add("pointer loop through a label", dnsCat(dnsHeader(31, 0, 1, 0, 0, 0), []byte{3, 'w', 'e', 'b', 0xC0, 12, 0, 1, 0, 1}))
	add("two pointers pointing at each other", dnsCat(dnsHeader(32, 0, 1, 0, 0, 0), []byte{0xC0, 14, 0xC0, 12, 0, 1, 0, 1}))
	add("pointer past the end", dnsCat(dnsHeader(33, 0, 1, 0, 0, 0), []byte{0xC0, 0xFF, 0, 1, 0, 1}))
	add("pointer to offset 0x3FFF", dnsCat(dnsHeader(34, 0, 1, 0, 0, 0), []byte{0xFF, 0xFF, 0, 1, 0, 1}))
	add("pointer into the header", dnsCat(dnsHeader(35, 0, 1, 0, 0, 0), []byte{0xC0, 2, 0, 1, 0, 1}))
	add("pointer cut after one byte", dnsCat(dnsHeader(36, 0, 1, 0, 0, 0), []byte{0xC0}))
	add("pointer forward", dnsCat(dnsHeader(37, 0, 1, 0, 0, 0), []byte{0xC0, 18, 0, 1, 0, 1}, qname))
	chain := []byte{}
	for i := range 60 { // each pointer points at the one before
		chain = append(chain, 0xC0, byte(12+2*max(i-1, 0)))
	}
	add("chain of 60 pointers", dnsCat(dnsHeader(38, 0, 1, 0, 0, 0), chain, []byte{0, 1, 0, 1}))
	// Types and classes.
	add("qtype ANY", dnsCat(dnsHeader(40, dnsFlagRD, 1, 0, 0, 0), dnsQuestion(qname, mdns.TypeANY, mdns.ClassINET)))
	add("AXFR", dnsCat(dnsHeader(41, 0, 1, 0, 0, 0), dnsQuestion(dnsName("cluster.local."), mdns.TypeAXFR, mdns.ClassINET)))
	add("IXFR", dnsCat(dnsHeader(42, 0, 1, 0, 0, 0), dnsQuestion(dnsName("cluster.local."), mdns.TypeIXFR, mdns.ClassINET)))
	add("qtype 0", dnsCat(dnsHeader(43, 0, 1, 0, 0, 0), dnsQuestion(qname, 0, mdns.ClassINET)))
	add("qtype 65535", dnsCat(dnsHeader(44, 0, 1, 0, 0, 0), dnsQuestion(qname, 65535, mdns.ClassINET)))
	add("qtype OPT", dnsCat(dnsHeader(45, 0, 1, 0, 0, 0), dnsQuestion(qname, mdns.TypeOPT, mdns.ClassINET)))
	add("qtype MAILB", dnsCat(dnsHeader(46, 0, 1, 0, 0, 0), dnsQuestion(qname, mdns.TypeMAILB, mdns.ClassINET)))
	add("class 0", dnsCat(dnsHeader(47, 0, 1, 0, 0, 0), dnsQuestion(qname, mdns.TypeA, 0)))
	add("class ANY", dnsCat(dnsHeader(48, 0, 1, 0, 0, 0), dnsQuestion(qname, mdns.TypeA, mdns.ClassANY)))
	add("class CHAOS version.bind", dnsCat(dnsHeader(49, 0, 1, 0, 0, 0), dnsQuestion(dnsName("version.bind."), mdns.TypeTXT, mdns.ClassCHAOS)))
	add("class NONE", dnsCat(dnsHeader(50, 0, 1, 0, 0, 0), dnsQuestion(qname, mdns.TypeA, mdns.ClassNONE)))
	// Opcodes and flags.
	for _, op := range []uint16{1, 2, 3, 4, 5, 15} {
		add("opcode "+itoa(int(op)), dnsCat(dnsHeader(51+op, dnsOpcode(op), 1, 0, 0, 0), q))
	}
	add("QR set (a response)", dnsCat(dnsHeader(70, dnsFlagQR, 1, 0, 0, 0), q))
	add("QR set, error rcode", dnsCat(dnsHeader(71, dnsFlagQR|3, 1, 1, 0, 0), q))
	add("TC set in a query", dnsCat(dnsHeader(72, dnsFlagTC, 1, 0, 0, 0), q))
	add("Z bit and an rcode in a query", dnsCat(dnsHeader(73, 1<<6|5, 1, 0, 0, 0), q))
	// EDNS.
	add("EDNS version 1", dnsCat(dnsHeader(80, 0, 1, 0, 0, 1), q, rootOPT(1232, 1, 0, nil, -1)))
	add("EDNS version 255", dnsCat(dnsHeader(81, 0, 1, 0, 0, 1), q, rootOPT(1232, 255, 0, nil, -1)))
	add("two OPT records", dnsCat(dnsHeader(82, 0, 1, 0, 0, 2), q, rootOPT(1232, 0, 0, nil, -1), rootOPT(1232, 0, 0, nil, -1)))
	add("OPT not at the root", dnsCat(dnsHeader(83, 0, 1, 0, 0, 1), q, dnsOPT(dnsName("x."), 1232, 0, 0, nil, -1)))
	add("OPT rdlen past the end", dnsCat(dnsHeader(84, 0, 1, 0, 0, 1), q, rootOPT(1232, 0, 0, nil, 500)))
	add("OPT option longer than its rdata", dnsCat(dnsHeader(85, 0, 1, 0, 0, 1), q, rootOPT(1232, 0, 0, []byte{0xFF, 0xFF, 0x07, 0xD0, 1, 2}, -1)))
	add("OPT client subnet of one byte", dnsCat(dnsHeader(86, 0, 1, 0, 0, 1), q, rootOPT(1232, 0, 0, []byte{0, 8, 0, 1, 0}, -1)))
	add("OPT client subnet prefix 200", dnsCat(dnsHeader(87, 0, 1, 0, 0, 1), q, rootOPT(1232, 0, 0, []byte{0, 8, 0, 8, 0, 1, 200, 0, 10, 0, 0, 1}, -1)))
	add("OPT cookie of 3 bytes", dnsCat(dnsHeader(88, 0, 1, 0, 0, 1), q, rootOPT(1232, 0, 0, []byte{0, 10, 0, 3, 1, 2, 3}, -1)))
	add("OPT UDP size 0", dnsCat(dnsHeader(89, 0, 1, 0, 0, 1), q, rootOPT(0, 0, 0, nil, -1)))
	add("OPT UDP size 65535, DO set", dnsCat(dnsHeader(90, 0, 1, 0, 0, 1), q, rootOPT(65535, 0, 1<<15, nil, -1)))
	add("OPT in the answer section", dnsCat(dnsHeader(91, 0, 1, 1, 0, 0), q, rootOPT(1232, 0, 0, nil, -1)))
	add("OPT random option data", dnsCat(dnsHeader(92, 0, 1, 0, 0, 1), q, rootOPT(1232, 0, 0, regressRandom(93, 40), -1)))
	// Other sections.
	add("answer record rdlen past the end", dnsCat(dnsHeader(94, 0, 1, 1, 0, 0), q, []byte{0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 200, 1, 2}))
	add("authority record cut short", dnsCat(dnsHeader(95, 0, 1, 0, 1, 0), q, []byte{0xC0, 12, 0, 2}))
	add("additional A record of 100 bytes", dnsCat(dnsHeader(96, 0, 1, 0, 0, 1), q, []byte{0, 0, 1, 0, 1, 0, 0, 0, 60, 0, 100}, make([]byte, 100)))
	// Random bytes (fixed seeds: the same set every run).
	for i, n := range []int{12, 13, 17, 40, 100, 300, 512, 1500} {
		b := regressRandom(uint64(100+i), n)
		if binary.BigEndian.Uint16(b) == dnsValidID {
			b[0] ^= 0xFF
		}
		add("random "+itoa(n)+" bytes", b)
	}
	add("random after a good header", dnsCat(dnsHeader(97, 0, 1, 0, 0, 0), regressRandom(98, 200)))
	add("4000 zero bytes", dnsCat(dnsHeader(99, 0, 1, 0, 0, 0), make([]byte, 4000)))
	return out
}

// regressRandom is n bytes from a fixed seed.
func regressRandom(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// dnsAllowed are the answers a malformed query may get.
var dnsAllowed = map[int]bool{
	mdns.RcodeSuccess: true, mdns.RcodeFormatError: true, mdns.RcodeServerFailure: true,
	mdns.RcodeNameError: true, mdns.RcodeNotImplemented: true, mdns.RcodeRefused: true,
	mdns.RcodeBadVers: true,
}

// dnsWant is the rcode of the packets whose answer is not a matter of
// judgement (as dns/malformed_test.go has it for the handler alone).
var dnsWant = map[string]int{
	"no question":                         mdns.RcodeFormatError,
	"qdcount 2, two questions":            mdns.RcodeFormatError,
	"pointer to itself":                   mdns.RcodeFormatError,
	"pointer loop through a label":        mdns.RcodeFormatError,
	"two pointers pointing at each other": mdns.RcodeFormatError,
	"name of 257 bytes":                   mdns.RcodeFormatError,
	"AXFR":                                mdns.RcodeRefused,
	"IXFR":                                mdns.RcodeRefused,
	"class CHAOS version.bind":            mdns.RcodeRefused,
	"opcode 2":                            mdns.RcodeNotImplemented,
	"opcode 4":                            mdns.RcodeNotImplemented,
	"opcode 5":                            mdns.RcodeNotImplemented,
	"EDNS version 1":                      mdns.RcodeBadVers,
	"EDNS version 255":                    mdns.RcodeBadVers,
	"two OPT records":                     mdns.RcodeFormatError,
	"OPT not at the root":                 mdns.RcodeFormatError,
}

// checkDNSReply checks a reply to pkt: it parses, is a response, carries
// pkt's ID, and has an allowed rcode (want, when not -1).
func checkDNSReply(t *testing.T, pkt, raw []byte, want int) {
	t.Helper()
	m := new(mdns.Msg)
	if err := m.Unpack(raw); err != nil {
		t.Errorf("reply does not parse: %v (% x)", err, raw[:min(len(raw), 64)])
		return
	}
	if !m.Response {
		t.Errorf("reply without QR")
	}
	if len(pkt) >= 2 && m.Id != binary.BigEndian.Uint16(pkt) {
		t.Errorf("reply id %d, query id %d", m.Id, binary.BigEndian.Uint16(pkt))
	}
	if !dnsAllowed[m.Rcode] || want >= 0 && m.Rcode != want {
		t.Errorf("rcode %s (want %s)", mdns.RcodeToString[m.Rcode], mdns.RcodeToString[want])
	}
	if m.Rcode != mdns.RcodeSuccess && m.Rcode != mdns.RcodeNameError && len(m.Answer) > 0 {
		t.Errorf("%s with %d answers", mdns.RcodeToString[m.Rcode], len(m.Answer))
	}
}

// validQuery is the query each malformed packet is followed by.
func validQuery() []byte {
	return dnsCat(dnsHeader(dnsValidID, dnsFlagRD, 1, 0, 0, 0), dnsQuestion(dnsName(dnsValidName), mdns.TypeA, mdns.ClassINET))
}

// checkValidReply checks the answer to validQuery: the kubernetes
// Service's ClusterIP.
func checkValidReply(t *testing.T, raw []byte, want string) {
	t.Helper()
	m := new(mdns.Msg)
	if err := m.Unpack(raw); err != nil {
		t.Fatalf("valid query: reply does not parse: %v", err)
	}
	if m.Rcode != mdns.RcodeSuccess || len(m.Answer) != 1 {
		t.Fatalf("valid query: %s with %d answers", mdns.RcodeToString[m.Rcode], len(m.Answer))
	}
	if a, ok := m.Answer[0].(*mdns.A); !ok || a.A.String() != want {
		t.Fatalf("valid query: %v, want A %s", m.Answer[0], want)
	}
}

// udpRound sends pkt, then the valid query, on one new socket, and reads
// until the valid query's answer: anything before it is pkt's reply.
func udpRound(t *testing.T, addr string, pkt []byte, want int, clusterIP string) {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(regressTimeout)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(pkt); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(validQuery()); err != nil {
		t.Fatal(err)
	}
	// Replies may come in either order (the server answers each datagram
	// on its own goroutine); when pkt must get one, wait for both.
	buf := make([]byte, 65536)
	answered, valid := false, false
	for range 5 {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("valid query answered %v, malformed answered %v: %v", valid, answered, err)
		}
		if n >= 2 && binary.BigEndian.Uint16(buf) == dnsValidID && !valid {
			checkValidReply(t, buf[:n], clusterIP)
			valid = true
		} else {
			answered = true
			checkDNSReply(t, pkt, buf[:n], want)
		}
		if valid && (answered || want < 0) {
			return
		}
	}
	t.Fatal("more than three replies to one packet")
}

func tcpWrite(c net.Conn, pkt []byte) error {
	_, err := c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(pkt))), pkt...))
	return err
}

func tcpRead(c net.Conn) ([]byte, error) {
	var l [2]byte
	if _, err := io.ReadFull(c, l[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint16(l[:]))
	_, err := io.ReadFull(c, b)
	return b, err
}

// tcpRound sends pkt, then the valid query, on one connection; when the
// server closes that connection first (its right after a bad message),
// the valid query goes on a new one.
func tcpRound(t *testing.T, addr string, pkt []byte, want int, clusterIP string) {
	t.Helper()
	deadline := time.Now().Add(regressTimeout)
	c, err := net.DialTimeout("tcp", addr, regressTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetDeadline(deadline); err != nil {
		t.Fatal(err)
	}
	if err := tcpWrite(c, pkt); err != nil {
		t.Fatal(err)
	}
	_ = tcpWrite(c, validQuery()) // may fail if the server closed already
	answered := false
	for range 4 {
		b, err := tcpRead(c)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isReset(err) {
				break
			}
			t.Fatalf("read: %v (a hang?)", err)
		}
		if len(b) >= 2 && binary.BigEndian.Uint16(b) == dnsValidID {
			checkValidReply(t, b, clusterIP)
			if want >= 0 && !answered {
				t.Errorf("no reply, want %s", mdns.RcodeToString[want])
			}
			return
		}
		answered = true
		checkDNSReply(t, pkt, b, want)
	}
	c2, err := net.DialTimeout("tcp", addr, regressTimeout)
	if err != nil {
		t.Fatalf("TCP no longer accepted after the malformed packet: %v", err)
	}
	defer c2.Close()
	if err := c2.SetDeadline(deadline); err != nil {
		t.Fatal(err)
	}
	if err := tcpWrite(c2, validQuery()); err != nil {
		t.Fatal(err)
	}
	b, err := tcpRead(c2)
	if err != nil {
		t.Fatalf("no answer to the valid query on a new connection: %v", err)
	}
	checkValidReply(t, b, clusterIP)
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && strings.Contains(op.Err.Error(), "reset")
}

// TestRegressDNSMalformed sends the probe's malformed packets to the
// server's cluster DNS over UDP and TCP. After each, the server still
// answers kubernetes.default.svc.cluster.local A; each reply a malformed
// packet gets parses, has the packet's ID, and is an error or a plain
// answer (FORMERR, REFUSED, NOTIMP, BADVERS, ...), never a crash.
func TestRegressDNSMalformed(t *testing.T) {
	s := startServer(t, servertest.Options{DNS: true, Logger: regressLogger(t)})
	addr := s.DNSAddr()
	var svc struct {
		Spec struct {
			ClusterIP string `json:"clusterIP"`
		} `json:"spec"`
	}
	if err := s.Client().Do(t.Context(), "GET", "/api/v1/namespaces/default/services/kubernetes", nil, &svc); err != nil {
		t.Fatal(err)
	}
	// The DNS view syncs from the store: wait for the first good answer.
	deadline := time.Now().Add(20 * time.Second)
	for {
		c := &mdns.Client{Net: "udp", Timeout: time.Second}
		m := new(mdns.Msg)
		m.SetQuestion(dnsValidName, mdns.TypeA)
		r, _, err := c.Exchange(m, addr)
		if err == nil && r.Rcode == mdns.RcodeSuccess && len(r.Answer) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster DNS never answered %s: %v %v", dnsValidName, r, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	set := dnsMalformed()
	if len(set) < 72 {
		t.Fatalf("%d packets, want at least 72", len(set))
	}
	for _, tc := range set {
		want, ok := dnsWant[tc.name]
		if !ok {
			want = -1
		}
		t.Run("udp/"+tc.name, func(t *testing.T) { udpRound(t, addr, tc.pkt, want, svc.Spec.ClusterIP) })
		t.Run("tcp/"+tc.name, func(t *testing.T) { tcpRound(t, addr, tc.pkt, want, svc.Spec.ClusterIP) })
	}
	// TCP framing of its own: a zero-length frame, a frame cut short, a
	// length prefix cut in half, a frame of 65535 random bytes.
	for _, raw := range [][]byte{
		{0, 0},
		append([]byte{0, 100}, validQuery()...),
		{0},
		append([]byte{0xFF, 0xFF}, regressRandom(7, 65535)...),
	} {
		c, err := net.DialTimeout("tcp", addr, regressTimeout)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(regressTimeout))
		_, _ = c.Write(raw)
		c.Close()
		tcpRound(t, addr, validQuery(), -1, svc.Spec.ClusterIP)
	}
}
