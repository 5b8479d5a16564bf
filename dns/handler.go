package dns

import (
	"net/netip"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	mdns "github.com/miekg/dns"
)

// maxCNAMEChain bounds how many in-cluster CNAMEs (ExternalName Services
// pointing at cluster names) one answer follows.
const maxCNAMEChain = 8

// Response size limits.
const (
	minUDPSize = 512  // without EDNS0 (RFC 1035), and the floor with it
	maxUDPSize = 4096 // the most of a client's EDNS0 size we honour
	maxTCPSize = 65535
)

// ServeDNS answers one query. It never panics: a panic while answering is
// logged and answered SERVFAIL.
func (s *Server) ServeDNS(w mdns.ResponseWriter, r *mdns.Msg) {
	start := time.Now()
	q := queryPool.Get().(*query)
	*q = query{req: r, typeIdx: typeNone, source: srcRejected, rcode: -1}
	defer s.finish(w, q, start)
	if r == nil || r.Response {
		return // never answer an answer: that is how reflection loops start
	}
	addr, udp := clientAddr(w.RemoteAddr())
	q.udp = udp
	s.send(w, q, s.answer(q, addr))
}

// finish recovers from a panic (answering SERVFAIL if nothing was sent),
// counts the request and recycles q.
func (s *Server) finish(w mdns.ResponseWriter, q *query, start time.Time) {
	if p := recover(); p != nil {
		s.st.log.Error("panic answering query", "panic", p, "stack", string(debug.Stack()))
		if !q.written && q.req != nil {
			s.sendFailure(w, q)
		}
		q.rcode = mdns.RcodeServerFailure
		q.resp = nil // may be half-built: let the GC have it
	}
	if q.rcode >= 0 {
		s.m.observe(q.typeIdx, q.rcode, q.source, time.Since(start))
	}
	*q = query{}
	queryPool.Put(q)
}

// sendFailure answers SERVFAIL after a panic; a second panic (in the
// writer) is dropped: the client then times out, the process lives on.
func (s *Server) sendFailure(w mdns.ResponseWriter, q *query) {
	defer func() {
		if p := recover(); p != nil {
			s.st.log.Error("panic sending SERVFAIL", "panic", p)
		}
	}()
	m := new(mdns.Msg)
	m.SetRcode(q.req, mdns.RcodeServerFailure)
	s.send(w, q, m)
}

// queryPool recycles the per-request state with the response message and
// the small arrays its sections start in.
var queryPool = sync.Pool{New: func() any { return new(query) }}

// query is the state of one request while it is answered.
type query struct {
	req     *mdns.Msg
	lname   string // lowercase question name
	udp     bool
	maxSize int
	do      bool // the client's EDNS0 DO bit, echoed
	hasOPT  bool
	typeIdx int
	source  int
	rcode   int // -1 until a response is sent
	written bool

	// resp is the response, built in place (nil until answer runs).
	resp  *mdns.Msg
	msg   mdns.Msg
	qbuf  [1]mdns.Question
	opt   mdns.OPT
	extra [1]mdns.RR
	abuf  [4]mdns.RR // answer records, while they fit
	nbuf  [1]mdns.RR // authority: the SOA of a negative answer
}

