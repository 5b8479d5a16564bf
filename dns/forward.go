package dns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	mdns "github.com/miekg/dns"
)

// upstreamUDPSize is the EDNS0 buffer size announced to upstreams (the DNS
// flag day 2020 value: no IP fragmentation on common paths).
const upstreamUDPSize = 1232

// exchangeFunc sends one query to one upstream over one transport ("udp" or
// "tcp"). Tests replace it to count or fail exchanges.
type exchangeFunc func(ctx context.Context, m *mdns.Msg, network, addr string) (*mdns.Msg, error)

// forwarder resolves names outside the cluster domain through upstream
// servers, with an answer cache and one upstream exchange per distinct
// question in flight.
type forwarder struct {
	upstreams []string
	timeout   time.Duration
	cache     *answerCache
	m         *metrics
	log       *slog.Logger
	now       func() time.Time
	exchange  exchangeFunc

	mu       sync.Mutex
	inflight map[cacheKey]*flight
	waiters  int // lookups waiting on another's exchange (for tests)
}

type flight struct {
	done chan struct{}
	msg  *mdns.Msg
	err  error
}

func newForwarder(st settings, m *metrics) *forwarder {
	f := &forwarder{
		upstreams: st.upstream,
		timeout:   st.timeout,
		cache:     newAnswerCache(st.cache),
		m:         m,
		log:       st.log,
		now:       time.Now,
		inflight:  make(map[cacheKey]*flight),
	}
	udp := &mdns.Client{Net: "udp", UDPSize: upstreamUDPSize, Timeout: st.timeout}
	tcp := &mdns.Client{Net: "tcp", Timeout: st.timeout}
	f.exchange = func(ctx context.Context, q *mdns.Msg, network, addr string) (*mdns.Msg, error) {
		c := udp
		if network == "tcp" {
			c = tcp
		}
		r, _, err := c.ExchangeContext(ctx, q, addr)
		return r, err
	}
	return f
}

// lookup returns the answer to q (from the cache or an upstream) and the age
// of that answer, by which the caller lowers its TTLs. The returned message
// is shared: the caller copies what it sends.
func (f *forwarder) lookup(q mdns.Question) (*mdns.Msg, time.Duration, error) {
	k := cacheKey{name: lowerName(q.Name), qtype: q.Qtype, qclass: q.Qclass}
	if m, age, ok := f.cache.get(k, f.now()); ok {
		f.m.cacheHits.Inc()
		return m, age, nil
	}
	f.m.cacheMisses.Inc()

	f.mu.Lock()
	if fl := f.inflight[k]; fl != nil {
		f.waiters++
		f.mu.Unlock()
		<-fl.done
		f.mu.Lock()
		f.waiters--
		f.mu.Unlock()
		return fl.msg, 0, fl.err
	}
	fl := &flight{done: make(chan struct{})}
	f.inflight[k] = fl
	f.mu.Unlock()

	fl.msg, fl.err = f.resolve(q)
	if fl.err == nil {
		f.cache.put(k, fl.msg, cacheTTL(fl.msg), f.now())
	}
	f.mu.Lock()
	delete(f.inflight, k)
	f.mu.Unlock()
	close(fl.done)
	return fl.msg, 0, fl.err
}

// resolve asks the upstreams in order: over UDP, again over TCP when the UDP
// answer is truncated. It returns the first answer that is not SERVFAIL,
// REFUSED or NOTIMP (or the last such answer when every upstream gave one).
// The answer has no OPT record.
func (f *forwarder) resolve(q mdns.Question) (*mdns.Msg, error) {
	if len(f.upstreams) == 0 {
		return nil, fmt.Errorf("dns: forward %s: %w", q.Name, ErrNoUpstream)
	}
	var last *mdns.Msg
	var errs []error
	for _, up := range f.upstreams {
		r, err := f.ask(q, up)
		if err != nil {
			f.m.upstream.WithLabelValues(up, "error").Inc()
			errs = append(errs, fmt.Errorf("%s: %w", up, err))
			continue
		}
		f.m.upstream.WithLabelValues(up, rcodeLabel(rcodeIndex(r.Rcode))).Inc()
		switch r.Rcode {
		case mdns.RcodeServerFailure, mdns.RcodeRefused, mdns.RcodeNotImplemented:
			last = r
			continue
		}
		return r, nil
	}
	if last != nil {
		return last, nil
	}
	err := fmt.Errorf("dns: forward %s: %w: %w", q.Name, ErrNoUpstream, errors.Join(errs...))
	f.log.Debug("forward failed", "name", q.Name, "type", mdns.TypeToString[q.Qtype], "err", err)
	return nil, err
}

// ask exchanges q with one upstream.
func (f *forwarder) ask(q mdns.Question, up string) (*mdns.Msg, error) {
	m := new(mdns.Msg)
	m.Id = mdns.Id()
	m.RecursionDesired = true
	m.Question = []mdns.Question{q}
	m.SetEdns0(upstreamUDPSize, false)

	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	r, err := f.exchange(ctx, m, "udp", up)
	if err == nil && r != nil && r.Truncated {
		m.Id = mdns.Id()
		r, err = f.exchange(ctx, m, "tcp", up)
	}
	if err != nil {
		return nil, err
	}
	if r == nil || r.Id != m.Id || !r.Response || len(r.Question) != 1 ||
		r.Question[0].Qtype != q.Qtype || r.Question[0].Qclass != q.Qclass ||
		!strings.EqualFold(r.Question[0].Name, q.Name) {
		return nil, errors.New("answer does not match the question")
	}
	// Keep what a client may be sent: no OPT, and no TSIG or SIG(0)
	// that would not verify against the client's query.
	r.Extra = stripMeta(r.Extra)
	return r, nil
}

func stripMeta(rrs []mdns.RR) []mdns.RR {
	out := rrs[:0]
	for _, rr := range rrs {
		switch rr.Header().Rrtype {
		case mdns.TypeOPT, mdns.TypeTSIG, mdns.TypeSIG:
			continue
		}
		out = append(out, rr)
	}
	return out
}

// copyAged copies rrs, lowering each TTL by age (whole seconds, at least 0).
func copyAged(dst []mdns.RR, rrs []mdns.RR, age time.Duration) []mdns.RR {
	sec := uint32(age / time.Second)
	for _, rr := range rrs {
		c := mdns.Copy(rr)
		h := c.Header()
		if h.Ttl > sec {
			h.Ttl -= sec
		} else {
			h.Ttl = 0
		}
		dst = append(dst, c)
	}
	return dst
}
