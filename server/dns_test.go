package server_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server"
	"github.com/skiff-dev/skiff/server/servertest"
)

const dnsNS = "dnstest"

// fakeUpstream is a resolver on 127.0.0.1 that answers A for the names in
// answers and NXDOMAIN for others; the server forwards outside names to it.
func fakeUpstream(t *testing.T, answers map[string]string) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := mdns.HandlerFunc(func(w mdns.ResponseWriter, q *mdns.Msg) {
		m := new(mdns.Msg)
		m.SetReply(q)
		name := strings.ToLower(q.Question[0].Name)
		ip, ok := answers[name]
		switch {
		case !ok:
			m.Rcode = mdns.RcodeNameError
		case q.Question[0].Qtype == mdns.TypeA:
			m.Answer = append(m.Answer, &mdns.A{Hdr: mdns.RR_Header{Name: q.Question[0].Name, Rrtype: mdns.TypeA, Class: mdns.ClassINET, Ttl: 60}, A: net.ParseIP(ip)})
		}
		_ = w.WriteMsg(m)
	})
	started := make(chan struct{})
	srv := &mdns.Server{PacketConn: pc, Handler: h, NotifyStartedFunc: func() { close(started) }}
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

// dnsQuery asks addr over proto ("udp" or "tcp"); edns > 0 adds an OPT
// with that buffer size.
func dnsQuery(t testing.TB, addr, proto, name string, qtype uint16, edns uint16) *mdns.Msg {
	t.Helper()
	q := new(mdns.Msg)
	q.SetQuestion(name, qtype)
	if edns > 0 {
		q.SetEdns0(edns, false)
	}
	c := &mdns.Client{Net: proto, Timeout: 3 * time.Second}
	if edns > 0 {
		c.UDPSize = edns
	}
	r, _, err := c.Exchange(q, addr)
	if err != nil {
		t.Fatalf("%s %s %s: %v", proto, name, mdns.TypeToString[qtype], err)
	}
	if r.Id != q.Id {
		t.Fatalf("%s %s: answer id %d, query id %d", proto, name, r.Id, q.Id)
	}
	return r
}

// rrStrings renders records as "TYPE data" (no name, TTL or class), sorted.
func rrStrings(rrs []mdns.RR) []string {
	out := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		if rr.Header().Rrtype == mdns.TypeOPT {
			continue
		}
		data := strings.TrimPrefix(rr.String(), rr.Header().String())
		out = append(out, mdns.TypeToString[rr.Header().Rrtype]+" "+data)
	}
	slices.Sort(out)
	return out
}

// dnsFixture creates, in namespace dnstest: a ClusterIP Service web with
// a named port, a headless Service nginx (three endpoints, web-0 and web-1
// ready, web-2 not), an ExternalName Service ext, and a pod with an IP.
// It returns web's ClusterIP.
func dnsFixture(t *testing.T, c *client.Client) string {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	mustCreateNS(t, c, dnsNS)
	web := service("web", api.ServiceTypeClusterIP, 80)
	web.Spec.Ports[0].Name = "http"
	if err := c.Create(ctx, resServices, dnsNS, web); err != nil {
		t.Fatalf("create web: %v", err)
	}
	nginx := service("nginx", api.ServiceTypeClusterIP, 80)
	nginx.Spec.Ports[0].Name = "http"
	nginx.Spec.ClusterIP = api.ClusterIPNone
	if err := c.Create(ctx, resServices, dnsNS, nginx); err != nil {
		t.Fatalf("create nginx: %v", err)
	}
	ext := &api.Service{ObjectMeta: api.ObjectMeta{Name: "ext"},
		Spec: api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "www.example.com"}}
	if err := c.Create(ctx, resServices, dnsNS, ext); err != nil {
		t.Fatalf("create ext: %v", err)
	}
	f := false
	sl := dnsSlice("nginx-1", "nginx", 8080,
		api.Endpoint{Addresses: []string{"10.244.5.10"}, Hostname: strPtr("web-0")},
		api.Endpoint{Addresses: []string{"10.244.5.11"}, Hostname: strPtr("web-1")},
		api.Endpoint{Addresses: []string{"10.244.5.12"}, Hostname: strPtr("web-2"), Conditions: api.EndpointConditions{Ready: &f}},
	)
	if err := c.Create(ctx, resSlices, dnsNS, sl); err != nil {
		t.Fatalf("create slice: %v", err)
	}
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "client"},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox:1.36"}}}}
	if err := c.Create(ctx, resPods, dnsNS, pod); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	// No agent: the test reports the pod's IP itself.
	pod.Status.Phase = api.PodRunning
	pod.Status.PodIP = "10.244.5.20"
	pod.Status.PodIPs = []api.PodIP{{IP: "10.244.5.20"}}
	// Unconditional (no resourceVersion): the scheduler may have written
	// the pod's status (PodScheduled=False, no nodes) in the meantime.
	pod.ResourceVersion = ""
	if err := c.UpdateStatus(ctx, resPods, dnsNS, pod); err != nil {
		t.Fatalf("pod status: %v", err)
	}
	var got api.Service
	if err := c.Get(ctx, resServices, dnsNS, "web", &got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.ClusterIP == "" || got.Spec.ClusterIP == api.ClusterIPNone {
		t.Fatalf("web has no ClusterIP: %q", got.Spec.ClusterIP)
	}
	return got.Spec.ClusterIP
}

