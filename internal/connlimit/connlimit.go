// Package connlimit is an accept gate: a net.Listener that caps the
// connections open at once from one client address and in total, so that
// clients that open connections and leave them idle cannot use up the
// process's file descriptors.
//
// # Rules
//
//   - A client address is the IPv4 address, or the /64 of an IPv6 address
//     (one host usually owns a whole /64).
//   - A new connection over a cap first closes the connection of that
//     address (per-address cap) or of anyone (total cap) that has been idle
//     longest: a keep-alive HTTP connection between requests, as
//     http.Server reports through ConnState. With none idle, the new
//     connection is closed at once, before any TLS handshake.
//   - Connections that are busy (a request, a watch, a TLS handshake) are
//     never closed by the gate.
//   - Nothing is exempt, loopback included: the server's own clients (the
//     built-in agent, the controllers) hold a few HTTP/2 connections each,
//     far below the per-address cap, and get in by closing an idle one.
//
// Wire Listener.ConnState into http.Server.ConnState, and put the
// Listener under tls.NewListener (the gate sees raw TCP connections).
package connlimit

import (
	"container/list"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
)

// Options are the caps; 0 turns one off.
type Options struct {
	PerAddr int // connections open at once from one client address
	Total   int // connections open at once in all
	// Logger receives a Warn line for each connection rejected and each
	// idle connection closed to make room; nil logs nothing. Give it a
	// rate-limited handler (internal/ratelog): a flood is many lines.
	Logger *slog.Logger
}

// Listener is the gate; see the package doc.
type Listener struct {
	net.Listener
	opts Options

	mu    sync.Mutex
	addrs map[netip.Addr]*addrConns
	total int
	idle  list.List // of *Conn, the longest idle first

	rejected atomic.Uint64
	reaped   atomic.Uint64
}

// addrConns are one client address's connections.
type addrConns struct {
	n    int
	idle list.List // of *Conn, the longest idle first
}

// Conn is a connection the gate let in; closing it frees its place.
type Conn struct {
	net.Conn
	l   *Listener
	key netip.Addr
	// Guarded by l.mu.
	released          bool
	idleAll, idleAddr *list.Element
}

// New wraps ln.
func New(ln net.Listener, opts Options) *Listener {
	return &Listener{Listener: ln, opts: opts, addrs: map[netip.Addr]*addrConns{}}
}

// Accept returns the next connection within the caps. Connections over
// them are closed here and never returned; errors of the listener are
// returned as they are (http.Server logs them and retries).
func (l *Listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := addrKey(nc.RemoteAddr())
		c, victim, reason := l.admit(nc, key)
		if victim != nil {
			l.reaped.Add(1)
			_ = victim.Conn.Close()
			l.warn("connection: closed an idle connection to admit a new one", nc, reason)
		}
		if c != nil {
			return c, nil
		}
		_ = nc.Close()
		l.rejected.Add(1)
		l.warn("connection: rejected", nc, reason)
	}
}

func (l *Listener) warn(msg string, nc net.Conn, reason string) {
	if l.opts.Logger == nil {
		return
	}
	open, _ := l.Stats()
	l.opts.Logger.Warn(msg, "remote", nc.RemoteAddr().String(), "cap", reason, "open", open)
}

// admit registers nc, or picks an idle connection to close first, or
// refuses nc (c nil), saying which cap.
func (l *Listener) admit(nc net.Conn, key netip.Addr) (c, victim *Conn, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.addrs[key]
	if a == nil {
		a = &addrConns{}
		l.addrs[key] = a
	}
	switch {
	case l.opts.PerAddr > 0 && a.n >= l.opts.PerAddr:
		reason = "per-address"
		if e := a.idle.Front(); e != nil {
			victim = e.Value.(*Conn)
		}
	case l.opts.Total > 0 && l.total >= l.opts.Total:
		reason = "total"
		if e := l.idle.Front(); e != nil {
			victim = e.Value.(*Conn)
		}
	}
	if reason != "" && victim == nil {
		if a.n == 0 {
			delete(l.addrs, key)
		}
		return nil, nil, reason
	}
	if victim != nil {
		l.releaseLocked(victim)
	}
	c = &Conn{Conn: nc, l: l, key: key}
	a.n++
	l.total++
	return c, victim, reason
}

// Close closes the connection and frees its place.
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.releaseLocked(c)
	c.l.mu.Unlock()
	return err
}

// releaseLocked frees c's place once; l.mu is held.
func (l *Listener) releaseLocked(c *Conn) {
	if c.released {
		return
	}
	c.released = true
	l.setIdleLocked(c, false)
	l.total--
	if a := l.addrs[c.key]; a != nil {
		if a.n--; a.n <= 0 {
			delete(l.addrs, c.key)
		}
	}
}

// setIdleLocked moves c in or out of the idle lists; l.mu is held.
func (l *Listener) setIdleLocked(c *Conn, idle bool) {
	if idle == (c.idleAll != nil) || (idle && c.released) {
		return
	}
	a := l.addrs[c.key]
	if idle {
		c.idleAll = l.idle.PushBack(c)
		c.idleAddr = a.idle.PushBack(c)
		return
	}
	l.idle.Remove(c.idleAll)
	if a != nil {
		a.idle.Remove(c.idleAddr)
	}
	c.idleAll, c.idleAddr = nil, nil
}

// ConnState is for http.Server.ConnState: it learns which connections
// are idle. nc is what the server saw: a *Conn or a connection over one
// (a *tls.Conn).
func (l *Listener) ConnState(nc net.Conn, st http.ConnState) {
	c := unwrap(nc)
	if c == nil || c.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateIdle:
		l.setIdleLocked(c, true)
	case http.StateActive, http.StateHijacked:
		l.setIdleLocked(c, false)
	case http.StateClosed:
		l.releaseLocked(c)
	}
}

// unwrap finds the *Conn under nc (tls.Conn.NetConn), or nil.
func unwrap(nc net.Conn) *Conn {
	for range 8 {
		switch v := nc.(type) {
		case *Conn:
			return v
		case interface{ NetConn() net.Conn }:
			nc = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// Stats are the connections open now, and those of them idle.
func (l *Listener) Stats() (open, idle int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total, l.idle.Len()
}

// Rejected counts the connections closed at accept for a cap; Reaped the
// idle connections closed to make room.
func (l *Listener) Rejected() uint64 { return l.rejected.Load() }

// Reaped: see Rejected.
func (l *Listener) Reaped() uint64 { return l.reaped.Load() }

// addrKey is the client address of a connection: IPv4, or an IPv6 /64.
func addrKey(a net.Addr) netip.Addr {
	var ip netip.Addr
	switch v := a.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(v.IP)
	default:
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			ip = ap.Addr()
		}
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		ip = p.Addr()
	}
	return ip
}
