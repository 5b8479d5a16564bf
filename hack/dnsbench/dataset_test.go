package main

import (
	"bytes"
	"net"
	"strings"
	"testing"

	mdns "github.com/miekg/dns"
)

// recorder keeps the answer of one ServeDNS call; the client is on loopback.
type recorder struct{ msg *mdns.Msg }

func (r *recorder) LocalAddr() net.Addr { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53} }
func (r *recorder) RemoteAddr() net.Addr {
	return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}
func (r *recorder) WriteMsg(m *mdns.Msg) error {
	r.msg = m.Copy()
	return nil
}
func (r *recorder) Write(b []byte) (int, error) {
	m := new(mdns.Msg)
	if err := m.Unpack(b); err != nil {
		return 0, err
	}
	r.msg = m
	return len(b), nil
}
func (r *recorder) Close() error        { return nil }
func (r *recorder) TsigStatus() error   { return nil }
func (r *recorder) TsigTimersOnly(bool) {}
func (r *recorder) Hijack()             {}

// TestQueriesMatchStore checks the generator against the real Store and
// Server: every query of the mix gets the rcode and answer count the
// generator expects, and the zone file holds each positive answer.
func TestQueriesMatchStore(t *testing.T) {
	p := params{Services: 300, Endpoints: 1500, Namespaces: 10, Seed: 7}
	store, err := loadStore(p)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newBenchServer(store)
	if err != nil {
		t.Fatal(err)
	}
	var cz, rz bytes.Buffer
	if err := p.writeZones(&cz, &rz); err != nil {
		t.Fatal(err)
	}
	zone := map[string]int{} // "name TYPE" -> records in the zone files
	for _, z := range []struct {
		origin string
		text   string
	}{{"cluster.local.", cz.String()}, {"10.in-addr.arpa.", rz.String()}} {
		zp := mdns.NewZoneParser(strings.NewReader(z.text), z.origin, "")
		for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
			zone[strings.ToLower(rr.Header().Name)+" "+mdns.TypeToString[rr.Header().Rrtype]]++
		}
		if err := zp.Err(); err != nil {
			t.Fatalf("zone %s: %v", z.origin, err)
		}
	}

	qs := p.queries(3000)
	kinds := map[uint16]bool{}
	nx := 0
	for _, q := range qs {
		kinds[q.qtype] = true
		m := new(mdns.Msg)
		m.SetQuestion(q.name, q.qtype)
		w := &recorder{}
		srv.ServeDNS(w, m)
		if w.msg == nil {
			t.Fatalf("%s: no answer", q.name)
		}
		if w.msg.Rcode != q.rcode || len(w.msg.Answer) != q.answers {
			t.Fatalf("%s %s: %s with %d answers, generator expects %s with %d\n%v", q.name, mdns.TypeToString[q.qtype],
				mdns.RcodeToString[w.msg.Rcode], len(w.msg.Answer), mdns.RcodeToString[q.rcode], q.answers, w.msg)
		}
		if q.rcode == mdns.RcodeNameError {
			nx++
			continue
		}
		first := w.msg.Answer
		if len(first) > 0 && first[0].Header().Rrtype == mdns.TypeCNAME {
			first = first[:1]
		}
		for _, rr := range first {
			k := strings.ToLower(rr.Header().Name) + " " + mdns.TypeToString[rr.Header().Rrtype]
			if zone[k] != countType(w.msg.Answer, rr.Header().Name, rr.Header().Rrtype) {
				t.Fatalf("%s: zone has %d records, Skiff answers %d", k, zone[k], countType(w.msg.Answer, rr.Header().Name, rr.Header().Rrtype))
			}
		}
	}
	for _, typ := range []uint16{mdns.TypeA, mdns.TypeAAAA, mdns.TypeSRV, mdns.TypePTR} {
		if !kinds[typ] {
			t.Errorf("mix has no %s query", mdns.TypeToString[typ])
		}
	}
	if nx < len(qs)/4 {
		t.Errorf("only %d of %d queries are NXDOMAIN; ndots:5 search misses should be many", nx, len(qs))
	}
}

func countType(rrs []mdns.RR, name string, typ uint16) int {
	n := 0
	for _, rr := range rrs {
		if strings.EqualFold(rr.Header().Name, name) && rr.Header().Rrtype == typ {
			n++
		}
	}
	return n
}
