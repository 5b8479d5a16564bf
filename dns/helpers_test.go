package dns

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = addr(s)
	}
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fixtureStore is the cluster most tests query.
func fixtureStore(t testing.TB) *Store {
	t.Helper()
	s := NewStore()
	must(t, s.UpsertService(Service{
		Namespace: "default", Name: "web", Type: TypeClusterIP,
		ClusterIPs: addrs("10.96.0.10", "fd00:96::10"),
		Ports: []Port{
			{Name: "http", Protocol: "TCP", Port: 80},
			{Name: "dns", Protocol: "UDP", Port: 53},
			{Port: 8080}, // unnamed: no SRV
		},
	}))
	must(t, s.UpsertService(Service{
		Namespace: "default", Name: "nginx", Headless: true,
		Ports: []Port{{Name: "http", Protocol: "TCP", Port: 80}},
	}))
	must(t, s.UpsertEndpointSlice(EndpointSlice{
		Namespace: "default", Name: "nginx-abc", Service: "nginx",
		Ports: []EndpointPort{{Name: "http", Protocol: "TCP", Port: 8080}},
		Endpoints: []Endpoint{
			{Addresses: addrs("10.244.1.5"), Hostname: "web-0", Ready: true, Serving: true},
			{Addresses: addrs("10.244.1.6"), Hostname: "web-1", Ready: true, Serving: true},
			{Addresses: addrs("10.244.1.7"), Ready: true, Serving: true},
			{Addresses: addrs("10.244.1.8"), Hostname: "web-2", Ready: false},
		},
	}))
	must(t, s.UpsertService(Service{Namespace: "default", Name: "empty", Headless: true}))
	must(t, s.UpsertService(Service{Namespace: "default", Name: "ext", Type: TypeExternalName, ExternalName: "www.example.com"}))
	must(t, s.UpsertService(Service{Namespace: "default", Name: "alias", Type: TypeExternalName, ExternalName: "web.default.svc.cluster.local"}))
	must(t, s.UpsertService(Service{Namespace: "default", Name: "pnr", Headless: true, PublishNotReady: true}))
	must(t, s.UpsertEndpointSlice(EndpointSlice{
		Namespace: "default", Name: "pnr-1", Service: "pnr",
		Endpoints: []Endpoint{{Addresses: addrs("10.244.2.9"), Ready: false}},
	}))
	must(t, s.UpsertService(Service{Namespace: "kube-system", Name: "dns6", ClusterIPs: addrs("fd00:96::a")}))
	must(t, s.UpsertPod(Pod{Namespace: "default", Name: "web-0", IPs: addrs("10.244.1.5")}))
	must(t, s.UpsertPod(Pod{Namespace: "other", Name: "p2", IPs: addrs("10.244.3.3", "fd00:244::3")}))
	s.SetSynced(true)
	return s
}

// testServer is a real Server on 127.0.0.1 random ports.
type testServer struct {
	srv     *Server
	udpAddr string
	tcpAddr string
}

func startServer(t testing.TB, cfg Config, store *Store, prep ...func(*Server)) *testServer {
	t.Helper()
	if cfg.Upstreams == nil {
		cfg.Upstreams = []string{}
	}
	srv, err := NewServer(cfg, store)
	must(t, err)
	for _, p := range prep {
		p(srv)
	}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	must(t, err)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	ts := &testServer{srv: srv, udpAddr: udp.LocalAddr().String(), tcpAddr: tcp.Addr().String()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, udp, tcp) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return after cancel")
		}
	})
	return ts
}

// ask sends one question over network ("udp" or "tcp") and returns the answer.
func (ts *testServer) ask(t testing.TB, network, name string, qtype uint16) *mdns.Msg {
	t.Helper()
	m := new(mdns.Msg)
	m.SetQuestion(name, qtype)
	return ts.exchange(t, network, m)
}

func (ts *testServer) exchange(t testing.TB, network string, m *mdns.Msg) *mdns.Msg {
	t.Helper()
	c := &mdns.Client{Net: network, Timeout: 5 * time.Second}
	a := ts.udpAddr
	if network == "tcp" {
		a = ts.tcpAddr
	}
	r, _, err := c.Exchange(m, a)
	if err != nil {
		t.Fatalf("%s %s %s: %v", network, m.Question[0].Name, mdns.TypeToString[m.Question[0].Qtype], err)
	}
	return r
}

// rrStrings renders records without TTL-dependent formatting differences,
// sorted: "name TYPE rdata".
func rrStrings(rrs []mdns.RR) []string {
	var out []string
	for _, rr := range rrs {
		if rr.Header().Rrtype == mdns.TypeOPT {
			continue
		}
		h := rr.Header()
		rdata := strings.TrimPrefix(rr.String(), h.String())
		out = append(out, fmt.Sprintf("%s %s %s", strings.ToLower(h.Name), mdns.TypeToString[h.Rrtype], rdata))
	}
	sort.Strings(out)
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return slices.Equal(a, b)
}

// recorder is a dns.ResponseWriter that keeps what is written.
type recorder struct {
	remote net.Addr
	msgs   []*mdns.Msg
	raw    [][]byte
}

func newRecorder(network, a string) *recorder {
	ap := netip.MustParseAddrPort(a)
	var ra net.Addr = net.UDPAddrFromAddrPort(ap)
	if network == "tcp" {
		ra = net.TCPAddrFromAddrPort(ap)
	}
	return &recorder{remote: ra}
}

func (r *recorder) LocalAddr() net.Addr {
	if _, ok := r.remote.(*net.TCPAddr); ok {
		return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}
	}
	return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}
}
func (r *recorder) RemoteAddr() net.Addr { return r.remote }
func (r *recorder) WriteMsg(m *mdns.Msg) error {
	b, err := m.Pack()
	if err != nil {
		return err
	}
	_, err = r.Write(b)
	return err
}
func (r *recorder) Write(b []byte) (int, error) {
	r.raw = append(r.raw, slices.Clone(b))
	m := new(mdns.Msg)
	if err := m.Unpack(b); err != nil {
		return 0, err
	}
	r.msgs = append(r.msgs, m)
	return len(b), nil
}
func (r *recorder) Close() error        { return nil }
func (r *recorder) TsigStatus() error   { return nil }
func (r *recorder) TsigTimersOnly(bool) {}
func (r *recorder) Hijack()             {}
func (r *recorder) Network() string     { return r.remote.Network() }
func (r *recorder) last() *mdns.Msg {
	if len(r.msgs) == 0 {
		return nil
	}
	return r.msgs[len(r.msgs)-1]
}
