package dns

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"testing"

	mdns "github.com/miekg/dns"
)

// TestServiceRemoved: a Service removed from the Store NXDOMAINs, with its
// SRV, endpoint and PTR names.
func TestServiceRemoved(t *testing.T) {
	store := fixtureStore(t)
	ts := startServer(t, Config{}, store)
	names := []struct {
		qname string
		qtype uint16
	}{
		{"web.default.svc.cluster.local.", mdns.TypeA},
		{"_http._tcp.web.default.svc.cluster.local.", mdns.TypeSRV},
		{"10.0.96.10.in-addr.arpa.", mdns.TypePTR},
		{"nginx.default.svc.cluster.local.", mdns.TypeA},
		{"web-0.nginx.default.svc.cluster.local.", mdns.TypeA},
		{"_http._tcp.nginx.default.svc.cluster.local.", mdns.TypeSRV},
	}
	for _, n := range names {
		if r := ts.ask(t, "udp", n.qname, n.qtype); r.Rcode != mdns.RcodeSuccess || len(r.Answer) == 0 {
			t.Fatalf("before delete %s: %v", n.qname, r)
		}
	}
	store.DeleteService("default", "web")
	store.DeleteEndpointSlice("default", "nginx-abc") // the headless Service stays, without endpoints
	for _, n := range names {
		r := ts.ask(t, "udp", n.qname, n.qtype)
		if n.qname == "10.0.96.10.in-addr.arpa." {
			// Not in ReverseNets: an unknown address is forwarded, and
			// this server has no upstreams.
			if r.Rcode != mdns.RcodeRefused {
				t.Errorf("after delete %s: rcode %s, want REFUSED (not ours, no upstream)", n.qname, mdns.RcodeToString[r.Rcode])
			}
			continue
		}
		if r.Rcode != mdns.RcodeNameError || len(r.Answer) != 0 {
			t.Errorf("after delete %s: %s %v, want NXDOMAIN", n.qname, mdns.RcodeToString[r.Rcode], r.Answer)
		}
		checkAuthority(t, r, true, "")
	}
	// The namespace still has Services: it stays an empty non-terminal.
	if r := ts.ask(t, "udp", "default.svc.cluster.local.", mdns.TypeA); r.Rcode != mdns.RcodeSuccess {
		t.Errorf("namespace: %s, want NODATA", mdns.RcodeToString[r.Rcode])
	}
	for _, name := range []string{"nginx", "empty", "ext", "alias", "pnr"} {
		store.DeleteService("default", name)
	}
	if r := ts.ask(t, "udp", "default.svc.cluster.local.", mdns.TypeA); r.Rcode != mdns.RcodeNameError {
		t.Errorf("empty namespace: %s, want NXDOMAIN", mdns.RcodeToString[r.Rcode])
	}
}

// bigHeadless adds a headless Service with n ready endpoints (in
// slices of at most 100, like the controller) and a named port.
func bigHeadless(t testing.TB, s *Store, name string, n int) {
	t.Helper()
	must(t, s.UpsertService(Service{Namespace: "default", Name: name, Headless: true}))
	for i := 0; i*100 < n; i++ {
		es := EndpointSlice{Namespace: "default", Name: fmt.Sprintf("%s-%d", name, i), Service: name,
			Ports: []EndpointPort{{Name: "http", Protocol: "TCP", Port: 8080}}}
		for j := i * 100; j < min(n, (i+1)*100); j++ {
			es.Endpoints = append(es.Endpoints, Endpoint{
				Addresses: []netip.Addr{netip.AddrFrom4([4]byte{10, 245, byte(j / 250), byte(j%250 + 1)})},
				Ready:     true,
			})
		}
		must(t, s.UpsertEndpointSlice(es))
	}
}

