package netexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// Config configures a netexec server.
type Config struct {
	// HTTPPort is the HTTP port; 0 picks a free one.
	HTTPPort int
	// UDPPort is the UDP port; 0 picks a free one, negative runs no UDP
	// server.
	UDPPort int
	// Address is the address both servers listen on; "" means every
	// address.
	Address string
	// PodName is what /hostname and UDP "hostname" answer (see PodName).
	PodName string
	// DialTimeout bounds each /dial try; 0 means 5 s, as agnhost.
	DialTimeout time.Duration
	// Resolver resolves /dial hosts; nil means Go's own resolver
	// (net.Resolver{PreferGo: true}), which reads /etc/hosts and
	// /etc/resolv.conf.
	Resolver *net.Resolver
	// ShutdownTimeout bounds the graceful HTTP shutdown on /exit and on
	// cancellation; 0 means 5 s.
	ShutdownTimeout time.Duration
	// Logger gets one line per request; nil discards.
	Logger *slog.Logger
}

// ExitError is what Run returns after /exit?code=N: the process should exit
// with Code.
type ExitError struct{ Code int }

func (e *ExitError) Error() string {
	return fmt.Sprintf("netexec: /exit asked for exit code %d", e.Code)
}

// ExitCode is the status the process should exit with.
func (e *ExitError) ExitCode() int { return e.Code }

// PodName is the name netexec answers when Config.PodName is empty in the
// command: $POD_NAME, else the host name.
func PodName() string {
	if n := os.Getenv("POD_NAME"); n != "" {
		return n
	}
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}

// Server serves netexec's HTTP and UDP protocols.
type Server struct {
	cfg    Config
	log    *slog.Logger
	health atomic.Int32  // status /healthz answers
	exit   chan int      // /exit codes; buffered 1, the first wins
	closed chan struct{} // closed when Serve has returned
}

// NewServer returns a Server for cfg (ports and Address are ignored: Serve
// takes listeners).
func NewServer(cfg Config) *Server {
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 5 * time.Second
	}
	if cfg.Resolver == nil {
		cfg.Resolver = &net.Resolver{PreferGo: true}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{cfg: cfg, log: log, exit: make(chan int, 1), closed: make(chan struct{})}
	s.health.Store(http.StatusOK)
	return s
}

// Run listens on cfg's ports and serves until ctx is cancelled (nil) or
// /exit is called (*ExitError).
func Run(ctx context.Context, cfg Config) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Address, strconv.Itoa(cfg.HTTPPort)))
	if err != nil {
		return fmt.Errorf("netexec: http listen: %w", err)
	}
	var pc net.PacketConn
	if cfg.UDPPort >= 0 {
		pc, err = net.ListenPacket("udp", net.JoinHostPort(cfg.Address, strconv.Itoa(cfg.UDPPort)))
		if err != nil {
			ln.Close()
			return fmt.Errorf("netexec: udp listen: %w", err)
		}
	}
	s := NewServer(cfg)
	s.log.Info("netexec: started HTTP server", "addr", ln.Addr().String(), "pod", cfg.PodName)
	if pc != nil {
		s.log.Info("netexec: started UDP server", "addr", pc.LocalAddr().String())
	}
	return s.Serve(ctx, ln, pc)
}

// Serve serves HTTP on ln and, when pc is not nil, UDP on pc, until ctx is
// cancelled (nil) or /exit is called (*ExitError). It closes both.
func (s *Server) Serve(ctx context.Context, ln net.Listener, pc net.PacketConn) error {
	defer close(s.closed)
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	udpCtx, stopUDP := context.WithCancel(ctx)
	defer stopUDP()
	udpDone := make(chan struct{})
	if pc != nil {
		go func() {
			defer close(udpDone)
			if err := s.ServeUDP(udpCtx, pc); err != nil {
				errc <- err
			}
		}()
	} else {
		close(udpDone)
	}

	var result error
	select {
	case <-ctx.Done():
	case code := <-s.exit:
		result = &ExitError{Code: code}
	case err := <-errc:
		result = fmt.Errorf("netexec: serve: %w", err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		s.log.Warn("netexec: graceful shutdown", "err", err)
		srv.Close()
	}
	stopUDP()
	<-udpDone
	return result
}

// ServeUDP answers datagrams on pc until ctx is cancelled (nil) or pc fails.
// It closes pc.
func (s *Server) ServeUDP(ctx context.Context, pc net.PacketConn) error {
	stop := context.AfterFunc(ctx, func() { pc.Close() })
	defer stop()
	defer pc.Close()
	buf := make([]byte, 2048)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("netexec: udp read: %w", err)
		}
		reply, ok := s.udpReply(string(buf[:n]), addr)
		if !ok {
			s.log.Info("netexec: unknown UDP command", "from", addr.String(), "len", n)
			continue
		}
		if _, err := pc.WriteTo([]byte(reply), addr); err != nil {
			s.log.Warn("netexec: udp write", "to", addr.String(), "err", err)
		}
	}
}