func strPtr(s string) *string { return &s }

// dnsSlice builds a slice of svc with one named TCP port "http".
func dnsSlice(name, svc string, port int32, eps ...api.Endpoint) *api.EndpointSlice {
	pn, proto := "http", api.ProtocolTCP
	return &api.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Name: name, Labels: map[string]string{api.LabelServiceName: svc}},
		AddressType: api.AddressTypeIPv4,
		Endpoints:   eps,
		Ports:       []api.EndpointPort{{Name: &pn, Protocol: &proto, Port: &port}},
	}
}

// dnsConfig starts a server with DNS on 127.0.0.1 (a port of its own
// choosing), forwarding to upstream; TTL 7s to see the flag arrive.
func startDNSServer(t *testing.T, upstream string) *servertest.Server {
	t.Helper()
	ts := servertest.Start(t, servertest.Options{
		DNS: true,
		// The test writes EndpointSlices itself.
		DisabledControllers: []string{"endpointslice"},
		Config: func(cfg *config.Server) {
			cfg.DNSTTL = 7 * time.Second
			cfg.DNSUpstream = []string{upstream}
		},
	})
	if ts.DNSAddr() == "" {
		t.Fatal("DNSAddr empty with --dns-listen set")
	}
	return ts
}

// waitDNS polls name over UDP until its rcode and answer count are as
// wanted (the informers catch up asynchronously).
func waitDNS(t *testing.T, addr, name string, qtype uint16, rcode, answers int) {
	t.Helper()
	eventually(t, 10*time.Second, fmt.Sprintf("%s %s -> %s/%d", name, mdns.TypeToString[qtype], mdns.RcodeToString[rcode], answers), func() (bool, error) {
		r := dnsQuery(t, addr, "udp", name, qtype, 0)
		if r.Rcode == rcode && len(r.Answer) == answers {
			return true, nil
		}
		return false, fmt.Errorf("rcode %s, %d answers", mdns.RcodeToString[r.Rcode], len(r.Answer))
	})
}