// TestTruncation: an answer that does not fit the client's UDP size is
// truncated by whole RRsets with TC set; TCP gets it whole.
func TestTruncation(t *testing.T) {
	store := fixtureStore(t)
	bigHeadless(t, store, "big", 120)
	bigHeadless(t, store, "mid", 60)
	ts := startServer(t, Config{}, store)
	const name = "big.default.svc.cluster.local."
	const srv = "_http._tcp.big.default.svc.cluster.local."
	const midSRV = "_http._tcp.mid.default.svc.cluster.local."

	wire := func(t *testing.T, network string, m *mdns.Msg) (*mdns.Msg, int) {
		t.Helper()
		r := ts.exchange(t, network, m)
		r.Compress = true
		b, err := r.Pack()
		must(t, err)
		return r, len(b)
	}
	query := func(qname string, qtype uint16, edns uint16) *mdns.Msg {
		m := new(mdns.Msg)
		m.SetQuestion(qname, qtype)
		if edns > 0 {
			m.SetEdns0(edns, false)
		}
		return m
	}

	tests := []struct {
		name     string
		network  string
		q        *mdns.Msg
		tc       bool
		answers  int
		maxBytes int
		extra    int // -1: any number
		optSize  uint16
	}{
		{name: "UDP without EDNS", network: "udp", q: query(name, mdns.TypeA, 0), tc: true, answers: 0, maxBytes: 512},
		{name: "UDP with EDNS 1232", network: "udp", q: query(name, mdns.TypeA, 1232), tc: true, answers: 0, maxBytes: 1232, optSize: 1232},
		{name: "UDP with EDNS 4096", network: "udp", q: query(name, mdns.TypeA, 4096), answers: 120, maxBytes: 4096, optSize: 4096},
		{name: "UDP with EDNS 65000 honours 4096", network: "udp", q: query(name, mdns.TypeA, 65000), answers: 120, maxBytes: 4096, optSize: 4096},
		{name: "UDP with EDNS below 512 gets 512", network: "udp", q: query(name, mdns.TypeA, 100), tc: true, maxBytes: 512, optSize: 512},
		{name: "TCP", network: "tcp", q: query(name, mdns.TypeA, 0), answers: 120, maxBytes: 65535},
		{name: "SRV over UDP without EDNS", network: "udp", q: query(srv, mdns.TypeSRV, 0), tc: true, maxBytes: 512},
		// SRV targets are never compressed (RFC 2782): 120 of them need ~7 KB.
		{name: "SRV over UDP 4096", network: "udp", q: query(srv, mdns.TypeSRV, 4096), tc: true, maxBytes: 4096, optSize: 4096},
		{name: "SRV over UDP 4096 drops additional records, not TC", network: "udp", q: query(midSRV, mdns.TypeSRV, 4096),
			answers: 60, maxBytes: 4096, extra: 0, optSize: 4096},
		{name: "SRV over TCP", network: "tcp", q: query(srv, mdns.TypeSRV, 0), answers: 120, extra: 120, maxBytes: 65535},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, n := wire(t, tc.network, tc.q)
			if r.Truncated != tc.tc {
				t.Errorf("TC %v, want %v", r.Truncated, tc.tc)
			}
			if len(r.Answer) != tc.answers {
				t.Errorf("%d answers, want %d", len(r.Answer), tc.answers)
			}
			if n > tc.maxBytes {
				t.Errorf("%d bytes, want at most %d", n, tc.maxBytes)
			}
			extra := len(r.Extra)
			if opt := r.IsEdns0(); opt != nil {
				extra--
				if opt.UDPSize() != tc.optSize {
					t.Errorf("OPT size %d, want %d", opt.UDPSize(), tc.optSize)
				}
			} else if tc.optSize != 0 {
				t.Errorf("no OPT in the answer to an EDNS query")
			}
			if tc.extra >= 0 && tc.tc == false && extra != tc.extra {
				t.Errorf("%d additional records, want %d", extra, tc.extra)
			}
			if r.Rcode != mdns.RcodeSuccess {
				t.Errorf("rcode %s", mdns.RcodeToString[r.Rcode])
			}
		})
	}
}

