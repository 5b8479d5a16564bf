package dns

import (
	"net"
	"net/netip"
	"slices"
	"strings"

	mdns "github.com/miekg/dns"
)

// dnsSchemaVersion is the Kubernetes DNS specification version served at
// dns-version.<domain>.
const dnsSchemaVersion = "1.1.0"

// nodeKind classifies a name in the cluster domain.
type nodeKind uint8

const (
	nodeNone     nodeKind = iota // does not exist: NXDOMAIN
	nodeEmpty                    // exists without records (empty non-terminal): NODATA
	nodeApex                     // <domain>: SOA, NS
	nodeNS                       // ns.dns.<domain>: NameserverAddrs
	nodeVersion                  // dns-version.<domain>: TXT
	nodeService                  // <svc>.<ns>.svc.<domain>
	nodeEndpoint                 // <label>.<svc>.<ns>.svc.<domain> (headless)
	nodeSRV                      // _<port>._<proto>.<svc>.<ns>.svc.<domain>
	nodePod                      // <dashed-ip>.<ns>.pod.<domain>
)

type node struct {
	kind  nodeKind
	view  *svcView
	label string // nodeEndpoint
	port  string // nodeSRV: port name
	proto string // nodeSRV: protocol label
	svcFQ string // nodeSRV: lowercase FQDN of the Service
	addr  netip.Addr
}

// resolve classifies the lowercase name lname (in the cluster domain).
func (s *Server) resolve(lname string) node {
	if lname == s.st.zone {
		return node{kind: nodeApex}
	}
	rel := lname[:len(lname)-len(s.st.dotZone)]
	if strings.IndexByte(rel, '\\') >= 0 {
		return node{} // escaped bytes: never one of our names
	}
	rest, last := lastLabel(rel)
	switch last {
	case "svc":
		return s.resolveSvc(lname, rest)
	case "pod":
		if rest == "" {
			return node{kind: nodeEmpty}
		}
		label, ns := firstLabel(rest)
		if ns == "" {
			if s.store.hasPodNamespace(label) {
				return node{kind: nodeEmpty}
			}
			return node{}
		}
		if strings.IndexByte(ns, '.') >= 0 {
			return node{}
		}
		a, ok := parseDashed(label)
		if ok && s.store.podExists(ns, a) {
			return node{kind: nodePod, addr: a}
		}
		return node{}
	case "dns-version":
		if rest == "" {
			return node{kind: nodeVersion}
		}
	case "dns":
		switch rest {
		case "":
			return node{kind: nodeEmpty}
		case "ns":
			return node{kind: nodeNS}
		}
	}
	return node{}
}

// resolveSvc classifies <rest>.svc.<domain>.
func (s *Server) resolveSvc(lname, rest string) node {
	if rest == "" {
		return node{kind: nodeEmpty} // svc.<domain>
	}
	switch strings.Count(rest, ".") {
	case 0: // <ns>
		if s.store.hasServiceNamespace(rest) {
			return node{kind: nodeEmpty}
		}
	case 1: // <svc>.<ns>
		if v := s.store.service(rest); v != nil && v.hasRecords() {
			return node{kind: nodeService, view: v}
		}
	case 2: // <label>.<svc>.<ns> or _<proto>.<svc>.<ns>
		label, key := firstLabel(rest)
		v := s.store.service(key)
		if v == nil || !v.hasRecords() {
			return node{}
		}
		if strings.HasPrefix(label, "_") {
			if v.hasProto(label[1:]) {
				return node{kind: nodeEmpty}
			}
			return node{}
		}
		if v.kind == kindHeadless && len(v.hostAddrs(label)) > 0 {
			return node{kind: nodeEndpoint, view: v, label: label}
		}
	case 3: // _<port>._<proto>.<svc>.<ns>
		port, r2 := firstLabel(rest)
		proto, key := firstLabel(r2)
		if len(port) < 2 || len(proto) < 2 || port[0] != '_' || proto[0] != '_' {
			return node{}
		}
		v := s.store.service(key)
		if v == nil || !v.hasRecords() {
			return node{}
		}
		n := node{kind: nodeSRV, view: v, port: port[1:], proto: proto[1:], svcFQ: lname[len(port)+len(proto)+2:]}
		switch v.kind {
		case kindClusterIP:
			if _, ok := v.servicePort(n.port, n.proto); ok {
				return n
			}
		case kindHeadless:
			if len(v.srvTargets(n.port, n.proto)) > 0 {
				return n
			}
		}
	}
	return node{}
}

