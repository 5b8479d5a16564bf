package dns

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	mdns "github.com/miekg/dns"
)

// serverUDPSize is the read buffer for incoming UDP queries (a query larger
// than this fails to unpack and gets FORMERR).
const serverUDPSize = 4096

// shutdownGrace bounds how long Serve waits for the listeners to close.
const shutdownGrace = 5 * time.Second

// Server is the cluster DNS server: a dns.Handler answering from a Store and
// forwarding other names upstream, plus UDP and TCP listeners.
type Server struct {
	st    settings
	store *Store
	fwd   *forwarder // nil when forwarding is disabled
	m     *metrics
	soa   atomic.Pointer[mdns.SOA]
	ns    []mdns.RR // the apex NS record
	nsA   []mdns.RR // address records of ns.dns.<domain>
}

var _ mdns.Handler = (*Server)(nil)

// NewServer builds a Server answering from store. It reads Config.ResolvConf
// when Config.Upstreams is nil and registers the metrics on
// Config.Registerer, and fails if either fails.
func NewServer(cfg Config, store *Store) (*Server, error) {
	if store == nil {
		return nil, fmt.Errorf("dns: nil store: %w", ErrInvalidConfig)
	}
	st, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	s := &Server{st: st, store: store}
	if len(st.upstream) > 0 {
		s.m = newMetrics(func() float64 { return float64(s.fwd.cache.len()) })
		s.fwd = newForwarder(st, s.m)
	} else {
		s.m = newMetrics(func() float64 { return 0 })
	}
	if err := s.m.register(cfg.Registerer); err != nil {
		return nil, err
	}
	nsName := "ns.dns." + st.zone
	s.ns = []mdns.RR{&mdns.NS{Hdr: s.hdr(st.zone, mdns.TypeNS), Ns: nsName}}
	for _, a := range st.nsAddrs {
		s.nsA = append(s.nsA, addrRR(s.hdr(nsName, 0), a))
	}
	return s, nil
}

// Serve answers queries on udp and tcp (either may be nil, not both) until
// ctx ends, then closes both and returns nil. It returns an error if a
// listener fails or an upstream is the server's own address. Serve owns the
// connections: it closes them when it returns.
func (s *Server) Serve(ctx context.Context, udp net.PacketConn, tcp net.Listener) error {
	if udp == nil && tcp == nil {
		return fmt.Errorf("dns: serve: no listener: %w", ErrInvalidConfig)
	}
	closeAll := func() {
		if udp != nil {
			udp.Close()
		}
		if tcp != nil {
			tcp.Close()
		}
	}
	for _, la := range []net.Addr{addrOf(udp), addrOf(tcp)} {
		if err := s.checkLoop(la); err != nil {
			closeAll()
			return err
		}
	}

	var servers []*mdns.Server
	if udp != nil {
		servers = append(servers, &mdns.Server{PacketConn: udp})
	}
	if tcp != nil {
		servers = append(servers, &mdns.Server{Listener: tcp})
	}
	errc := make(chan error, len(servers))
	var started sync.WaitGroup
	for _, srv := range servers {
		srv.Handler = s
		srv.UDPSize = serverUDPSize
		srv.MsgAcceptFunc = s.accept
		srv.MsgInvalidFunc = func([]byte, error) { s.m.malformed.Inc() }
		started.Add(1)
		var once sync.Once
		srv.NotifyStartedFunc = func() { once.Do(started.Done) }
		go func() {
			err := srv.ActivateAndServe()
			once.Do(started.Done)
			errc <- err
		}()
	}
	started.Wait()
	s.st.log.Info("serving", "udp", addrOf(udp), "tcp", addrOf(tcp), "domain", s.st.zone, "upstreams", s.st.upstream)

	var err error
	pending := len(servers)
	select {
	case <-ctx.Done():
	case err = <-errc:
		pending--
		err = fmt.Errorf("dns: serve: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	for _, srv := range servers {
		// A server that already stopped reports "not started"; ignore it.
		_ = srv.ShutdownContext(sctx)
	}
	for ; pending > 0; pending-- {
		if e := <-errc; e != nil && err == nil && ctx.Err() == nil {
			err = fmt.Errorf("dns: serve: %w", e)
		}
	}
	closeAll()
	return err
}

// ListenAndServe listens on addr ("127.0.0.1:53", ":53") over UDP and TCP
// (on the same port when addr's port is 0) and serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	var lc net.ListenConfig
	udp, err := lc.ListenPacket(ctx, "udp", addr)
	if err != nil {
		return fmt.Errorf("dns: listen udp %s: %w", addr, err)
	}
	tcpAddr := addr
	if host, port, err := net.SplitHostPort(addr); err == nil && port == "0" {
		tcpAddr = net.JoinHostPort(host, fmt.Sprint(udp.LocalAddr().(*net.UDPAddr).Port))
	}
	tcp, err := lc.Listen(ctx, "tcp", tcpAddr)
	if err != nil {
		udp.Close()
		return fmt.Errorf("dns: listen tcp %s: %w", tcpAddr, err)
	}
	return s.Serve(ctx, udp, tcp)
}

func addrOf(c any) net.Addr {
	switch c := c.(type) {
	case net.PacketConn:
		if c != nil {
			return c.LocalAddr()
		}
	case net.Listener:
		if c != nil {
			return c.Addr()
		}
	}
	return nil
}

// checkLoop refuses to serve on an address that is also an upstream: every
// forwarded query would come back to us.
func (s *Server) checkLoop(la net.Addr) error {
	if la == nil {
		return nil
	}
	lap, err := netip.ParseAddrPort(la.String())
	if err != nil {
		return nil
	}
	for _, u := range s.st.upstream {
		up, err := netip.ParseAddrPort(u)
		if err != nil || up.Port() != lap.Port() {
			continue
		}
		ua, la := up.Addr().Unmap(), lap.Addr().Unmap()
		if ua == la || (la.IsUnspecified() && ua.IsLoopback()) {
			return fmt.Errorf("dns: upstream %s: %w", u, ErrForwardLoop)
		}
	}
	return nil
}

// accept screens a message by its header before it is unpacked: responses
// are dropped; opcodes other than QUERY get NOTIMP; a question count other
// than one, or more records than a query carries, get FORMERR.
func (s *Server) accept(dh mdns.Header) mdns.MsgAcceptAction {
	const qr = 1 << 15
	if dh.Bits&qr != 0 {
		return mdns.MsgIgnore
	}
	if opcode := int(dh.Bits>>11) & 0xF; opcode != mdns.OpcodeQuery {
		s.m.observe(typeNone, mdns.RcodeNotImplemented, srcRejected, 0)
		return mdns.MsgRejectNotImplemented
	}
	if dh.Qdcount != 1 || dh.Ancount > 1 || dh.Nscount > 1 || dh.Arcount > 2 {
		s.m.observe(typeNone, mdns.RcodeFormatError, srcRejected, 0)
		return mdns.MsgReject
	}
	return mdns.MsgAccept
}
