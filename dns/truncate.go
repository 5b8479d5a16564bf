package dns

import (
	"strings"
	"sync"

	mdns "github.com/miekg/dns"
)

// packBufs holds buffers responses are packed into. A response larger than
// a buffer gets a new one from PackBuffer.
var packBufs = sync.Pool{New: func() any {
	b := make([]byte, 2*maxUDPSize)
	return &b
}}

// compressAbove is the uncompressed size above which responses are
// compressed.
const compressAbove = 512

// fit packs m into at most max bytes (buf is scratch space). When the whole
// message does not fit it drops, in order: the additional records (but the
// OPT), the authority records of a non-empty answer (neither sets TC), then
// answer RRsets from the end, one whole RRset at a time, setting TC. It never
// cuts an RRset in two: a client that sees TC retries over TCP and gets
// everything. fit may reslice m's sections but never writes into them.
func fit(m *mdns.Msg, buf []byte, max int) ([]byte, error) {
	// Name compression costs a map per message, about half of the time
	// spent answering: small messages go out without it.
	m.Compress = false
	if l := m.Len(); l > compressAbove || l > max {
		m.Compress = true
	}
	out, err := m.PackBuffer(buf)
	if err != nil || len(out) <= max {
		return out, err
	}
	m.Compress = true
	var opt []mdns.RR
	for _, rr := range m.Extra {
		if rr.Header().Rrtype == mdns.TypeOPT {
			opt = []mdns.RR{rr}
		}
	}
	if len(m.Extra) > len(opt) {
		m.Extra = opt
		if out, err = m.PackBuffer(buf); err != nil || len(out) <= max {
			return out, err
		}
	}
	if len(m.Answer) > 0 && len(m.Ns) > 0 {
		m.Ns = nil
		if out, err = m.PackBuffer(buf); err != nil || len(out) <= max {
			return out, err
		}
	}
	m.Truncated = true
	for len(m.Answer) > 0 {
		m.Answer = m.Answer[:lastRRsetStart(m.Answer)]
		if out, err = m.PackBuffer(buf); err != nil || len(out) <= max {
			return out, err
		}
	}
	// Only the header, question and OPT are left; they always fit in 512
	// bytes (a name is at most 255), unless the message has an authority
	// section with an empty answer.
	m.Ns = nil
	return m.PackBuffer(buf)
}

// lastRRsetStart is the index of the first record of the last RRset of rrs
// (records of one RRset are adjacent: same owner, type and class).
func lastRRsetStart(rrs []mdns.RR) int {
	i := len(rrs) - 1
	h := rrs[i].Header()
	for i > 0 {
		p := rrs[i-1].Header()
		if p.Rrtype != h.Rrtype || p.Class != h.Class || !strings.EqualFold(p.Name, h.Name) {
			break
		}
		i--
	}
	return i
}
