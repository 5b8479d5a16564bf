package nsforward

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
)

// TestForwardIntoNetNS (root): a server on 127.0.0.1 inside a namespace
// the test made is reached through the forwarder's 127.0.0.1 port in the
// test's own namespace, while a server on the same port here is not.
func TestForwardIntoNetNS(t *testing.T) {
	ns := netnstest.New(t, "fwd")
	var inside net.Listener
	if err := ns.Do(func() error {
		var err error
		inside, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer inside.Close()
	serve := func(ln net.Listener, answer string) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, answer)
			c.Close()
		}
	}
	go serve(inside, "inside")
	// The same port in our own namespace, if free, answers "outside".
	if here, err := net.Listen("tcp", inside.Addr().String()); err == nil {
		defer here.Close()
		go serve(here, "outside")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Listen: "127.0.0.1:0", Target: inside.Addr().String(), Enter: ns.Do}, func(a net.Addr) { addrc <- a })
	}()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatal(err)
	}
	for range 3 {
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b, err := io.ReadAll(c)
		c.Close()
		if err != nil || string(b) != "inside" {
			t.Fatalf("through the forwarder: %q %v, want the server inside the namespace", b, err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
