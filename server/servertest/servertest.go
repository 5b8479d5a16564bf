package servertest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/apiserver/pki"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server"
	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

// Timeouts of the helpers; a loaded machine (several test binaries
// compiling and running at once) needs the margin.
const (
	startTimeout = 30 * time.Second
	// leakTimeout bounds the wait for the server's goroutines to end
	// after Stop has returned (connections the http.Server closed are
	// still being torn down by their goroutines).
	leakTimeout = 10 * time.Second
	// rebindTimeout bounds the retries of a restart whose address is
	// briefly taken.
	rebindTimeout = 5 * time.Second
)

// goroutineLabel is the pprof label key that marks the goroutines of one
// start of one server (see Server.label).
const goroutineLabel = "skiff-servertest"

// Options are what tests vary. The zero value is a server on a fresh data
// dir, with no built-in agent, fsync off and no DNS.
type Options struct {
	// DataDir is the server's data dir; "" is a new t.TempDir() (for New:
	// a temporary dir that Close removes). A test that starts a second
	// server over the first one's files passes the first's DataDir.
	DataDir string
	// DisabledControllers names built-in controllers not to run
	// (config.Server.DisabledControllers).
	DisabledControllers []string
	// Agent runs the built-in agent. Off by default: a test binary runs
	// it only in a network namespace the test made, which Config sets
	// (AgentNetNS).
	Agent bool
	// ServiceCIDR replaces the default --service-cidr when set.
	ServiceCIDR string
	// LBCIDR is --lb-cidr; "" leaves LoadBalancer Services pending.
	LBCIDR string
	// DNS serves cluster DNS on a free loopback port (Server.DNSAddr),
	// forwarding to 127.0.0.1:1, where nothing answers, unless Config
	// names upstreams.
	DNS bool
	// Sync keeps fsync on (crash tests); off by default.
	Sync bool
	// Logger receives the server's logs; nil logs warnings and errors to
	// the test log with -v, and nothing otherwise.
	Logger *slog.Logger
	// Config, when set, changes the configuration last, after every
	// field above has been applied.
	Config func(*config.Server)
}

// Server is a running (or stopped) Skiff server of a test.
type Server struct {
	t        testing.TB // nil for a server from New
	log      *slog.Logger
	tmp      string        // a data dir New made, which Close removes
	leakWait time.Duration // leakTimeout; shorter in this package's tests

	mu     sync.Mutex
	cfg    config.Server
	srv    *server.Server // nil while stopped
	c      *client.Client
	url    string // the API's URL since the first start
	starts int    // how many times the server has started
	label  string // the goroutine label of the current start
}

// Start starts a server for t and registers a cleanup that stops it and
// checks that it stopped: server.Stop returned nil, every goroutine the
// server started has ended, and the store file passes its checks. Start
// fails the test if the server does not come up.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	s := &Server{t: t, log: opts.Logger, leakWait: leakTimeout, cfg: configFor(opts)}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.start(ctx, false); err != nil {
		t.Fatalf("servertest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("servertest: %v", err)
		}
	})
	return s
}

