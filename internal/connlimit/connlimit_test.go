package connlimit

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"
)

// gate is a Listener on loopback whose accepted connections arrive on a
// channel.
type gate struct {
	*Listener
	accepted chan net.Conn
}

func newGate(t *testing.T, opts Options) *gate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{Listener: New(ln, opts), accepted: make(chan net.Conn, 100)}
	go func() {
		for {
			c, err := g.Accept()
			if err != nil {
				return
			}
			g.accepted <- c
		}
	}()
	t.Cleanup(func() { g.Close() })
	return g
}

// dial connects from src (a 127.0.0.0/8 address) and returns the client
// side and the server side, or a nil server side if the gate refused it.
func (g *gate) dial(t *testing.T, src string) (client net.Conn, server net.Conn) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", g.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	select {
	case s := <-g.accepted:
		return c, s
	case <-time.After(300 * time.Millisecond):
		return c, nil
	}
}

// closedByServer reports whether the server closed c.
func closedByServer(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err)
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}

func TestPerAddressCapRejectsWhenNoneIdle(t *testing.T) {
	g := newGate(t, Options{PerAddr: 2})
	_, s1 := g.dial(t, "127.0.0.1")
	_, s2 := g.dial(t, "127.0.0.1")
	if s1 == nil || s2 == nil {
		t.Fatal("connections within the cap were not accepted")
	}
	c3, s3 := g.dial(t, "127.0.0.1")
	if s3 != nil {
		t.Fatal("a third connection from one address was accepted with a cap of 2")
	}
	if !closedByServer(c3) {
		t.Fatal("the rejected connection was not closed")
	}
	if g.Rejected() != 1 {
		t.Fatalf("Rejected = %d", g.Rejected())
	}
	// Another address is not affected.
	if _, s := g.dial(t, "127.0.0.2"); s == nil {
		t.Fatal("another address was refused")
	}
	// Closing one frees its place.
	s1.Close()
	if _, s := g.dial(t, "127.0.0.1"); s == nil {
		t.Fatal("a place freed by Close was not reused")
	}
	if open, _ := g.Stats(); open != 3 {
		t.Fatalf("open = %d, want 3", open)
	}
}

func TestOverCapClosesTheLongestIdle(t *testing.T) {
	g := newGate(t, Options{PerAddr: 3})
	c1, s1 := g.dial(t, "127.0.0.1")
	c2, s2 := g.dial(t, "127.0.0.1")
	_, s3 := g.dial(t, "127.0.0.1")
	g.ConnState(s2, http.StateIdle)
	g.ConnState(s1, http.StateIdle) // idle after s2
	g.ConnState(s3, http.StateActive)
	_, s4 := g.dial(t, "127.0.0.1")
	if s4 == nil {
		t.Fatal("a new connection was refused although one was idle")
	}
	if !closedByServer(c2) {
		t.Fatal("the longest idle connection was not closed")
	}
	_ = c1.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := c1.Read(make([]byte, 1)); err == nil || !isTimeout(err) {
		t.Fatalf("a connection idle for less time was closed: %v", err)
	}
	// s1 becomes busy again: no one is idle, the next is refused.
	g.ConnState(s1, http.StateActive)
	if _, s := g.dial(t, "127.0.0.1"); s != nil {
		t.Fatal("a busy connection was closed to make room")
	}
	if g.Reaped() != 1 || g.Rejected() != 1 {
		t.Fatalf("Reaped %d Rejected %d, want 1 and 1", g.Reaped(), g.Rejected())
	}
	// The reaped connection's own Close (http.Server's) does not free a
	// second place.
	s2.Close()
	if open, _ := g.Stats(); open != 3 {
		t.Fatalf("open = %d, want 3", open)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestTotalCap(t *testing.T) {
	g := newGate(t, Options{PerAddr: 10, Total: 2})
	_, a := g.dial(t, "127.0.0.1")
	_, b := g.dial(t, "127.0.0.2")
	if a == nil || b == nil {
		t.Fatal("within the total cap")
	}
	if _, s := g.dial(t, "127.0.0.3"); s != nil {
		t.Fatal("accepted over the total cap with none idle")
	}
	g.ConnState(a, http.StateIdle)
	if _, s := g.dial(t, "127.0.0.3"); s == nil {
		t.Fatal("refused over the total cap although one was idle (of another address)")
	}
	if open, idle := g.Stats(); open != 2 || idle != 0 {
		t.Fatalf("open %d idle %d", open, idle)
	}
}

func TestConnStateSeesThroughTLS(t *testing.T) {
	g := newGate(t, Options{PerAddr: 1})
	_, s := g.dial(t, "127.0.0.1")
	tc := tls.Server(s, &tls.Config{})
	g.ConnState(tc, http.StateIdle)
	if _, idle := g.Stats(); idle != 1 {
		t.Fatal("the *Conn under a *tls.Conn was not found")
	}
	g.ConnState(tc, http.StateClosed)
	if open, idle := g.Stats(); open != 0 || idle != 0 {
		t.Fatalf("StateClosed: open %d idle %d", open, idle)
	}
}

func TestAddrKey(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.1:5":              "10.0.0.1",
		"[::ffff:10.0.0.1]:5":     "10.0.0.1",
		"[2001:db8:1:2:3::4]:80":  "2001:db8:1:2::",
		"[2001:db8:1:2:ffff::]:1": "2001:db8:1:2::",
	} {
		ap := netip.MustParseAddrPort(in)
		if got := addrKey(net.TCPAddrFromAddrPort(ap)); got.String() != want {
			t.Errorf("addrKey(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestDefaultTotal(t *testing.T) {
	for nofile, want := range map[uint64]int{0: 0, 20000: 16000, 1024: 768, 300: 44, 200: 100, 1 << 20: 65536} {
		if got := DefaultTotal(nofile); got != want {
			t.Errorf("DefaultTotal(%d) = %d, want %d", nofile, got, want)
		}
	}
}

func TestRaiseFileLimit(t *testing.T) {
	n, err := RaiseFileLimit()
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || n != FileLimit() {
		t.Fatalf("RaiseFileLimit = %d, FileLimit = %d", n, FileLimit())
	}
}
