package portforward

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// echo listens on loopback and echoes each connection until EOF.
func echo(t *testing.T) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

func loopbackDial(ctx context.Context, port uint16) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
}

func server(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = Serve(w, r, loopbackDial, Options{Pod: "default/p", UID: "u1", StreamCreationTimeout: time.Second})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// dialSPDY upgrades a plain TCP connection to srv with h.
func dialSPDY(t *testing.T, srv *httptest.Server, h http.Header) (net.Conn, *http.Response) {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/portforward/default/p", nil)
	req.Header = h
	if err := req.Write(c); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatal(err)
	}
	return &bufConn{Conn: c, r: br}, resp
}

func newSPDYClient(t *testing.T, srv *httptest.Server) *Client {
	c, resp := dialSPDY(t, srv, UpgradeHeader())
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get(HeaderProtocolVersion) != ProtocolV1 {
		t.Fatalf("upgrade: %s %v", resp.Status, resp.Header)
	}
	cl, err := NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func newTunnelClient(t *testing.T, srv *httptest.Server) *Client {
	d := websocket.Dialer{Subprotocols: []string{ProtocolTunnel}}
	ws, resp, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/portforward/default/p", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Sec-WebSocket-Protocol") != ProtocolTunnel {
		t.Fatalf("subprotocol %q", resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	cl, err := NewClient(newWSConn(ws))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// roundTrip forwards one connection to port, writes msg, half-closes and
// reads the answer.
func roundTrip(t *testing.T, cl *Client, port uint16, msg string) (string, error) {
	t.Helper()
	a, b := net.Pipe()
	errc := make(chan error, 1)
	go func() { errc <- cl.Forward(b, port) }()
	go func() { _, _ = a.Write([]byte(msg)) }()
	buf := make([]byte, len(msg))
	_ = a.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, rerr := io.ReadFull(a, buf)
	a.Close()
	err := <-errc
	if rerr != nil && err == nil {
		err = rerr
	}
	return string(buf[:n]), err
}

func TestForwardBothProtocols(t *testing.T) {
	srv := server(t)
	p1, p2 := echo(t), echo(t)
	for name, mk := range map[string]func(*testing.T, *httptest.Server) *Client{"spdy": newSPDYClient, "websocket": newTunnelClient} {
		t.Run(name, func(t *testing.T) {
			cl := mk(t, srv)
			big := strings.Repeat("x", 3<<20)
			for i, port := range []uint16{p1, p2, p1} {
				msg := fmt.Sprintf("hello %d", i)
				if i == 2 {
					msg = big
				}
				got, err := roundTrip(t, cl, port, msg)
				if err != nil || got != msg {
					t.Fatalf("port %d: got %d bytes, err %v", port, len(got), err)
				}
			}
		})
	}
}

func TestRefusedPort(t *testing.T) {
	srv := server(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cl := newSPDYClient(t, srv)
	_, err := roundTrip(t, cl, port, "x")
	want := fmt.Sprintf("error forwarding port %d to pod default/p, uid u1: ", port)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err %v, want %q ... connection refused", err, want)
	}
}

func TestHandshakeErrors(t *testing.T) {
	srv := server(t)
	h := UpgradeHeader()
	h.Set(HeaderProtocolVersion, "v9.portforward.example")
	_, resp := dialSPDY(t, srv, h)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(HeaderAcceptedProtocolVersions) != ProtocolV1 {
		t.Fatalf("bad version: %s %v", resp.Status, resp.Header)
	}
	h = UpgradeHeader()
	h.Del(HeaderProtocolVersion)
	if _, resp = dialSPDY(t, srv, h); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("no version: %s", resp.Status)
	}
	h = UpgradeHeader()
	h.Del("Upgrade")
	if _, resp = dialSPDY(t, srv, h); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("no upgrade: %s", resp.Status)
	}
}

func TestBadStreamHeadersReset(t *testing.T) {
	srv := server(t)
	cl := newSPDYClient(t, srv)
	for _, h := range []http.Header{
		{HeaderStreamType: {StreamTypeData}},
		{HeaderStreamType: {StreamTypeData}, HeaderPort: {"0"}},
		{HeaderStreamType: {StreamTypeData}, HeaderPort: {"70000"}},
		{HeaderStreamType: {"other"}, HeaderPort: {"80"}},
		{HeaderPort: {"80"}},
	} {
		if _, err := cl.create(h); err == nil {
			t.Errorf("%v: stream accepted", h)
		}
	}
}

// TestNoLeaks runs bad cases (refused ports, vanished clients, pairs
// never completed) and checks the goroutines come back to baseline.
func TestNoLeaks(t *testing.T) {
	srv := server(t)
	port := echo(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := uint16(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	n := 100
	if testing.Short() {
		n = 20
	}
	base, baseFDs := runtime.NumGoroutine(), openFDs(t)
	for i := range n {
		cl := newSPDYClient(t, srv)
		switch i % 3 {
		case 0:
			_, _ = roundTrip(t, cl, refused, "x")
		case 1: // the client vanishes mid-stream
			a, b := net.Pipe()
			go func() { _ = cl.Forward(b, port) }()
			_, _ = a.Write([]byte("partial"))
			cl.nc.Close()
			a.Close()
		case 2: // an error stream and no data stream
			h := http.Header{HeaderStreamType: {StreamTypeError}, HeaderPort: {"80"}, HeaderRequestID: {"7"}}
			_, _ = cl.create(h)
		}
		cl.Close()
	}
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > base+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > base+2 {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines %d, baseline %d:\n%s", g, base, buf[:runtime.Stack(buf, true)])
	}
	for openFDs(t) > baseFDs && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := openFDs(t); n > baseFDs {
		t.Fatalf("open fds %d, baseline %d: %v", n, baseFDs, fdList())
	}
}

func fdList() []string {
	es, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range es {
		l, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out = append(out, e.Name()+"="+l)
	}
	return out
}

// openFDs counts the open sockets (pipes are left out: Go's splice keeps
// a pool of pipe pairs).
func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range es {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// TestChannelProtocol: the pure-WebSocket protocol, binary and base64:
// the port frames, an echo on channel 0, the refused port's error on
// channel 3.
func TestChannelProtocol(t *testing.T) {
	srv := server(t)
	port := echo(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := uint16(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	for _, proto := range []string{ProtocolChannelV4, ProtocolBase64ChannelV4} {
		d := websocket.Dialer{Subprotocols: []string{proto}}
		u := fmt.Sprintf("ws%s/portforward/default/p?port=%d&port=%d", strings.TrimPrefix(srv.URL, "http"), port, refused)
		ws, _, err := d.Dial(u, nil)
		if err != nil {
			t.Fatal(err)
		}
		b64 := proto == ProtocolBase64ChannelV4
		read := func() (byte, []byte) {
			_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, m, err := ws.ReadMessage()
			if err != nil || len(m) == 0 {
				t.Fatalf("%s: read: %v", proto, err)
			}
			if b64 {
				d, err := base64.StdEncoding.DecodeString(string(m[1:]))
				if err != nil {
					t.Fatal(err)
				}
				return m[0] - '0', d
			}
			return m[0], m[1:]
		}
		for ch := range byte(4) {
			c, p := read()
			want := port
			if ch >= 2 {
				want = refused
			}
			if c != ch || len(p) != 2 || binary.LittleEndian.Uint16(p) != want {
				t.Fatalf("%s: port frame %d: channel %d %v", proto, ch, c, p)
			}
		}
		msg := []byte{0, 'h', 'i'}
		typ := websocket.BinaryMessage
		if b64 {
			msg, typ = append([]byte{'0'}, base64.StdEncoding.EncodeToString([]byte("hi"))...), websocket.TextMessage
		}
		if err := ws.WriteMessage(typ, msg); err != nil {
			t.Fatal(err)
		}
		got := map[byte]string{}
		for got[0] != "hi" || got[3] == "" {
			c, p := read()
			got[c] += string(p)
		}
		if got[0] != "hi" || !strings.Contains(got[3], fmt.Sprintf("error forwarding port %d to pod default/p", refused)) || !strings.Contains(got[3], "connection refused") {
			t.Fatalf("%s: %q", proto, got)
		}
		ws.Close()
	}
	h := http.Header{}
	d := websocket.Dialer{Subprotocols: []string{ProtocolChannelV4}}
	if _, resp, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/portforward/default/p", h); err == nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("no port: %v %v", err, resp)
	}
}
