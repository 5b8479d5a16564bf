package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"strings"

	mdns "github.com/miekg/dns"

	"github.com/skiff-dev/skiff/api"
)

// params sizes the generated cluster. The same params always generate the
// same objects, so the serving child, the zone file and the query file
// agree without passing data around.
type params struct {
	Services   int // total, every kind
	Endpoints  int // total, spread over the Services that have endpoints
	Namespaces int
	Seed       uint64 // query mix order
}

// kinds of generated Services: every 10th (i%10 == 9) is headless with
// StatefulSet hostnames, every 100th (i%100 == 55) an ExternalName aliasing
// the next Service, the rest ClusterIP.
const (
	kindClusterIP = iota
	kindHeadless
	kindExternal
)

func kindOf(i int) int {
	switch {
	case i%100 == 55:
		return kindExternal
	case i%10 == 9:
		return kindHeadless
	}
	return kindClusterIP
}

func svcName(i int) string {
	switch kindOf(i) {
	case kindHeadless:
		return fmt.Sprintf("db-%05d", i)
	case kindExternal:
		return fmt.Sprintf("ext-%05d", i)
	}
	return fmt.Sprintf("svc-%05d", i)
}

func (p params) nsOf(i int) string { return fmt.Sprintf("ns-%02d", i%p.Namespaces) }

// clusterIP of Service i: 10.96.0.0/16 from 10.96.1.0 on.
func clusterIP(i int) netip.Addr {
	n := i + 256
	return netip.AddrFrom4([4]byte{10, 96, byte(n >> 8), byte(n)})
}

// podIP of endpoint n: 10.244.0.0/16 from 10.244.0.1 on.
func podIP(n int) netip.Addr {
	n++
	return netip.AddrFrom4([4]byte{10, 244, byte(n >> 8), byte(n)})
}

// generated is one Service with its slices and pods, as the API holds them.
type generated struct {
	idx    int
	svc    *api.Service
	slices []*api.EndpointSlice
	pods   []*api.Pod
	eps    []netip.Addr // endpoint addresses, in order
}

// validate rejects sizes the address plan cannot hold.
func (p params) validate() error {
	if p.Services < 200 || p.Services > 65000 || p.Endpoints < 0 || p.Endpoints > 65000 || p.Namespaces < 1 || p.Namespaces > 100 {
		return fmt.Errorf("dnsbench: want 200 <= services <= 65000, 0 <= endpoints <= 65000, 1 <= namespaces <= 100")
	}
	return nil
}

// each calls f for every generated Service in order. The objects are new
// on each call; f may keep them.
func (p params) each(f func(g generated)) {
	withEps := 0
	for i := range p.Services {
		if kindOf(i) != kindExternal {
			withEps++
		}
	}
	next := 0 // next endpoint number
	k := 0    // index among the Services with endpoints
	for i := range p.Services {
		ns, name := p.nsOf(i), svcName(i)
		g := generated{idx: i}
		svc := &api.Service{
			TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name, UID: fmt.Sprintf("uid-svc-%d", i)},
			Spec: api.ServiceSpec{
				Type:     api.ServiceTypeClusterIP,
				Selector: map[string]string{"app": name},
				Ports:    []api.ServicePort{{Name: "http", Protocol: api.ProtocolTCP, Port: 80, TargetPort: api.FromInt32(8080)}},
			},
		}
		g.svc = svc
		switch kindOf(i) {
		case kindExternal:
			svc.Spec = api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: p.fqdn(i + 1)}
			f(g)
			continue
		case kindHeadless:
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = api.ClusterIPNone, []string{api.ClusterIPNone}
		default:
			ip := clusterIP(i).String()
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = ip, []string{ip}
		}
		n := p.Endpoints / withEps
		if k < p.Endpoints%withEps {
			n++
		}
		k++
		var cur *api.EndpointSlice
		for j := range n {
			if j%100 == 0 {
				pn, proto, port := "http", api.ProtocolTCP, int32(8080)
				cur = &api.EndpointSlice{
					TypeMeta: api.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
					ObjectMeta: api.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%05x", name, i*7+j/100),
						Labels: map[string]string{api.LabelServiceName: name}},
					AddressType: api.AddressTypeIPv4,
					Ports:       []api.EndpointPort{{Name: &pn, Protocol: &proto, Port: &port}},
				}
				g.slices = append(g.slices, cur)
			}
			addr := podIP(next)
			next++
			podName := fmt.Sprintf("%s-%d", name, j)
			ready, node := true, fmt.Sprintf("node-%d", j%10)
			ep := api.Endpoint{
				Addresses:  []string{addr.String()},
				Conditions: api.EndpointConditions{Ready: &ready, Serving: &ready},
				NodeName:   &node,
				TargetRef:  &api.ObjectReference{Kind: "Pod", Namespace: ns, Name: podName},
			}
			if kindOf(i) == kindHeadless {
				h := fmt.Sprintf("web-%d", j)
				ep.Hostname = &h
			}
			cur.Endpoints = append(cur.Endpoints, ep)
			g.eps = append(g.eps, addr)
			g.pods = append(g.pods, &api.Pod{
				TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: api.ObjectMeta{Namespace: ns, Name: podName},
				Status: api.PodStatus{Phase: api.PodRunning, PodIP: addr.String(),
					PodIPs: []api.PodIP{{IP: addr.String()}}},
			})
		}
		f(g)
	}
}

