package nsforward

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Config says what to forward.
type Config struct {
	// Listen is the loopback host:port to accept on, in the caller's
	// namespace.
	Listen string
	// Target is the loopback host:port to dial inside the namespace.
	Target string
	// Enter runs fn with the calling OS thread inside the target
	// namespace (netagent/netns.Do bound to a path).
	Enter func(fn func() error) error
	// Logger gets one line per failed dial (nil: discard).
	Logger *slog.Logger
}

// Validate checks that both addresses are loopback host:port pairs.
func (c Config) Validate() error {
	for _, a := range []struct{ name, addr string }{{"listen", c.Listen}, {"target", c.Target}} {
		ap, err := netip.ParseAddrPort(a.addr)
		if err != nil {
			return fmt.Errorf("nsforward: %s address %q: want IP:port (%w)", a.name, a.addr, err)
		}
		if !ap.Addr().IsLoopback() {
			return fmt.Errorf("nsforward: %s address %s is not a loopback address", a.name, a.addr)
		}
	}
	if c.Enter == nil {
		return errors.New("nsforward: no namespace to enter")
	}
	return nil
}

// Run listens on cfg.Listen and forwards every connection until ctx ends.
// ready, if not nil, gets the bound address once listening.
func Run(ctx context.Context, cfg Config, ready func(net.Addr)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("nsforward: %w", err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("nsforward: accept: %w", err)
		}
		wg.Go(func() { forward(ctx, cfg, log, c) })
	}
}

func forward(ctx context.Context, cfg Config, log *slog.Logger, in net.Conn) {
	defer in.Close()
	var out net.Conn
	err := cfg.Enter(func() error {
		d := net.Dialer{Timeout: 5 * time.Second}
		var err error
		out, err = d.DialContext(ctx, "tcp", cfg.Target)
		return err
	})
	if err != nil {
		log.Warn("nsforward: dial failed", "target", cfg.Target, "err", err)
		return
	}
	defer out.Close()
	stop := context.AfterFunc(ctx, func() { in.Close(); out.Close() })
	defer stop()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done
	<-done
}
