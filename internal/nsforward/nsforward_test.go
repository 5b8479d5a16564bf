package nsforward

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestValidateRefusesNonLoopback(t *testing.T) {
	enter := func(fn func() error) error { return fn() }
	for _, c := range []Config{
		{Listen: "0.0.0.0:8443", Target: "127.0.0.1:6443", Enter: enter},
		{Listen: "127.0.0.1:8443", Target: "10.0.0.1:6443", Enter: enter},
		{Listen: "localhost:8443", Target: "127.0.0.1:6443", Enter: enter},
		{Listen: "127.0.0.1:8443", Target: "127.0.0.1:6443"},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: accepted", c)
		}
	}
	ok := Config{Listen: "127.0.0.1:0", Target: "[::1]:6443", Enter: enter}
	if err := ok.Validate(); err != nil {
		t.Errorf("%+v: %v", ok, err)
	}
}

// TestForward forwards to an echo server; Enter runs in the test's own
// namespace (TestForwardIntoNetNS enters a real one).
func TestForward(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	entered := make(chan struct{}, 10)
	cfg := Config{Listen: "127.0.0.1:0", Target: echo.Addr().String(),
		Enter: func(fn func() error) error { entered <- struct{}{}; return fn() }}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, func(a net.Addr) { addrc <- a }) }()
	addr := <-addrc
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "hello" {
		t.Fatalf("echo through the forwarder: %q %v", b, err)
	}
	c.Close()
	select {
	case <-entered:
	default:
		t.Fatal("the dial did not go through Enter")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	// The listener is closed.
	if c, err := net.DialTimeout("tcp", addr.String(), time.Second); err == nil {
		c.Close()
		t.Fatal("listener still accepting after Run returned")
	} else if !strings.Contains(err.Error(), "refused") {
		t.Logf("dial after stop: %v", err)
	}
}