// answerCluster answers qtype for a name in the cluster domain into m: the
// records, NODATA or NXDOMAIN with the SOA. owner is the name as asked (the
// records' owner, so that it compresses against the question), lname its
// lowercase form. depth counts CNAMEs followed inside the cluster.
func (s *Server) answerCluster(q *query, m *mdns.Msg, owner, lname string, qtype uint16, depth int) {
	n := s.resolve(lname)
	rot := int(q.req.Id)
	before := len(m.Answer)
	switch n.kind {
	case nodeNone:
		m.Rcode = mdns.RcodeNameError
	case nodeEmpty:
	case nodeApex:
		switch qtype {
		case mdns.TypeSOA:
			m.Answer = append(m.Answer, s.apexSOA())
		case mdns.TypeNS:
			m.Answer = append(m.Answer, s.ns...)
			m.Extra = append(m.Extra, s.nsA...)
		case mdns.TypeANY:
			m.Answer = append(m.Answer, s.apexSOA())
			m.Answer = append(m.Answer, s.ns...)
		}
	case nodeNS:
		m.Answer = s.appendAddrs(m.Answer, owner, s.st.nsAddrs, qtype, 0)
	case nodeVersion:
		if qtype == mdns.TypeTXT || qtype == mdns.TypeANY {
			m.Answer = append(m.Answer, &mdns.TXT{Hdr: s.hdr(owner, mdns.TypeTXT), Txt: []string{dnsSchemaVersion}})
		}
	case nodeService:
		v := n.view
		if v.kind == kindExternal {
			s.answerCNAME(q, m, owner, v.target, qtype, depth)
			return
		}
		m.Answer = s.appendAddrs(m.Answer, owner, v.v4, qtype, rot)
		m.Answer = s.appendAddrs(m.Answer, owner, v.v6, qtype, rot)
	case nodeEndpoint:
		m.Answer = s.appendHosts(m.Answer, owner, n.view.hostAddrs(n.label), qtype)
	case nodeSRV:
		if qtype == mdns.TypeSRV || qtype == mdns.TypeANY {
			s.answerSRV(m, owner, n, rot)
		}
	case nodePod:
		m.Answer = s.appendAddrs(m.Answer, owner, []netip.Addr{n.addr}, qtype, 0)
	}
	if len(m.Answer) == before {
		m.Ns = append(m.Ns, s.apexSOA())
	}
}

// answerCNAME answers an ExternalName Service: the CNAME, then the target's
// records of qtype: from the Store for a cluster name, from the upstreams
// (cache first) for an outside name when the client asked for recursion.
// The rcode is the target's (RFC 6604); an upstream failure leaves the CNAME
// alone with NOERROR.
func (s *Server) answerCNAME(q *query, m *mdns.Msg, owner, target string, qtype uint16, depth int) {
	m.Answer = append(m.Answer, &mdns.CNAME{Hdr: s.hdr(owner, mdns.TypeCNAME), Target: target})
	if qtype == mdns.TypeCNAME || qtype == mdns.TypeANY {
		return
	}
	if s.inZone(target) {
		if depth >= maxCNAMEChain {
			return
		}
		s.answerCluster(q, m, target, target, qtype, depth+1)
		return
	}
	if s.fwd == nil || !q.req.RecursionDesired {
		return
	}
	r, age, err := s.fwd.lookup(mdns.Question{Name: target, Qtype: qtype, Qclass: mdns.ClassINET})
	if err != nil {
		return
	}
	switch r.Rcode {
	case mdns.RcodeSuccess, mdns.RcodeNameError:
		m.Rcode = r.Rcode
		m.Answer = copyAged(m.Answer, r.Answer, age)
		if len(r.Answer) == 0 {
			m.Ns = copyAged(m.Ns, r.Ns, age)
		}
	}
}

// answerSRV adds the SRV records of n and their targets' address records.
func (s *Server) answerSRV(m *mdns.Msg, owner string, n node, rot int) {
	v := n.view
	if v.kind == kindClusterIP {
		p, _ := v.servicePort(n.port, n.proto)
		m.Answer = append(m.Answer, &mdns.SRV{Hdr: s.hdr(owner, mdns.TypeSRV), Priority: 0, Weight: 100, Port: p.port, Target: n.svcFQ})
		m.Extra = s.appendAddrs(m.Extra, n.svcFQ, v.v4, mdns.TypeA, rot)
		m.Extra = s.appendAddrs(m.Extra, n.svcFQ, v.v6, mdns.TypeAAAA, rot)
		return
	}
	ts := v.srvTargets(n.port, n.proto)
	// All target names in one allocation: "<label>.<svcFQ>" back to back.
	size := 0
	for _, t := range ts {
		size += len(t.label) + 1 + len(n.svcFQ)
	}
	var b strings.Builder
	b.Grow(size)
	for _, t := range ts {
		b.WriteString(t.label)
		b.WriteByte('.')
		b.WriteString(n.svcFQ)
	}
	all := b.String()
	weight := uint16(max(1, 100/len(ts)))
	recs := make([]mdns.SRV, len(ts))
	start := len(m.Answer)
	m.Answer = slices.Grow(m.Answer, len(ts))[:start+len(ts)]
	type owned struct {
		owner string
		addr  netip.Addr
	}
	extra := make([]owned, 0, len(ts))
	off := 0
	prev := ""
	for i, t := range ts {
		l := len(t.label) + 1 + len(n.svcFQ)
		name := all[off : off+l]
		off += l
		recs[i] = mdns.SRV{Hdr: s.hdr(owner, mdns.TypeSRV), Priority: 0, Weight: weight, Port: t.port, Target: name}
		m.Answer[start+(i+rot)%len(ts)] = &recs[i]
		if t.label != prev { // targets are sorted by label: add each one's addresses once
			for _, h := range v.hostAddrs(t.label) {
				extra = append(extra, owned{owner: name, addr: h.addr})
			}
			prev = t.label
		}
	}
	m.Extra = s.appendAddrRecords(m.Extra, len(extra), func(i int) (string, netip.Addr) { return extra[i].owner, extra[i].addr }, mdns.TypeANY)
}