// New starts a server that no test owns, for a TestMain or a server shared
// by a package's tests; Close stops it. Its Stop and Restart panic on
// error, having no test to fail.
func New(ctx context.Context, opts Options) (*Server, error) {
	var tmp string
	if opts.DataDir == "" {
		d, err := os.MkdirTemp("", "skiff-servertest-")
		if err != nil {
			return nil, fmt.Errorf("servertest: %w", err)
		}
		opts.DataDir, tmp = d, d
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{log: opts.Logger, tmp: tmp, leakWait: leakTimeout, cfg: configFor(opts)}
	if err := s.start(ctx, false); err != nil {
		if tmp != "" {
			_ = os.RemoveAll(tmp)
		}
		return nil, fmt.Errorf("servertest: %w", err)
	}
	return s, nil
}

// Close stops a server from New with the checks of Start's cleanup,
// removes the data dir New made, and returns what went wrong.
func (s *Server) Close() error {
	err := s.stop()
	if s.tmp != "" {
		err = errors.Join(err, os.RemoveAll(s.tmp))
	}
	if err != nil {
		return fmt.Errorf("servertest: %w", err)
	}
	return nil
}

// configFor is the configuration opts describe: loopback, a port of the
// kernel's choosing, fsync and agent off unless asked for.
func configFor(opts Options) config.Server {
	cfg := config.ServerDefaults()
	cfg.DataDir = opts.DataDir
	cfg.Listen = "127.0.0.1:0"
	cfg.DisableAgent = !opts.Agent
	cfg.NoSync = !opts.Sync
	cfg.DisabledControllers = append([]string(nil), opts.DisabledControllers...)
	if opts.ServiceCIDR != "" {
		cfg.ServiceCIDR = opts.ServiceCIDR
	}
	cfg.LBCIDR = opts.LBCIDR
	if opts.DNS {
		cfg.DNSListen = "127.0.0.1:0"
		cfg.DNSUpstream = []string{"127.0.0.1:1"}
	}
	if opts.Config != nil {
		opts.Config(&cfg)
	}
	return cfg
}

// start starts the server with s.cfg. Every goroutine it starts carries
// the label of this start, which stop checks. After the first start the
// configuration holds the addresses the kernel chose, so a restart keeps
// the URL of the kubeconfig (and the DNS address); retry allows for the
// moment such an address is still held after a stop.
func (s *Server) start(ctx context.Context, retry bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return errors.New("start: already running")
	}
	s.starts++
	s.label = fmt.Sprintf("%p/%d", s, s.starts)
	deadline := time.Now().Add(rebindTimeout)
	var srv *server.Server
	var err error
	for {
		pprof.Do(ctx, pprof.Labels(goroutineLabel, s.label), func(ctx context.Context) {
			srv, err = server.Start(ctx, s.cfg, s.log)
		})
		if err == nil || !retry || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	c, err := srv.Client()
	if err != nil {
		_ = srv.Stop()
		return fmt.Errorf("start: client: %w", err)
	}
	s.srv, s.c, s.url = srv, c, srv.URL()
	s.cfg.Listen = withChosenPort(s.cfg.Listen, s.url[strings.LastIndex(s.url, ":")+1:])
	if a := srv.DNSAddr(); a != "" {
		s.cfg.DNSListen = withChosenPort(s.cfg.DNSListen, a[strings.LastIndex(a, ":")+1:])
	}
	return nil
}

// withChosenPort is addr with port 0 replaced by the port the kernel chose.
func withChosenPort(addr, port string) string {
	host, p, err := net.SplitHostPort(addr)
	if err != nil || p != "0" {
		return addr
	}
	return net.JoinHostPort(host, port)
}

// stop stops a running server and checks that it stopped; on a stopped
// server it does nothing.
func (s *Server) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		return nil
	}
	srv, label := s.srv, s.label
	s.srv, s.c = nil, nil
	var err error
	pprof.Do(context.Background(), pprof.Labels(goroutineLabel, label), func(context.Context) {
		err = srv.Stop()
	})
	if err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	if left := waitGoroutines(goroutineLabel, label, s.leakWait); len(left) > 0 {
		return fmt.Errorf("stop: %d goroutine stacks of the server still running %v after Stop:\n%s",
			len(left), s.leakWait, strings.Join(left, "\n"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := storetest.CheckFile(ctx, s.storePath(), store.BoltOptions{NoSync: true}); err != nil {
		return fmt.Errorf("stop: store check: %w", err)
	}
	return nil
}

// Stop stops the server and checks that it stopped (see Start). A failure
// is reported with t.Errorf and the test goes on, so Stop may run on any
// goroutine. Stop on a stopped server does nothing.
func (s *Server) Stop() {
	if err := s.stop(); err != nil {
		s.errorf("servertest: %v", err)
	}
}

// Restart stops the server if it is running and starts it again over the
// same data dir, on the same API (and DNS) address. Client returns a
// client of the new start. It must run on the test's goroutine.
func (s *Server) Restart() {
	if s.t != nil {
		s.t.Helper()
	}
	if err := s.stop(); err != nil {
		s.fatalf("servertest: restart: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.start(ctx, true); err != nil {
		s.fatalf("servertest: restart: %v", err)
	}
}

func (s *Server) errorf(format string, args ...any) {
	if s.t == nil {
		panic(fmt.Errorf(format, args...))
	}
	s.t.Errorf(format, args...)
}

func (s *Server) fatalf(format string, args ...any) {
	if s.t == nil {
		panic(fmt.Errorf(format, args...))
	}
	s.t.Helper()
	s.t.Fatalf(format, args...)
}

// running is the running server and its admin client; it fails the test
// (or panics) when the server is stopped.
func (s *Server) running() (*server.Server, *client.Client) {
	s.mu.Lock()
	srv, c := s.srv, s.c
	s.mu.Unlock()
	if srv == nil {
		s.fatalf("servertest: the server is stopped")
	}
	return srv, c
}

// Client is an admin client of the running server. After a Restart it is
// another client: take it again.
func (s *Server) Client() *client.Client {
	_, c := s.running()
	return c
}

// Server is the running server.Server, for what this package does not
// wrap (Agent, for one).
func (s *Server) Server() *server.Server {
	srv, _ := s.running()
	return srv
}

// URL is the API's https URL. It does not change across Restart.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Bundle is the running server's TLS material and tokens.
func (s *Server) Bundle() *pki.Bundle { return s.Server().Bundle() }

// Kubeconfig is the path of the admin kubeconfig, which points at URL.
func (s *Server) Kubeconfig() string { return filepath.Join(s.DataDir(), "admin.kubeconfig") }

// DNSAddr is the address of the cluster DNS (UDP and TCP); "" without
// Options.DNS or a DNSListen of Config's.
func (s *Server) DNSAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		return ""
	}
	return s.srv.DNSAddr()
}

// DataDir is the server's data dir.
func (s *Server) DataDir() string { return s.Config().DataDir }

// Config is the configuration the server runs with; after the first start
// its Listen (and DNSListen) hold the addresses the kernel chose.
func (s *Server) Config() config.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

func (s *Server) storePath() string { return filepath.Join(s.cfg.DataDir, "db", "skiff.db") }

// waitGoroutines waits up to d for every goroutine labelled key=value to
// end, and returns the stacks of those still running.
func waitGoroutines(key, value string, d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		left := labelledGoroutines(key, value)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// labelledGoroutines returns the stacks, as the goroutine profile prints
// them with debug=1, of the running goroutines labelled key=value.
// Goroutines inherit the labels of the goroutine that starts them, so
// these are the goroutines started, directly or not, inside pprof.Do with
// that label.
func labelledGoroutines(key, value string) []string {
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		return []string{"goroutine profile: " + err.Error()}
	}
	want := fmt.Sprintf("%q:%q", key, value)
	var out []string
	for block := range strings.SplitSeq(b.String(), "\n\n") {
		for line := range strings.SplitSeq(block, "\n") {
			if strings.HasPrefix(line, "# labels: ") && strings.Contains(line, want) {
				out = append(out, block)
				break
			}
		}
	}
	return out
}

// testLogger logs warnings and errors to the test log only when -v asks
// for them; info lines would drown the output.
func testLogger(t testing.TB) *slog.Logger {
	if !testing.Verbose() {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