func TestDNSRecords(t *testing.T) {
	upstream := fakeUpstream(t, map[string]string{"www.example.com.": "192.0.2.10", "example.org.": "192.0.2.20"})
	ts := startDNSServer(t, upstream)
	addr := ts.DNSAddr()
	webIP := dnsFixture(t, ts.Client())
	webRev, err := mdns.ReverseAddr(webIP)
	if err != nil {
		t.Fatal(err)
	}
	// The last object written: once it answers, every other one does too
	// (one informer per resource, but all were written before the pod status).
	waitDNS(t, addr, "10-244-5-20.dnstest.pod.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, 1)
	waitDNS(t, addr, "web-1.nginx.dnstest.svc.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, 1)
	waitDNS(t, addr, "ext.dnstest.svc.cluster.local.", mdns.TypeCNAME, mdns.RcodeSuccess, 1)

	const soa = "SOA ns.dns.cluster.local. hostmaster.cluster.local."
	const d = ".dnstest.svc.cluster.local."
	cases := []struct {
		name      string
		qname     string
		qtype     uint16
		rcode     int
		answer    []string // "TYPE data", sorted
		authSOA   bool     // the apex SOA in authority (negative answers)
		extraSome bool     // additional records expected
	}{
		{name: "kubernetes Service A", qname: "kubernetes.default.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"A 10.96.0.1"}},
		{name: "ClusterIP A", qname: "web" + d, qtype: mdns.TypeA, answer: []string{"A " + webIP}},
		{name: "ClusterIP A, mixed case", qname: "WeB.DnsTest.Svc.Cluster.Local.", qtype: mdns.TypeA, answer: []string{"A " + webIP}},
		{name: "NODATA: AAAA of an IPv4 Service", qname: "web" + d, qtype: mdns.TypeAAAA, authSOA: true},
		{name: "NODATA: empty non-terminal namespace", qname: "dnstest.svc.cluster.local.", qtype: mdns.TypeA, authSOA: true},
		{name: "headless A: ready endpoints only", qname: "nginx" + d, qtype: mdns.TypeA,
			answer: []string{"A 10.244.5.10", "A 10.244.5.11"}},
		{name: "endpoint hostname A", qname: "web-0.nginx" + d, qtype: mdns.TypeA, answer: []string{"A 10.244.5.10"}},
		{name: "SRV ClusterIP", qname: "_http._tcp.web" + d, qtype: mdns.TypeSRV,
			answer: []string{"SRV 0 100 80 web" + d}, extraSome: true},
		{name: "SRV headless: one per ready endpoint", qname: "_http._tcp.nginx" + d, qtype: mdns.TypeSRV,
			answer: []string{"SRV 0 50 8080 web-0.nginx" + d, "SRV 0 50 8080 web-1.nginx" + d}, extraSome: true},
		{name: "ExternalName CNAME, target from upstream", qname: "ext" + d, qtype: mdns.TypeA,
			answer: []string{"A 192.0.2.10", "CNAME www.example.com."}},
		{name: "PTR of a ClusterIP", qname: webRev, qtype: mdns.TypePTR, answer: []string{"PTR web" + d}},
		{name: "PTR of a headless endpoint", qname: "10.5.244.10.in-addr.arpa.", qtype: mdns.TypePTR,
			answer: []string{"PTR web-0.nginx" + d}},
		{name: "PTR unknown in the service CIDR: NXDOMAIN", qname: "200.200.96.10.in-addr.arpa.", qtype: mdns.TypePTR,
			rcode: mdns.RcodeNameError},
		{name: "pod A", qname: "10-244-5-20.dnstest.pod.cluster.local.", qtype: mdns.TypeA, answer: []string{"A 10.244.5.20"}},
		{name: "pod A of an IP no pod has: NXDOMAIN", qname: "10-244-5-99.dnstest.pod.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, authSOA: true},
		{name: "apex SOA", qname: "cluster.local.", qtype: mdns.TypeSOA, answer: []string{"SOA"}},
		{name: "apex NS", qname: "cluster.local.", qtype: mdns.TypeNS, answer: []string{"NS ns.dns.cluster.local."}},
		{name: "nameserver A is the DNS address", qname: "ns.dns.cluster.local.", qtype: mdns.TypeA, answer: []string{"A 127.0.0.1"}},
		{name: "NXDOMAIN: no such Service", qname: "nope" + d, qtype: mdns.TypeA, rcode: mdns.RcodeNameError, authSOA: true},
		{name: "NXDOMAIN: ndots search-path miss", qname: "web.dnstest.svc.cluster.local.dnstest.svc.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, authSOA: true},
		{name: "NXDOMAIN: not-ready endpoint name", qname: "web-2.nginx" + d, qtype: mdns.TypeA, rcode: mdns.RcodeNameError, authSOA: true},
		{name: "outside name forwarded", qname: "example.org.", qtype: mdns.TypeA, answer: []string{"A 192.0.2.20"}},
		{name: "outside name NXDOMAIN from upstream", qname: "nothing.example.", qtype: mdns.TypeA, rcode: mdns.RcodeNameError},
	}
	for _, proto := range []string{"udp", "tcp"} {
		for _, tc := range cases {
			t.Run(proto+"/"+tc.name, func(t *testing.T) {
				r := dnsQuery(t, addr, proto, tc.qname, tc.qtype, 0)
				if r.Rcode != tc.rcode {
					t.Fatalf("rcode %s, want %s\n%v", mdns.RcodeToString[r.Rcode], mdns.RcodeToString[tc.rcode], r)
				}
				if r.Truncated {
					t.Fatalf("TC set\n%v", r)
				}
				if r.Question[0].Name != tc.qname {
					t.Errorf("question echoed as %q, asked %q", r.Question[0].Name, tc.qname)
				}
				got := rrStrings(r.Answer)
				if tc.qtype == mdns.TypeSOA {
					for i := range got {
						if strings.HasPrefix(got[i], soa) {
							got[i] = "SOA"
						}
					}
				}
				if !slices.Equal(got, tc.answer) {
					t.Fatalf("answer %q, want %q\n%v", got, tc.answer, r)
				}
				for _, rr := range r.Answer {
					if strings.HasSuffix(rr.Header().Name, ".cluster.local.") && rr.Header().Ttl != 7 {
						t.Errorf("TTL %d of %s, want 7 (--dns-ttl)", rr.Header().Ttl, rr.Header().Name)
					}
				}
				if tc.authSOA {
					auth := rrStrings(r.Ns)
					if len(auth) != 1 || !strings.HasPrefix(auth[0], soa) || !strings.HasSuffix(auth[0], " 7") {
						t.Fatalf("authority %q, want the apex SOA with minimum 7\n%v", auth, r)
					}
				}
				if tc.extraSome && len(rrStrings(r.Extra)) == 0 {
					t.Errorf("no additional records\n%v", r)
				}
			})
		}
	}

	// Metrics on the server's registry.
	hc := httpClient(t, ts.Bundle().CACertPEM)
	m := raw(t, hc, "GET", ts.URL()+"/metrics", ts.Bundle().AdminToken, nil)
	for _, want := range []string{`skiff_dns_requests_total{rcode="NXDOMAIN",type="A"}`, "skiff_dns_request_duration_seconds_bucket"} {
		if !strings.Contains(string(m.body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestDNSServiceDelete(t *testing.T) {
	ts := startDNSServer(t, fakeUpstream(t, nil))
	addr := ts.DNSAddr()
	webIP := dnsFixture(t, ts.Client())
	rev, _ := mdns.ReverseAddr(webIP)
	waitDNS(t, addr, "web.dnstest.svc.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, 1)
	waitDNS(t, addr, rev, mdns.TypePTR, mdns.RcodeSuccess, 1)
	ctx := ctxT(t, 10*time.Second)
	if err := ts.Client().Delete(ctx, resServices, dnsNS, "web", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDNS(t, addr, "web.dnstest.svc.cluster.local.", mdns.TypeA, mdns.RcodeNameError, 0)
	waitDNS(t, addr, "_http._tcp.web.dnstest.svc.cluster.local.", mdns.TypeSRV, mdns.RcodeNameError, 0)
	waitDNS(t, addr, rev, mdns.TypePTR, mdns.RcodeNameError, 0) // in the service CIDR: authoritative
	for _, proto := range []string{"udp", "tcp"} {
		if r := dnsQuery(t, addr, proto, "web.dnstest.svc.cluster.local.", mdns.TypeA, 0); r.Rcode != mdns.RcodeNameError || len(r.Ns) != 1 {
			t.Errorf("%s after delete: %v", proto, r)
		}
	}
	// The other Services are untouched.
	waitDNS(t, addr, "nginx.dnstest.svc.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, 2)
	// The headless Service's slice goes away: no ready endpoint is NXDOMAIN.
	if err := ts.Client().Delete(ctx, resSlices, dnsNS, "nginx-1", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDNS(t, addr, "nginx.dnstest.svc.cluster.local.", mdns.TypeA, mdns.RcodeNameError, 0)
	// The pod goes: its name goes.
	if err := ts.Client().Delete(ctx, resPods, dnsNS, "client", client.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	waitDNS(t, addr, "10-244-5-20.dnstest.pod.cluster.local.", mdns.TypeA, mdns.RcodeNameError, 0)
}

func TestDNSHeadlessTruncation(t *testing.T) {
	ts := startDNSServer(t, fakeUpstream(t, nil))
	addr := ts.DNSAddr()
	ctx := ctxT(t, 30*time.Second)
	mustCreateNS(t, ts.Client(), dnsNS)
	big := service("big", api.ServiceTypeClusterIP, 80)
	big.Spec.Ports[0].Name = "http"
	big.Spec.ClusterIP = api.ClusterIPNone
	if err := ts.Client().Create(ctx, resServices, dnsNS, big); err != nil {
		t.Fatal(err)
	}
	// 120 endpoints in two slices, as the EndpointSlice controller splits them.
	var all []string
	for s, n := range []int{100, 20} {
		var eps []api.Endpoint
		for i := range n {
			ip := fmt.Sprintf("10.244.%d.%d", 20+s, i+1)
			all = append(all, "A "+ip)
			eps = append(eps, api.Endpoint{Addresses: []string{ip}})
		}
		if err := ts.Client().Create(ctx, resSlices, dnsNS, dnsSlice(fmt.Sprintf("big-%d", s), "big", 8080, eps...)); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(all)
	const name = "big.dnstest.svc.cluster.local."
	eventually(t, 10*time.Second, "120 endpoints over TCP", func() (bool, error) {
		r := dnsQuery(t, addr, "tcp", name, mdns.TypeA, 0)
		return len(r.Answer) == 120, fmt.Errorf("%d answers", len(r.Answer))
	})

	t.Run("udp 512: TC, no partial RRset", func(t *testing.T) {
		r := dnsQuery(t, addr, "udp", name, mdns.TypeA, 0)
		if !r.Truncated || r.Rcode != mdns.RcodeSuccess || len(r.Answer) != 0 {
			t.Fatalf("TC=%v rcode=%s answers=%d, want TC, NOERROR, none", r.Truncated, mdns.RcodeToString[r.Rcode], len(r.Answer))
		}
		if n := r.Len(); n > 512 {
			t.Fatalf("UDP answer of %d bytes", n)
		}
	})
	t.Run("tcp: whole", func(t *testing.T) {
		r := dnsQuery(t, addr, "tcp", name, mdns.TypeA, 0)
		if r.Truncated || !slices.Equal(rrStrings(r.Answer), all) {
			t.Fatalf("TC=%v, %d answers, want the 120 addresses", r.Truncated, len(r.Answer))
		}
	})
	t.Run("udp EDNS0 4096: whole", func(t *testing.T) {
		r := dnsQuery(t, addr, "udp", name, mdns.TypeA, 4096)
		if r.Truncated || !slices.Equal(rrStrings(r.Answer), all) {
			t.Fatalf("TC=%v, %d answers, want the 120 addresses", r.Truncated, len(r.Answer))
		}
	})
	t.Run("srv udp 512: TC; tcp: 120 targets", func(t *testing.T) {
		srv := "_http._tcp." + name
		if r := dnsQuery(t, addr, "udp", srv, mdns.TypeSRV, 0); !r.Truncated || len(r.Answer) != 0 {
			t.Fatalf("udp SRV: TC=%v answers=%d", r.Truncated, len(r.Answer))
		}
		if r := dnsQuery(t, addr, "tcp", srv, mdns.TypeSRV, 0); r.Truncated || len(r.Answer) != 120 {
			t.Fatalf("tcp SRV: TC=%v answers=%d", r.Truncated, len(r.Answer))
		}
	})
}

func TestDNSStopAndBusyPort(t *testing.T) {
	ts := startDNSServer(t, fakeUpstream(t, nil))
	addr := ts.DNSAddr()
	waitDNS(t, addr, "kubernetes.default.svc.cluster.local.", mdns.TypeA, mdns.RcodeSuccess, 1)

	// A second server on the same address fails to start.
	cfg := ts.Config() // DNSListen is addr
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s, err := server.Start(ctx, cfg, nil); err == nil {
		_ = s.Stop()
		t.Fatal("Start succeeded on a busy DNS address")
	} else if !strings.Contains(err.Error(), "--dns-listen") {
		t.Fatalf("Start error %v, want it to name --dns-listen", err)
	}

	ts.Stop()
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("DNS TCP still accepting after Stop")
	}
	// The UDP port is free again: Stop closed the socket.
	ap := netip.MustParseAddrPort(addr)
	pc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap))
	if err != nil {
		t.Fatalf("UDP port still held after Stop: %v", err)
	}
	pc.Close()
}

func TestNoDNSWithoutListen(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	if a := ts.DNSAddr(); a != "" {
		t.Fatalf("DNSAddr %q without --dns-listen", a)
	}
}