// answer builds the response to q.req (from addr).
func (s *Server) answer(q *query, addr netip.Addr) *mdns.Msg {
	r := q.req
	m := &q.msg
	q.resp = m
	// SetReply, without allocating the question section.
	m.Id = r.Id
	m.Response = true
	m.Opcode = r.Opcode
	if r.Opcode == mdns.OpcodeQuery {
		m.RecursionDesired = r.RecursionDesired
		m.CheckingDisabled = r.CheckingDisabled
	}
	if len(r.Question) > 0 {
		q.qbuf[0] = r.Question[0]
		m.Question = q.qbuf[:]
	}
	m.Answer, m.Ns = q.abuf[:0], q.nbuf[:0]
	m.RecursionAvailable = true
	q.maxSize = maxTCPSize
	if q.udp {
		q.maxSize = minUDPSize
	}

	if r.Opcode != mdns.OpcodeQuery {
		return s.reject(m, mdns.RcodeNotImplemented)
	}
	if len(r.Question) != 1 {
		return s.reject(m, mdns.RcodeFormatError)
	}
	qq := r.Question[0]
	q.typeIdx = typeIndex(qq.Qtype)

	// EDNS0 (RFC 6891): one OPT at most; version 0 only; echo an OPT.
	var opt *mdns.OPT
	for _, rr := range r.Extra {
		if o, ok := rr.(*mdns.OPT); ok {
			if opt != nil || o.Hdr.Name != "." {
				return s.reject(m, mdns.RcodeFormatError)
			}
			opt = o
		}
	}
	if opt != nil {
		q.hasOPT = true
		q.do = opt.Do()
		if q.udp {
			q.maxSize = int(min(max(opt.UDPSize(), minUDPSize), maxUDPSize))
		}
		if opt.Version() != 0 {
			return s.reject(m, mdns.RcodeBadVers)
		}
	}

	switch qq.Qclass {
	case mdns.ClassINET:
	case mdns.ClassANY:
		return s.reject(m, mdns.RcodeNotImplemented)
	default: // CHAOS, HESIOD, others: no zone of ours
		return s.reject(m, mdns.RcodeRefused)
	}
	switch qq.Qtype {
	case mdns.TypeAXFR, mdns.TypeIXFR:
		return s.reject(m, mdns.RcodeRefused)
	case mdns.TypeOPT, mdns.TypeTSIG, mdns.TypeTKEY:
		return s.reject(m, mdns.RcodeFormatError)
	case mdns.TypeMAILA, mdns.TypeMAILB, mdns.TypeNone:
		return s.reject(m, mdns.RcodeNotImplemented)
	}
	if !s.st.allowed.allows(addr) {
		return s.reject(m, mdns.RcodeRefused)
	}

	q.lname = lowerName(qq.Name)
	switch {
	case s.inZone(q.lname):
		q.source = srcCluster
		m.Authoritative = true
		if !s.store.Synced() {
			m.Rcode = mdns.RcodeServerFailure
			return m
		}
		s.answerCluster(q, m, qq.Name, q.lname, qq.Qtype, 0)
		return m
	case isReverse(q.lname):
		if s.answerReverse(q, m, qq) {
			q.source = srcCluster
			return m
		}
	}
	q.source = srcForward
	s.forward(q, m, qq)
	return m
}

// reject answers without looking anything up.
func (s *Server) reject(m *mdns.Msg, rcode int) *mdns.Msg {
	m.Rcode = rcode
	m.Authoritative = false
	return m
}

func (s *Server) inZone(lname string) bool {
	return lname == s.st.zone || strings.HasSuffix(lname, s.st.dotZone)
}

// send adds the OPT record, packs m to fit the transport and writes it.
func (s *Server) send(w mdns.ResponseWriter, q *query, m *mdns.Msg) {
	if m == nil {
		return
	}
	if q.hasOPT {
		o := &q.opt
		*o = mdns.OPT{Hdr: mdns.RR_Header{Name: ".", Rrtype: mdns.TypeOPT}}
		size := q.maxSize
		if !q.udp {
			size = maxUDPSize
		}
		o.SetUDPSize(uint16(size))
		if q.do {
			o.SetDo()
		}
		if len(m.Extra) == 0 {
			q.extra[0] = o
			m.Extra = q.extra[:]
		} else {
			m.Extra = append(m.Extra[:len(m.Extra):len(m.Extra)], o)
		}
	} else if m.Rcode > 0xF {
		m.Rcode = mdns.RcodeFormatError // an extended rcode needs an OPT
	}
	if q.maxSize == 0 {
		q.maxSize = maxTCPSize
		if q.udp {
			q.maxSize = minUDPSize
		}
	}
	q.rcode = m.Rcode
	q.written = true

	bp := packBufs.Get().(*[]byte)
	out, err := fit(m, *bp, q.maxSize)
	if err != nil {
		s.st.log.Warn("pack response", "name", questionName(q.req), "err", err)
		fail := new(mdns.Msg)
		fail.SetRcode(q.req, mdns.RcodeServerFailure)
		q.rcode = mdns.RcodeServerFailure
		out, err = fail.PackBuffer(*bp)
		if err != nil {
			packBufs.Put(bp)
			return
		}
	}
	if _, err := w.Write(out); err != nil {
		s.st.log.Debug("write response", "name", questionName(q.req), "err", err)
	}
	packBufs.Put(bp)
}