func (p params) fqdn(i int) string {
	return svcName(i) + "." + p.nsOf(i) + ".svc.cluster.local."
}

func dashed(a netip.Addr) string { return strings.ReplaceAll(a.String(), ".", "-") }

// writeZones writes the CoreDNS zone files: cluster.local (Services,
// endpoint names, SRV, ExternalName CNAMEs, pods) and 10.in-addr.arpa (PTR
// of ClusterIPs and headless endpoints), with the records Skiff serves for
// the same objects. TTL 5, as --dns-ttl's default. The apex NS record is
// left out: with it the file plugin adds it to the authority section of
// every positive answer, which neither Skiff nor CoreDNS's kubernetes
// plugin does (and the mix asks no NS).
func (p params) writeZones(cluster, reverse io.Writer) error {
	cw, rw := bufio.NewWriter(cluster), bufio.NewWriter(reverse)
	fmt.Fprint(cw, "$ORIGIN cluster.local.\n$TTL 5\n"+
		"@ IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 5\n"+
		"ns.dns IN A 127.0.0.1\n"+
		"dns-version IN TXT \"1.1.0\"\n")
	fmt.Fprint(rw, "$ORIGIN 10.in-addr.arpa.\n$TTL 5\n"+
		"@ IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1 7200 1800 86400 5\n")
	ptr := func(a netip.Addr, target string) {
		b := a.As4()
		fmt.Fprintf(rw, "%d.%d.%d IN PTR %s\n", b[3], b[2], b[1], target)
	}
	p.each(func(g generated) {
		i := g.idx
		rel := svcName(i) + "." + p.nsOf(i) + ".svc"
		switch kindOf(i) {
		case kindExternal:
			fmt.Fprintf(cw, "%s IN CNAME %s\n", rel, g.svc.Spec.ExternalName)
		case kindClusterIP:
			fmt.Fprintf(cw, "%s IN A %s\n", rel, clusterIP(i))
			fmt.Fprintf(cw, "_http._tcp.%s IN SRV 0 100 80 %s\n", rel, p.fqdn(i))
			ptr(clusterIP(i), p.fqdn(i))
		case kindHeadless:
			w := max(1, 100/max(1, len(g.eps)))
			for j, a := range g.eps {
				host := fmt.Sprintf("web-%d.%s", j, p.fqdn(i))
				fmt.Fprintf(cw, "%s IN A %s\n", rel, a)
				fmt.Fprintf(cw, "web-%d.%s IN A %s\n", j, rel, a)
				fmt.Fprintf(cw, "_http._tcp.%s IN SRV 0 %d 8080 %s\n", rel, w, host)
				ptr(a, host)
			}
		}
		for _, a := range g.eps {
			fmt.Fprintf(cw, "%s.%s.pod IN A %s\n", dashed(a), p.nsOf(i), a)
		}
	})
	if err := cw.Flush(); err != nil {
		return err
	}
	return rw.Flush()
}

// query is one line of the dnsperf file and what Skiff should answer.
type query struct {
	name    string // FQDN
	qtype   uint16
	rcode   int
	answers int // answer records (CNAME chains count each record)
}

