package dns

import (
	"context"
	"encoding/binary"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

// failOnError is a slog handler that fails the test on any Error record: the
// handler logs recovered panics at Error, so a recovered panic still fails
// the fuzz target.
type failOnError struct{ t *testing.T }

func (h failOnError) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (h failOnError) Handle(_ context.Context, r slog.Record) error {
	h.t.Errorf("logged error: %s", r.Message)
	return nil
}
func (h failOnError) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h failOnError) WithGroup(string) slog.Handler      { return h }

// FuzzHandler feeds raw bytes through the server's header screen, unpack and
// the handler, over UDP and TCP, and checks every response: it unpacks, has
// the query's ID, the QR bit, and fits the transport.
func FuzzHandler(f *testing.F) {
	seeds := []*mdns.Msg{}
	for _, q := range []struct {
		name  string
		qtype uint16
	}{
		{"web.default.svc.cluster.local.", mdns.TypeA},
		{"nginx.default.svc.cluster.local.", mdns.TypeA},
		{"_http._tcp.nginx.default.svc.cluster.local.", mdns.TypeSRV},
		{"web-0.nginx.default.svc.cluster.local.", mdns.TypeAAAA},
		{"alias.default.svc.cluster.local.", mdns.TypeA},
		{"ext.default.svc.cluster.local.", mdns.TypeA},
		{"10.0.96.10.in-addr.arpa.", mdns.TypePTR},
		{"10-244-1-5.default.pod.cluster.local.", mdns.TypeA},
		{"cluster.local.", mdns.TypeANY},
		{"example.org.", mdns.TypeMX},
	} {
		m := new(mdns.Msg)
		m.SetQuestion(q.name, q.qtype)
		seeds = append(seeds, m)
		e := m.Copy()
		e.SetEdns0(1232, true)
		seeds = append(seeds, e)
	}
	for _, m := range seeds {
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add(header(1, opQuery, 0, 0, 0, 0))
	f.Add(cat(header(2, opQuery, 1, 0, 0, 1), question("cluster.local.", mdns.TypeSOA, mdns.ClassINET), opt([]byte{0}, 512, 1)))
	// Seeds of the malformed-packet set test/hardening sends to a real
	// server: compression loops and out-of-range pointers, EDNS option
	// garbage, zone transfers, opcodes the server does not implement.
	q := question("web.default.svc.cluster.local.", mdns.TypeA, mdns.ClassINET)
	f.Add(cat(header(3, opQuery, 1, 0, 0, 0), []byte{3, 'w', 'e', 'b', 0xC0, 12, 0, 1, 0, 1}))
	f.Add(cat(header(4, opQuery, 1, 0, 0, 0), []byte{0xC0, 14, 0xC0, 12, 0, 1, 0, 1}))
	f.Add(cat(header(5, opQuery, 1, 0, 0, 0), []byte{0xC0, 0xFF, 0, 1, 0, 1}))
	f.Add(cat(header(6, opQuery, 1, 0, 0, 1), q, opt([]byte{0}, 1232, 0)[:9], []byte{0, 6, 0, 8, 0, 2, 0, 1}))
	f.Add(cat(header(7, opQuery, 1, 0, 0, 1), q, opt([]byte{0}, 1232, 0)[:9], []byte{0, 7, 0, 10, 0, 3, 1, 2, 3}))
	f.Add(cat(header(8, opQuery, 1, 0, 0, 0), question("cluster.local.", mdns.TypeAXFR, mdns.ClassINET)))
	f.Add(cat(header(9, opQuery|flagRD, 1, 0, 0, 0), question("web.default.svc.cluster.local.", mdns.TypeANY, mdns.ClassINET)))
	f.Add(cat(header(10, opUpdate, 1, 0, 0, 0), q))
	f.Add(cat(header(11, opQuery, 2, 0, 0, 0), q, q))

	store := fixtureStore(f)
	bigHeadless(f, store, "big", 120)
	f.Fuzz(func(t *testing.T, data []byte) {
		srv, err := NewServer(Config{
			Upstreams:   []string{"127.0.0.1:9"}, // never dialled: exchange is replaced below
			ReverseNets: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/16")},
			Logger:      slog.New(failOnError{t}),
		}, store)
		must(t, err)
		srv.fwd.exchange = func(_ context.Context, q *mdns.Msg, _, _ string) (*mdns.Msg, error) {
			r := new(mdns.Msg)
			r.SetReply(q)
			r.Answer = []mdns.RR{&mdns.A{Hdr: mdns.RR_Header{Name: q.Question[0].Name, Rrtype: mdns.TypeA, Class: mdns.ClassINET, Ttl: 60}, A: []byte{192, 0, 2, 1}}}
			return r, nil
		}
		if len(data) < 12 {
			return // the server drops these unanswered
		}
		var dh mdns.Header
		dh.Id = uint16(data[0])<<8 | uint16(data[1])
		dh.Bits = uint16(data[2])<<8 | uint16(data[3])
		dh.Qdcount = uint16(data[4])<<8 | uint16(data[5])
		dh.Ancount = uint16(data[6])<<8 | uint16(data[7])
		dh.Nscount = uint16(data[8])<<8 | uint16(data[9])
		dh.Arcount = uint16(data[10])<<8 | uint16(data[11])
		if srv.accept(dh) != mdns.MsgAccept {
			return // answered by miekg's server from the header alone
		}
		req := new(mdns.Msg)
		if err := req.Unpack(data); err != nil {
			return // FORMERR from miekg's server
		}
		for _, network := range []string{"udp", "tcp"} {
			w := newRecorder(network, "127.0.0.1:5353")
			srv.ServeDNS(w, req)
			if len(w.raw) > 1 {
				t.Fatalf("%s: %d responses", network, len(w.raw))
			}
			if len(w.raw) == 0 {
				if !req.Response {
					t.Fatalf("%s: query not answered", network)
				}
				continue
			}
			r := w.last()
			if r.Id != req.Id || !r.Response {
				t.Fatalf("%s: id %d qr %v for query id %d", network, r.Id, r.Response, req.Id)
			}
			limit := maxTCPSize
			if network == "udp" {
				limit = minUDPSize
				if o := req.IsEdns0(); o != nil {
					limit = int(min(max(o.UDPSize(), minUDPSize), maxUDPSize))
				}
			}
			if len(w.raw[0]) > limit {
				t.Fatalf("%s: %d bytes, limit %d", network, len(w.raw[0]), limit)
			}
		}
	})
}

// FuzzServeUDP sends raw bytes to a real server over loopback UDP, where
// miekg's serve loop sees them first (the header screen, unpack, the
// FORMERR it answers itself), then a valid query on the same socket: the
// valid query is always answered, and every other reply unpacks, is a
// response and carries the packet's ID.
func FuzzServeUDP(f *testing.F) {
	q := question("web.default.svc.cluster.local.", mdns.TypeA, mdns.ClassINET)
	f.Add([]byte{})
	f.Add([]byte{0, 1, 1})
	f.Add(cat(header(1, opQuery, 1, 0, 0, 0), q))
	f.Add(cat(header(2, opQuery, 1, 0, 0, 0), []byte{0xC0, 12, 0, 1, 0, 1}))
	f.Add(cat(header(3, opQuery, 1, 0, 0, 1), q, opt([]byte{0}, 1232, 1)))
	f.Add(cat(header(4, opNotify, 1, 0, 0, 0), q))
	f.Add(cat(header(5, flagQR, 1, 0, 0, 0), q))
	f.Add(cat(header(6, opQuery, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF), q))
	ts := startServer(f, Config{}, fixtureStore(f))
	const validID = 0xBEEF
	valid := cat(header(validID, opQuery, 1, 0, 0, 0), q)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) >= 2 && binary.BigEndian.Uint16(data) == validID {
			data = append([]byte{0, 0}, data[2:]...)
		}
		c, err := net.Dial("udp", ts.udpAddr)
		must(t, err)
		defer c.Close()
		must(t, c.SetDeadline(time.Now().Add(5*time.Second)))
		_, err = c.Write(data)
		must(t, err)
		_, err = c.Write(valid)
		must(t, err)
		buf := make([]byte, 65536)
		for range 3 {
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("valid query not answered after % x: %v", data[:min(len(data), 32)], err)
			}
			m := new(mdns.Msg)
			if err := m.Unpack(buf[:n]); err != nil {
				t.Fatalf("reply does not unpack: %v", err)
			}
			if m.Id == validID {
				if m.Rcode != mdns.RcodeSuccess || len(m.Answer) == 0 {
					t.Fatalf("valid query: %s with %d answers", mdns.RcodeToString[m.Rcode], len(m.Answer))
				}
				return
			}
			if !m.Response || len(data) < 2 || m.Id != binary.BigEndian.Uint16(data) {
				t.Fatalf("reply id %d qr %v to a packet of %d bytes", m.Id, m.Response, len(data))
			}
		}
		t.Fatal("more than two replies")
	})
}
