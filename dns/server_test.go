package dns

import (
	"strings"
	"testing"

	mdns "github.com/miekg/dns"
)

const soaLine = "cluster.local. SOA ns.dns.cluster.local. hostmaster.cluster.local."

// TestRecords asks for every kind of cluster record over UDP and over TCP.
func TestRecords(t *testing.T) {
	store := fixtureStore(t)
	ts := startServer(t, Config{NameserverAddrs: addrs("10.244.0.1")}, store)

	tests := []struct {
		name   string
		qname  string
		qtype  uint16
		rcode  int
		answer []string
		extra  []string
		soa    bool // the apex SOA in the authority section (negative answer)
		// soaZone: the SOA of this zone in the authority section instead.
		soaZone string
	}{
		{name: "clusterIP A", qname: "web.default.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"web.default.svc.cluster.local. A 10.96.0.10"}},
		{name: "clusterIP AAAA", qname: "web.default.svc.cluster.local.", qtype: mdns.TypeAAAA,
			answer: []string{"web.default.svc.cluster.local. AAAA fd00:96::10"}},
		{name: "clusterIP ANY", qname: "web.default.svc.cluster.local.", qtype: mdns.TypeANY,
			answer: []string{"web.default.svc.cluster.local. A 10.96.0.10", "web.default.svc.cluster.local. AAAA fd00:96::10"}},
		{name: "IPv6-only service A is NODATA", qname: "dns6.kube-system.svc.cluster.local.", qtype: mdns.TypeA, soa: true},
		{name: "existing name missing type is NODATA", qname: "web.default.svc.cluster.local.", qtype: mdns.TypeMX, soa: true},
		{name: "missing service is NXDOMAIN", qname: "nope.default.svc.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "case-insensitive", qname: "WEB.Default.SVC.Cluster.Local.", qtype: mdns.TypeA,
			answer: []string{"web.default.svc.cluster.local. A 10.96.0.10"}},
		{name: "headless A is the ready endpoints", qname: "nginx.default.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{
				"nginx.default.svc.cluster.local. A 10.244.1.5",
				"nginx.default.svc.cluster.local. A 10.244.1.6",
				"nginx.default.svc.cluster.local. A 10.244.1.7",
			}},
		{name: "headless AAAA is NODATA", qname: "nginx.default.svc.cluster.local.", qtype: mdns.TypeAAAA, soa: true},
		{name: "headless without ready endpoints is NXDOMAIN (spec 2.4.1)", qname: "empty.default.svc.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "publishNotReadyAddresses", qname: "pnr.default.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"pnr.default.svc.cluster.local. A 10.244.2.9"}},
		{name: "endpoint hostname", qname: "web-0.nginx.default.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"web-0.nginx.default.svc.cluster.local. A 10.244.1.5"}},
		{name: "endpoint dashed address", qname: "10-244-1-7.nginx.default.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"10-244-1-7.nginx.default.svc.cluster.local. A 10.244.1.7"}},
		{name: "not-ready endpoint hostname is NXDOMAIN", qname: "web-2.nginx.default.svc.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "endpoint name of a clusterIP service is NXDOMAIN", qname: "web-0.web.default.svc.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "SRV of a clusterIP service", qname: "_http._tcp.web.default.svc.cluster.local.", qtype: mdns.TypeSRV,
			answer: []string{"_http._tcp.web.default.svc.cluster.local. SRV 0 100 80 web.default.svc.cluster.local."},
			extra:  []string{"web.default.svc.cluster.local. A 10.96.0.10", "web.default.svc.cluster.local. AAAA fd00:96::10"}},
		{name: "SRV of a UDP port", qname: "_dns._udp.web.default.svc.cluster.local.", qtype: mdns.TypeSRV,
			answer: []string{"_dns._udp.web.default.svc.cluster.local. SRV 0 100 53 web.default.svc.cluster.local."},
			extra:  []string{"web.default.svc.cluster.local. A 10.96.0.10", "web.default.svc.cluster.local. AAAA fd00:96::10"}},
		{name: "SRV of a headless service", qname: "_http._tcp.nginx.default.svc.cluster.local.", qtype: mdns.TypeSRV,
			answer: []string{
				"_http._tcp.nginx.default.svc.cluster.local. SRV 0 33 8080 10-244-1-7.nginx.default.svc.cluster.local.",
				"_http._tcp.nginx.default.svc.cluster.local. SRV 0 33 8080 web-0.nginx.default.svc.cluster.local.",
				"_http._tcp.nginx.default.svc.cluster.local. SRV 0 33 8080 web-1.nginx.default.svc.cluster.local.",
			},
			extra: []string{
				"10-244-1-7.nginx.default.svc.cluster.local. A 10.244.1.7",
				"web-0.nginx.default.svc.cluster.local. A 10.244.1.5",
				"web-1.nginx.default.svc.cluster.local. A 10.244.1.6",
			}},
		{name: "SRV name asked for A is NODATA", qname: "_http._tcp.web.default.svc.cluster.local.", qtype: mdns.TypeA, soa: true},
		{name: "SRV of a missing port is NXDOMAIN", qname: "_http._udp.web.default.svc.cluster.local.", qtype: mdns.TypeSRV,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "protocol label is an empty non-terminal", qname: "_tcp.web.default.svc.cluster.local.", qtype: mdns.TypeSRV, soa: true},
		{name: "protocol label of a headless service", qname: "_tcp.nginx.default.svc.cluster.local.", qtype: mdns.TypeSRV, soa: true},
		{name: "protocol label of a headless service without such ports", qname: "_udp.nginx.default.svc.cluster.local.", qtype: mdns.TypeSRV,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "protocol label without ports is NXDOMAIN", qname: "_sctp.web.default.svc.cluster.local.", qtype: mdns.TypeSRV,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "ExternalName is a CNAME", qname: "ext.default.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"ext.default.svc.cluster.local. CNAME www.example.com."}},
		{name: "ExternalName asked for CNAME", qname: "ext.default.svc.cluster.local.", qtype: mdns.TypeCNAME,
			answer: []string{"ext.default.svc.cluster.local. CNAME www.example.com."}},
		{name: "ExternalName to a cluster name is followed", qname: "alias.default.svc.cluster.local.", qtype: mdns.TypeA,
			answer: []string{
				"alias.default.svc.cluster.local. CNAME web.default.svc.cluster.local.",
				"web.default.svc.cluster.local. A 10.96.0.10",
			}},
		{name: "ExternalName to a cluster name without the type", qname: "alias.default.svc.cluster.local.", qtype: mdns.TypeTXT,
			answer: []string{"alias.default.svc.cluster.local. CNAME web.default.svc.cluster.local."}, soa: true},
		{name: "PTR of a ClusterIP", qname: "10.0.96.10.in-addr.arpa.", qtype: mdns.TypePTR,
			answer: []string{"10.0.96.10.in-addr.arpa. PTR web.default.svc.cluster.local."}},
		{name: "PTR of an IPv6 ClusterIP", qname: "0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.0.d.f.ip6.arpa.", qtype: mdns.TypePTR,
			answer: []string{"0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.0.d.f.ip6.arpa. PTR web.default.svc.cluster.local."}},
		{name: "PTR of a headless endpoint with hostname", qname: "5.1.244.10.in-addr.arpa.", qtype: mdns.TypePTR,
			answer: []string{"5.1.244.10.in-addr.arpa. PTR web-0.nginx.default.svc.cluster.local."}},
		{name: "PTR of a headless endpoint without hostname", qname: "7.1.244.10.in-addr.arpa.", qtype: mdns.TypePTR,
			answer: []string{"7.1.244.10.in-addr.arpa. PTR 10-244-1-7.nginx.default.svc.cluster.local."}},
		{name: "known address asked for A is NODATA", qname: "5.1.244.10.in-addr.arpa.", qtype: mdns.TypeA,
			soaZone: "1.244.10.in-addr.arpa."},
		{name: "pod A", qname: "10-244-1-5.default.pod.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"10-244-1-5.default.pod.cluster.local. A 10.244.1.5"}},
		{name: "pod AAAA", qname: "fd00-244--3.other.pod.cluster.local.", qtype: mdns.TypeAAAA,
			answer: []string{"fd00-244--3.other.pod.cluster.local. AAAA fd00:244::3"}},
		{name: "pod IP in another namespace is NXDOMAIN", qname: "10-244-1-5.other.pod.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "no pod has the IP", qname: "10-244-9-9.default.pod.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "non-canonical pod name", qname: "010-244-1-5.default.pod.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "apex SOA", qname: "cluster.local.", qtype: mdns.TypeSOA, answer: []string{"SOA"}},
		{name: "apex NS", qname: "cluster.local.", qtype: mdns.TypeNS,
			answer: []string{"cluster.local. NS ns.dns.cluster.local."},
			extra:  []string{"ns.dns.cluster.local. A 10.244.0.1"}},
		{name: "apex A is NODATA", qname: "cluster.local.", qtype: mdns.TypeA, soa: true},
		{name: "nameserver address", qname: "ns.dns.cluster.local.", qtype: mdns.TypeA,
			answer: []string{"ns.dns.cluster.local. A 10.244.0.1"}},
		{name: "dns-version", qname: "dns-version.cluster.local.", qtype: mdns.TypeTXT,
			answer: []string{`dns-version.cluster.local. TXT "1.1.0"`}},
		{name: "svc is an empty non-terminal", qname: "svc.cluster.local.", qtype: mdns.TypeA, soa: true},
		{name: "namespace is an empty non-terminal", qname: "default.svc.cluster.local.", qtype: mdns.TypeA, soa: true},
		{name: "namespace without services is NXDOMAIN", qname: "nobody.svc.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "pod is an empty non-terminal", qname: "pod.cluster.local.", qtype: mdns.TypeA, soa: true},
		{name: "pod namespace is an empty non-terminal", qname: "other.pod.cluster.local.", qtype: mdns.TypeA, soa: true},
		{name: "unknown name in the zone", qname: "foo.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, soa: true},
		{name: "too many labels", qname: "a.b.c.d.e.svc.cluster.local.", qtype: mdns.TypeA,
			rcode: mdns.RcodeNameError, soa: true},
	}
	for _, network := range []string{"udp", "tcp"} {
		for _, tc := range tests {
			t.Run(network+"/"+tc.name, func(t *testing.T) {
				r := ts.ask(t, network, tc.qname, tc.qtype)
				if r.Rcode != tc.rcode {
					t.Fatalf("rcode %s, want %s\n%v", mdns.RcodeToString[r.Rcode], mdns.RcodeToString[tc.rcode], r)
				}
				if !r.Authoritative || !r.Response || r.Truncated {
					t.Errorf("flags aa=%v qr=%v tc=%v, want aa qr !tc", r.Authoritative, r.Response, r.Truncated)
				}
				if len(r.Question) != 1 || r.Question[0].Name != tc.qname {
					t.Errorf("question %v, want %s echoed", r.Question, tc.qname)
				}
				got := rrStrings(r.Answer)
				if len(tc.answer) == 1 && tc.answer[0] == "SOA" {
					if len(r.Answer) != 1 || !strings.HasPrefix(got[0], soaLine) {
						t.Fatalf("answer %v, want the apex SOA", got)
					}
				} else if !equalStrings(got, tc.answer) {
					t.Errorf("answer\n got %q\nwant %q", got, tc.answer)
				}
				if got := rrStrings(r.Extra); !equalStrings(got, tc.extra) {
					t.Errorf("extra\n got %q\nwant %q", got, tc.extra)
				}
				checkAuthority(t, r, tc.soa, tc.soaZone)
				for _, rr := range append(r.Answer, r.Ns...) {
					if rr.Header().Ttl != 5 {
						t.Errorf("ttl %d, want 5: %v", rr.Header().Ttl, rr)
					}
				}
			})
		}
	}
}

// checkAuthority checks that a negative answer carries exactly the SOA of
// zone (the apex when zone is empty) and a positive one no authority.
func checkAuthority(t *testing.T, r *mdns.Msg, soa bool, zone string) {
	t.Helper()
	if !soa && zone == "" {
		if len(r.Ns) != 0 {
			t.Errorf("authority %v, want none", r.Ns)
		}
		return
	}
	if zone == "" {
		zone = "cluster.local."
	}
	if len(r.Ns) != 1 {
		t.Fatalf("authority %v, want one SOA", r.Ns)
	}
	s, ok := r.Ns[0].(*mdns.SOA)
	if !ok || s.Hdr.Name != zone || s.Ns != "ns.dns.cluster.local." || s.Minttl != 5 {
		t.Errorf("authority %v, want the SOA of %s with minimum 5", r.Ns[0], zone)
	}
}