// queries builds n queries as pods with ndots:5 send them: glibc asks A and
// AAAA for each candidate of the search list
// (<ns>.svc.cluster.local svc.cluster.local cluster.local) until one
// exists. Lookups that would end outside the cluster domain stop before the
// final, forwarded, question: the benchmark never leaves 127.0.0.1.
func (p params) queries(n int) []query {
	type svcInfo struct {
		i   int
		eps int
	}
	var clusterIPs, headless, externals []svcInfo
	p.each(func(g generated) {
		si := svcInfo{i: g.idx, eps: len(g.eps)}
		switch kindOf(g.idx) {
		case kindClusterIP:
			clusterIPs = append(clusterIPs, si)
		case kindHeadless:
			if si.eps > 0 {
				headless = append(headless, si)
			}
		case kindExternal:
			externals = append(externals, si)
		}
	})
	r := rand.New(rand.NewPCG(p.Seed, 42))
	pick := func(s []svcInfo) svcInfo { return s[r.IntN(len(s))] }
	const d = "cluster.local."
	var out []query
	nx := func(name string) {
		out = append(out, query{name, mdns.TypeA, mdns.RcodeNameError, 0}, query{name, mdns.TypeAAAA, mdns.RcodeNameError, 0})
	}
	// hit: A answered with a records, AAAA NODATA (IPv4-only cluster).
	hit := func(name string, a int) {
		out = append(out, query{name, mdns.TypeA, mdns.RcodeSuccess, a}, query{name, mdns.TypeAAAA, mdns.RcodeSuccess, 0})
	}
	// search walks the search list for a name with fewer than 5 dots.
	search := func(src, name string) {
		for _, suffix := range []string{src + ".svc." + d, "svc." + d, d} {
			nx(name + "." + suffix)
		}
	}
	for len(out) < n {
		src := p.nsOf(r.IntN(p.Namespaces)) // the asking pod's namespace
		w := r.IntN(100)
		switch {
		case w < 30: // "svc-x" from its own namespace: first candidate exists
			s := pick(clusterIPs)
			hit(svcName(s.i)+"."+p.nsOf(s.i)+".svc."+d, 1)
		case w < 50: // "svc-x.ns-y" from another namespace
			s := pick(clusterIPs)
			nx(svcName(s.i) + "." + p.nsOf(s.i) + "." + src + ".svc." + d)
			hit(svcName(s.i)+"."+p.nsOf(s.i)+".svc."+d, 1)
		case w < 62: // "svc-x.ns-y.svc.cluster.local" without the dot: 3 misses first
			s := pick(clusterIPs)
			name := svcName(s.i) + "." + p.nsOf(s.i) + ".svc.cluster.local"
			search(src, name)
			hit(name+".", 1)
		case w < 72: // headless "db-x.ns-y"
			s := pick(headless)
			nx(svcName(s.i) + "." + p.nsOf(s.i) + "." + src + ".svc." + d)
			hit(svcName(s.i)+"."+p.nsOf(s.i)+".svc."+d, s.eps)
		case w < 77: // StatefulSet pod "web-0.db-x.ns-y.svc.cluster.local" (5 dots: asked as is)
			s := pick(headless)
			hit(fmt.Sprintf("web-%d.%s", r.IntN(s.eps), p.fqdn(s.i)), 1)
		case w < 82: // SRV of a ClusterIP Service
			s := pick(clusterIPs)
			out = append(out, query{"_http._tcp." + p.fqdn(s.i), mdns.TypeSRV, mdns.RcodeSuccess, 1})
		case w < 85: // SRV of a headless Service
			s := pick(headless)
			out = append(out, query{"_http._tcp." + p.fqdn(s.i), mdns.TypeSRV, mdns.RcodeSuccess, s.eps})
		case w < 87: // ExternalName aliasing a cluster Service: CNAME + A
			s := pick(externals)
			name := svcName(s.i) + "." + p.nsOf(s.i) + ".svc." + d
			out = append(out, query{name, mdns.TypeA, mdns.RcodeSuccess, 2}, query{name, mdns.TypeAAAA, mdns.RcodeSuccess, 1})
		case w < 89: // PTR of a ClusterIP
			s := pick(clusterIPs)
			rev, _ := mdns.ReverseAddr(clusterIP(s.i).String())
			out = append(out, query{rev, mdns.TypePTR, mdns.RcodeSuccess, 1})
		case w < 94: // a Service that does not exist: "missing-x.ns-y"
			search(src, fmt.Sprintf("missing-%d.%s", r.IntN(100000), p.nsOf(r.IntN(p.Namespaces))))
		default: // an outside name ("api.example.com"): the in-cluster misses
			search(src, fmt.Sprintf("api%d.example.com", r.IntN(50)))
		}
	}
	return out[:n]
}

// writeQueries writes qs in dnsperf's format ("name TYPE").
func writeQueries(w io.Writer, qs []query) error {
	bw := bufio.NewWriter(w)
	for _, q := range qs {
		fmt.Fprintf(bw, "%s %s\n", q.name, mdns.TypeToString[q.qtype])
	}
	return bw.Flush()
}