// TestNotSynced: before the Store is synced, cluster names get SERVFAIL,
// never NXDOMAIN.
func TestNotSynced(t *testing.T) {
	store := NewStore()
	must(t, store.UpsertService(Service{Namespace: "default", Name: "web", ClusterIPs: addrs("10.96.0.10")}))
	ts := startServer(t, Config{ReverseNets: []netip.Prefix{netip.MustParsePrefix("10.96.0.0/12")}}, store)
	for _, q := range []struct {
		name  string
		qtype uint16
	}{
		{"web.default.svc.cluster.local.", mdns.TypeA},
		{"missing.default.svc.cluster.local.", mdns.TypeA},
		{"cluster.local.", mdns.TypeSOA},
		{"10.0.96.10.in-addr.arpa.", mdns.TypePTR},
		{"99.0.96.10.in-addr.arpa.", mdns.TypePTR},
	} {
		for _, network := range []string{"udp", "tcp"} {
			if r := ts.ask(t, network, q.name, q.qtype); r.Rcode != mdns.RcodeServerFailure {
				t.Errorf("%s %s before sync: %s, want SERVFAIL", network, q.name, mdns.RcodeToString[r.Rcode])
			}
		}
	}
	store.SetSynced(true)
	if r := ts.ask(t, "udp", "web.default.svc.cluster.local.", mdns.TypeA); r.Rcode != mdns.RcodeSuccess || len(r.Answer) != 1 {
		t.Errorf("after sync: %v", r)
	}
	if r := ts.ask(t, "udp", "99.0.96.10.in-addr.arpa.", mdns.TypePTR); r.Rcode != mdns.RcodeNameError {
		t.Errorf("unknown address in ReverseNets after sync: %s, want NXDOMAIN", mdns.RcodeToString[r.Rcode])
	} else {
		checkAuthority(t, r, true, "10.in-addr.arpa.") // /12 rounds down to /8
	}
	store.SetSynced(false)
	if r := ts.ask(t, "udp", "web.default.svc.cluster.local.", mdns.TypeA); r.Rcode != mdns.RcodeServerFailure {
		t.Errorf("after unsync: %s, want SERVFAIL", mdns.RcodeToString[r.Rcode])
	}
}

// TestRefused: a client outside AllowedNets gets REFUSED for every name.
// Tests only use loopback, so the handler is driven directly with a
// recorder whose remote address is outside (nothing is sent to it).
func TestRefused(t *testing.T) {
	store := fixtureStore(t)
	srv, err := NewServer(Config{
		Upstreams:   []string{"127.0.0.1:1"}, // never reached
		AllowedNets: []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16")},
	}, store)
	must(t, err)
	tests := []struct {
		name   string
		remote string
		qname  string
		rcode  int
	}{
		{name: "outside client, outside name", remote: "192.0.2.7:5353", qname: "example.org.", rcode: mdns.RcodeRefused},
		{name: "outside client, cluster name", remote: "192.0.2.7:5353", qname: "web.default.svc.cluster.local.", rcode: mdns.RcodeRefused},
		{name: "outside IPv6 client", remote: "[2001:db8::1]:5353", qname: "example.org.", rcode: mdns.RcodeRefused},
		{name: "pod client, cluster name", remote: "10.244.1.9:5353", qname: "web.default.svc.cluster.local.", rcode: mdns.RcodeSuccess},
		{name: "mapped pod client", remote: "[::ffff:10.244.1.9]:5353", qname: "web.default.svc.cluster.local.", rcode: mdns.RcodeSuccess},
	}
	for _, network := range []string{"udp", "tcp"} {
		for _, tc := range tests {
			t.Run(network+"/"+tc.name, func(t *testing.T) {
				w := newRecorder(network, tc.remote)
				m := new(mdns.Msg)
				m.SetQuestion(tc.qname, mdns.TypeA)
				srv.ServeDNS(w, m)
				r := w.last()
				if r == nil {
					t.Fatal("no response")
				}
				if r.Rcode != tc.rcode {
					t.Errorf("rcode %s, want %s", mdns.RcodeToString[r.Rcode], mdns.RcodeToString[tc.rcode])
				}
				if tc.rcode == mdns.RcodeRefused && (len(r.Answer) != 0 || len(r.Ns) != 0) {
					t.Errorf("refused answer carries records: %v", r)
				}
			})
		}
	}
}

