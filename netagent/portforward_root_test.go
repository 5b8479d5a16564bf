package netagent_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/client/portforward"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
)

// TestDialInNetNS dials a port that listens on 127.0.0.1 only inside a
// namespace the test made: the port-forward dial reaches it, the same
// port in the test's own namespace does not, and a port nothing listens
// on gives the refused error.
func TestDialInNetNS(t *testing.T) {
	pod := netnstest.New(t, "pod")
	ctx := t.Context()
	ln, err := pod.Listen(ctx, "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	dial := netagent.DialInNetNS(pod.Path)
	c, err := dial(ctx, port)
	if err != nil {
		t.Fatalf("dial inside the pod netns: %v", err)
	}
	_, _ = c.Write([]byte("ping"))
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo: %q %v", buf, err)
	}
	c.Close()
	if c, err := net.DialTimeout("tcp4", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		c.Close()
		t.Logf("the test's own namespace also has port %d (a coincidence); not checked", port)
	}
	_, err = dial(ctx, port+1)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), fmt.Sprintf("localhost:%d", port+1)) {
		t.Fatalf("closed port: %v", err)
	}

	// Through the wire protocol: the error stream carries upstream's words.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = portforward.Serve(w, r, dial, portforward.Options{Pod: "default/web", UID: "uid-1"})
	}))
	defer srv.Close()
	cl := spdyClient(t, srv.Listener.Addr().String(), "/portforward/default/web")
	defer cl.Close()
	if got, err := forwardOnce(cl, port, "hello"); err != nil || got != "hello" {
		t.Fatalf("forward: %q %v", got, err)
	}
	_, err = forwardOnce(cl, port+1, "x")
	want := fmt.Sprintf("error forwarding port %d to pod default/web, uid uid-1: failed to connect to localhost:%d inside the pod's network namespace", port+1, port+1)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("refused port: %v, want %q", err, want)
	}
}

// spdyClient upgrades a plain HTTP connection to addr.
func spdyClient(t *testing.T, addr, path string) *portforward.Client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+path, nil)
	req.Header = portforward.UpgradeHeader()
	if err := req.Write(c); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	cl, err := portforward.NewClient(&bufferedConn{Conn: c, r: br})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// forwardOnce sends msg over one forwarded connection and reads as many
// bytes back.
func forwardOnce(cl *portforward.Client, port uint16, msg string) (string, error) {
	a, b := net.Pipe()
	errc := make(chan error, 1)
	go func() { errc <- cl.Forward(b, port) }()
	go func() { _, _ = a.Write([]byte(msg)) }()
	_ = a.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, len(msg))
	n, rerr := io.ReadFull(a, buf)
	a.Close()
	if err := <-errc; err != nil {
		return string(buf[:n]), err
	}
	return string(buf[:n]), rerr
}