func questionName(r *mdns.Msg) string {
	if r != nil && len(r.Question) > 0 {
		return r.Question[0].Name
	}
	return ""
}

// answerReverse answers a PTR question for an address the Store knows, or
// NXDOMAIN for an unknown address inside Config.ReverseNets. It reports false
// when the name is not ours (so it is forwarded).
func (s *Server) answerReverse(q *query, m *mdns.Msg, qq mdns.Question) bool {
	a, ok := parseReverse(q.lname)
	if !ok {
		return false
	}
	refs := s.store.ptr(a)
	zone, inNets := s.reverseZoneOf(a)
	if len(refs) == 0 && !inNets {
		return false
	}
	m.Authoritative = true
	if !s.store.Synced() {
		m.Rcode = mdns.RcodeServerFailure
		return true
	}
	if len(refs) == 0 || (qq.Qtype != mdns.TypePTR && qq.Qtype != mdns.TypeANY) {
		if zone == "" {
			zone = defaultReverseZone(a)
		}
	}
	if len(refs) == 0 {
		m.Rcode = mdns.RcodeNameError
		m.Ns = []mdns.RR{s.reverseSOA(zone)}
		return true
	}
	if qq.Qtype != mdns.TypePTR && qq.Qtype != mdns.TypeANY {
		m.Ns = []mdns.RR{s.reverseSOA(zone)}
		return true
	}
	rrs := make([]mdns.PTR, len(refs))
	m.Answer = make([]mdns.RR, len(refs))
	for i, ref := range refs {
		rrs[i] = mdns.PTR{Hdr: s.hdr(qq.Name, mdns.TypePTR), Ptr: s.refName(ref)}
		m.Answer[i] = &rrs[i]
	}
	return true
}

// refName is the FQDN a PTR points to.
func (s *Server) refName(r ptrRef) string {
	if r.label == "" {
		return r.key + s.st.svcZone
	}
	return r.label + "." + r.key + s.st.svcZone
}

func (s *Server) reverseZoneOf(a netip.Addr) (string, bool) {
	for _, p := range s.st.reverse {
		if p.Contains(a) {
			return reverseZone(p), true
		}
	}
	return "", false
}

// defaultReverseZone is the zone named in negative answers for a known
// address outside ReverseNets: its /24 or /64.
func defaultReverseZone(a netip.Addr) string {
	bits := 24
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return reverseZone(p)
}

// forward answers a name outside the cluster domain from the cache or the
// upstreams.
func (s *Server) forward(q *query, m *mdns.Msg, qq mdns.Question) {
	if s.fwd == nil {
		m.Rcode = mdns.RcodeRefused
		return
	}
	r, age, err := s.fwd.lookup(qq)
	if err != nil {
		m.Rcode = mdns.RcodeServerFailure
		return
	}
	m.Rcode = r.Rcode
	m.Answer = copyAged(nil, r.Answer, age)
	m.Ns = copyAged(nil, r.Ns, age)
	m.Extra = copyAged(nil, r.Extra, age)
}