func TestACL(t *testing.T) {
	a := newACL([]netip.Prefix{
		netip.MustParsePrefix("10.244.0.0/16"),
		netip.MustParsePrefix("192.168.1.10/32"),
		netip.MustParsePrefix("fd00:244::/64"),
		netip.MustParsePrefix("::ffff:172.16.0.0/108"), // a mapped prefix counts as 172.16.0.0/12
	})
	tests := []struct {
		name string
		addr netip.Addr
		want bool
	}{
		{"IPv4 loopback", addr("127.0.0.1"), true},
		{"other IPv4 loopback", addr("127.1.2.3"), true},
		{"IPv6 loopback", addr("::1"), true},
		{"mapped loopback", addr("::ffff:127.0.0.1"), true},
		{"pod", addr("10.244.3.4"), true},
		{"mapped pod", addr("::ffff:10.244.3.4"), true},
		{"just outside the pod CIDR", addr("10.245.0.1"), false},
		{"node address", addr("192.168.1.10"), true},
		{"neighbour of the node", addr("192.168.1.11"), false},
		{"IPv6 pod", addr("fd00:244::5"), true},
		{"IPv6 pod with zone", addr("fd00:244::5%eth0"), true},
		{"other IPv6", addr("fd00:245::5"), false},
		{"mapped prefix", addr("172.20.0.1"), true},
		{"public", addr("8.8.8.8"), false},
		{"unspecified", addr("0.0.0.0"), false},
		{"invalid", netip.Addr{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := a.allows(tc.addr); got != tc.want {
				t.Errorf("allows(%v) = %v, want %v", tc.addr, got, tc.want)
			}
		})
	}
	if newACL(nil).allows(addr("10.0.0.1")) {
		t.Error("empty ACL allows a non-loopback client")
	}
}

// TestEDNSEcho: an OPT in the query gets an OPT in the answer, with the DO
// bit copied (RFC 3225) and the size used.
func TestEDNSEcho(t *testing.T) {
	ts := startServer(t, Config{}, fixtureStore(t))
	for _, tc := range []struct {
		name string
		do   bool
	}{{"DO clear", false}, {"DO set", true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := new(mdns.Msg)
			m.SetQuestion("web.default.svc.cluster.local.", mdns.TypeA)
			m.SetEdns0(1400, tc.do)
			r := ts.exchange(t, "udp", m)
			o := r.IsEdns0()
			if o == nil || o.Do() != tc.do || o.UDPSize() != 1400 || o.Version() != 0 {
				t.Errorf("OPT %v, want size 1400 DO %v", o, tc.do)
			}
			if len(r.Answer) != 1 {
				t.Errorf("answer %v", r.Answer)
			}
		})
	}
	if r := ts.ask(t, "udp", "web.default.svc.cluster.local.", mdns.TypeA); r.IsEdns0() != nil {
		t.Error("OPT in the answer to a query without one")
	}
}

// panicWriter panics when the handler asks for the client address.
type panicWriter struct{ recorder }

func (p *panicWriter) RemoteAddr() net.Addr { panic("boom") }

// TestPanicRecovered: a panic inside ServeDNS becomes SERVFAIL, logged.
func TestPanicRecovered(t *testing.T) {
	var logged []string
	srv, err := NewServer(Config{Upstreams: []string{}, Logger: slog.New(recordErrors{&logged})}, fixtureStore(t))
	must(t, err)
	w := &panicWriter{}
	m := new(mdns.Msg)
	m.SetQuestion("web.default.svc.cluster.local.", mdns.TypeA)
	srv.ServeDNS(w, m)
	if r := w.last(); r == nil || r.Rcode != mdns.RcodeServerFailure || r.Id != m.Id {
		t.Errorf("response %v, want SERVFAIL", r)
	}
	if len(logged) != 1 {
		t.Errorf("logged %q, want the panic", logged)
	}
}

type recordErrors struct{ msgs *[]string }

func (h recordErrors) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelError }
func (h recordErrors) Handle(_ context.Context, r slog.Record) error {
	*h.msgs = append(*h.msgs, r.Message)
	return nil
}
func (h recordErrors) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordErrors) WithGroup(string) slog.Handler      { return h }