// appendAddrs appends the A (or AAAA) records of the addresses of the family
// qtype asks for (both for ANY), starting at index rot so that clients that
// take the first address spread over all of them.
func (s *Server) appendAddrs(dst []mdns.RR, owner string, addrs []netip.Addr, qtype uint16, rot int) []mdns.RR {
	n := len(addrs)
	return s.appendAddrRecords(dst, n, func(i int) (string, netip.Addr) { return owner, addrs[(i+rot)%n] }, qtype)
}

// appendHosts appends the address records of one endpoint label.
func (s *Server) appendHosts(dst []mdns.RR, owner string, hs []hostAddr, qtype uint16) []mdns.RR {
	return s.appendAddrRecords(dst, len(hs), func(i int) (string, netip.Addr) { return owner, hs[i].addr }, qtype)
}

// appendAddrRecords appends A and AAAA records for the n (owner, address)
// pairs that rec returns, keeping those qtype wants. The records and their
// address bytes come from one allocation per family, not one per record.
func (s *Server) appendAddrRecords(dst []mdns.RR, n int, rec func(int) (string, netip.Addr), qtype uint16) []mdns.RR {
	n4, n6 := 0, 0
	for i := range n {
		if _, a := rec(i); wants(qtype, a) {
			if a.Is4() {
				n4++
			} else {
				n6++
			}
		}
	}
	if n4+n6 == 0 {
		return dst
	}
	dst = slices.Grow(dst, n4+n6)
	var (
		as  []mdns.A
		as6 []mdns.AAAA
		ip4 []byte
		ip6 []byte
		i4  int
		i6  int
	)
	if n4 > 0 {
		as, ip4 = make([]mdns.A, n4), make([]byte, 4*n4)
	}
	if n6 > 0 {
		as6, ip6 = make([]mdns.AAAA, n6), make([]byte, 16*n6)
	}
	for i := range n {
		owner, a := rec(i)
		if !wants(qtype, a) {
			continue
		}
		if a.Is4() {
			v := a.As4()
			ip := ip4[4*i4 : 4*i4+4 : 4*i4+4]
			copy(ip, v[:])
			as[i4] = mdns.A{Hdr: s.hdr(owner, mdns.TypeA), A: net.IP(ip)}
			dst = append(dst, &as[i4])
			i4++
			continue
		}
		v := a.As16()
		ip := ip6[16*i6 : 16*i6+16 : 16*i6+16]
		copy(ip, v[:])
		as6[i6] = mdns.AAAA{Hdr: s.hdr(owner, mdns.TypeAAAA), AAAA: net.IP(ip)}
		dst = append(dst, &as6[i6])
		i6++
	}
	return dst
}

func wants(qtype uint16, a netip.Addr) bool {
	switch qtype {
	case mdns.TypeA:
		return a.Is4()
	case mdns.TypeAAAA:
		return a.Is6()
	case mdns.TypeANY:
		return true
	}
	return false
}

// addrRR is an A or AAAA record for a; h.Rrtype is set from a's family.
func addrRR(h mdns.RR_Header, a netip.Addr) mdns.RR {
	if a.Is4() {
		h.Rrtype = mdns.TypeA
		return &mdns.A{Hdr: h, A: net.IP(a.AsSlice())}
	}
	h.Rrtype = mdns.TypeAAAA
	return &mdns.AAAA{Hdr: h, AAAA: net.IP(a.AsSlice())}
}

func (s *Server) hdr(owner string, t uint16) mdns.RR_Header {
	return mdns.RR_Header{Name: owner, Rrtype: t, Class: mdns.ClassINET, Ttl: s.st.ttl}
}

// apexSOA is the SOA of the cluster domain, rebuilt when the Store's serial
// moves. Its minimum (the negative-caching TTL) is the record TTL.
func (s *Server) apexSOA() mdns.RR {
	serial := s.store.Serial()
	if soa := s.soa.Load(); soa != nil && soa.Serial == serial {
		return soa
	}
	soa := s.newSOA(s.st.zone, serial)
	s.soa.Store(soa)
	return soa
}

func (s *Server) reverseSOA(zone string) mdns.RR {
	return s.newSOA(zone, s.store.Serial())
}

func (s *Server) newSOA(zone string, serial uint32) *mdns.SOA {
	return &mdns.SOA{
		Hdr:     s.hdr(zone, mdns.TypeSOA),
		Ns:      "ns.dns." + s.st.zone,
		Mbox:    "hostmaster." + s.st.zone,
		Serial:  serial,
		Refresh: 7200,
		Retry:   1800,
		Expire:  86400,
		Minttl:  s.st.ttl,
	}
}
