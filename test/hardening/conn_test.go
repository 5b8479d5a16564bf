package hardening

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver/pki"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/server/servertest"
)

// connFloodSize is how many idle connections the probe held against a
// server allowed connFileLimit file descriptors. The flood's client ends
// are held by helper processes (this test binary again, running
// TestConnFloodHelper), each within its own descriptor limit; the server
// runs in this process with its limit set to connFileLimit. A server that
// keeps every idle connection runs out of descriptors; one that caps them
// per address does not.
const (
	connFloodSize = 20000
	connFileLimit = 20000
)

// The helper's environment: the server's host:port, the CA file, and how
// many connections to hold.
const (
	connEnvAddr = "SKIFF_HARDENING_FLOOD_ADDR"
	connEnvCA   = "SKIFF_HARDENING_FLOOD_CA"
	connEnvN    = "SKIFF_HARDENING_FLOOD_N"
)

// connSetFileLimit sets this process's soft RLIMIT_NOFILE to n, or to the
// hard limit when that is lower, and restores it at cleanup. It returns the
// limit set, and skips the test when that is too low for the server to
// hold its per-address cap of connections.
func connSetFileLimit(t *testing.T, n uint64) uint64 {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	want := unix.Rlimit{Cur: min(n, old.Max), Max: old.Max}
	// The default --max-connections-per-address (1000), and room for
	// the rest.
	const minFDs = 2000
	if want.Cur < minFDs {
		t.Skipf("RLIMIT_NOFILE hard limit is %d: the server needs at least %d here (its per-address cap and the rest); raise it with `ulimit -Hn`", old.Max, minFDs)
	}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &want); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
			t.Errorf("restore RLIMIT_NOFILE: %v", err)
		}
	})
	return want.Cur
}

// connTLS is a client TLS config trusting ts's CA.
func connTLS(t *testing.T, ts *servertest.Server) *tls.Config {
	t.Helper()
	return connTLSFor(t, ts.Bundle().CACertPEM)
}

func connTLSFor(t *testing.T, caPEM []byte) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("no CA")
	}
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}}
}

func connHostPort(t *testing.T, ts *servertest.Server) string {
	u, err := url.Parse(ts.URL())
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// connIdle opens a TLS connection, sends GET /healthz, reads the answer
// and returns the raw connection, left idle (the TLS state is dropped: the
// server sees a keep-alive connection between requests).
func connIdle(addr string, cfg *tls.Config) (net.Conn, error) {
	raw, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return nil, err
	}
	_ = raw.SetDeadline(time.Now().Add(3 * time.Second))
	tc := tls.Client(raw, cfg)
	if _, err := io.WriteString(tc, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		raw.Close()
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		raw.Close()
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw.Close()
		return nil, fmt.Errorf("healthz: %s", resp.Status)
	}
	_ = raw.SetDeadline(time.Time{})
	return raw, nil
}

// TestConnFloodHelper is the helper process of
// TestConnIdleFloodLeavesRoomForAdmin; it does nothing in a normal run.
// It opens $SKIFF_HARDENING_FLOOD_N idle connections, prints
// "held H failed F last E", and holds them until its stdin closes.
func TestConnFloodHelper(t *testing.T) {
	addr := os.Getenv(connEnvAddr)
	if addr == "" {
		t.Skip("the helper process of TestConnIdleFloodLeavesRoomForAdmin")
	}
	ca, err := os.ReadFile(os.Getenv(connEnvCA))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fmt.Sscan(os.Getenv(connEnvN), &n)
	cfg := connTLSFor(t, ca)
	// Resumed handshakes over X25519 keep the flood cheap.
	cfg.ClientSessionCache = tls.NewLRUClientSessionCache(16)
	cfg.CurvePreferences = []tls.CurveID{tls.X25519}
	var (
		mu      sync.Mutex
		held    []net.Conn
		failed  atomic.Int64
		next    atomic.Int64
		lastErr atomic.Value
	)
	lastErr.Store("")
	deadline := time.Now().Add(90 * time.Second)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			// A worker stops after a few failures in a row: a server
			// out of descriptors accepts nothing more.
			for row := 0; row < 3 && next.Add(1) <= int64(n) && time.Now().Before(deadline); {
				c, err := connIdle(addr, cfg)
				if err != nil {
					row++
					failed.Add(1)
					lastErr.Store(err.Error())
					continue
				}
				row = 0
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fmt.Printf("held %d failed %d last %q\n", len(held), failed.Load(), lastErr.Load())
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, c := range held {
		c.Close()
	}
}

// connFlood starts helper processes that hold n idle connections to addr
// in all, waits until they have opened them, and returns how many they
// hold. The helpers end at cleanup.
func connFlood(t *testing.T, addr string, caPEM []byte, n int) int {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// A helper keeps 200 descriptors for itself.
	per := int(min(uint64(10000), lim.Max-200))
	type result struct {
		line string
		err  error
	}
	results := make(chan result, n/per+1)
	helpers := 0
	for left := n; left > 0; left -= per {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConnFloodHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), connEnvAddr+"="+addr, connEnvCA+"="+caFile, fmt.Sprintf("%s=%d", connEnvN, min(per, left)))
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stdin.Close()
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill() // by PID
				<-done
			}
		})
		helpers++
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "held ") {
					results <- result{line: sc.Text()}
					return
				}
			}
			results <- result{err: fmt.Errorf("helper ended without a result: %v", sc.Err())}
		}()
	}
	total := 0
	for range helpers {
		select {
		case r := <-results:
			if r.err != nil {
				t.Fatal(r.err)
			}
			t.Logf("flood helper: %s", r.line)
			var h int
			fmt.Sscanf(r.line, "held %d", &h)
			total += h
		case <-time.After(120 * time.Second):
			t.Fatal("the flood helpers did not finish")
		}
	}
	return total
}

// A client that opens connections, sends one GET /healthz on each and
// leaves them idle used to hold a file descriptor of the server per
// connection for ever: with 20,000 of them the server could not accept,
// and admin requests timed out. The per-address cap closes the longest
// idle instead.
func TestConnIdleFloodLeavesRoomForAdmin(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 20,000 connections")
	}
	limit := connSetFileLimit(t, connFileLimit)
	ts := startServer(t, servertest.Options{})
	start := time.Now()
	held := connFlood(t, connHostPort(t, ts), ts.Bundle().CACertPEM, connFloodSize)
	t.Logf("%d idle connections from 127.0.0.1 held in %v; this process may have %d descriptors", held, time.Since(start).Round(time.Millisecond), limit)

	// A new admin client, as kubectl would be.
	c, err := client.New(client.Config{Server: ts.URL(), CAPEM: ts.Bundle().CACertPEM, Token: ts.Bundle().AdminToken})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	t0 := time.Now()
	var ns api.Namespace
	if err := c.Get(ctx, api.Lookup(api.Resources(), "v1", "namespaces"), "", "default", &ns); err != nil {
		t.Fatalf("with %d idle connections from 127.0.0.1, an admin GET failed after %v: %v", held, time.Since(t0), err)
	}
	t.Logf("admin GET answered in %v", time.Since(t0))
	if held < connFloodSize*9/10 {
		t.Fatalf("only %d of %d flood connections got through: the cap refused connections although idle ones could be closed", held, connFloodSize)
	}
}

// connLog is a logger for a test server that keeps its lines (Debug and
// up) for the test to read.
type connLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *connLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *connLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *connLog) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// matching are the lines of l that hold every one of subs.
func (l *connLog) matching(subs ...string) []string {
	var out []string
	for line := range strings.SplitSeq(l.String(), "\n") {
		ok := line != ""
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			out = append(out, line)
		}
	}
	return out
}

// Failed TLS handshakes used to go to the log at Debug, one line each:
// an operator never saw a flood, and at Debug a flood is a line per
// connection. They are Warn now, a few a second, with a count of the rest.
func TestConnHandshakeErrorsWarnRateLimited(t *testing.T) {
	var logs connLog
	ts := startServer(t, servertest.Options{Logger: logs.logger()})
	addr := connHostPort(t, ts)
	const n = 200
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte("not a TLS client hello\r\n\r\n"))
		_, _ = io.Copy(io.Discard, c) // until the server hangs up
		c.Close()
	}
	// The summary comes when the one-second window ends.
	var sum []string
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if sum = logs.matching("TLS handshake error", "suppressed="); len(sum) > 0 {
			break
		}
	}
	lines := logs.matching("TLS handshake error")
	warn := logs.matching("level=WARN", `msg="https: TLS handshake error"`)
	if len(warn) == 0 || len(sum) == 0 {
		t.Fatalf("want handshake errors at Warn with a suppressed count; got %d lines:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if len(lines) > 20 {
		t.Fatalf("%d failed handshakes logged %d lines, want a few and a summary", n, len(lines))
	}
}

// TLS 1.2 used to offer CBC suites with SHA-1 MACs; only ECDHE with
// AES-GCM or ChaCha20-Poly1305 is offered now.
func TestConnTLS12OffersOnlyAEAD(t *testing.T) {
	ts := startServer(t, servertest.Options{})
	addr := connHostPort(t, ts)
	handshake := func(suites ...uint16) error {
		cfg := connTLS(t, ts)
		cfg.MaxVersion = tls.VersionTLS12
		cfg.CipherSuites = suites
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, s := range []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
		tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
		tls.TLS_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	} {
		if err := handshake(s); err == nil {
			t.Errorf("a TLS 1.2 client offering only %s completed the handshake", tls.CipherSuiteName(s))
		}
	}
	for _, s := range []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	} {
		// The serving key is of one kind; a suite of the other kind
		// fails for that reason alone, so try the pair.
		pair := map[uint16]uint16{
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:       tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:         tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:       tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		}[s]
		if err := handshake(s, pair); err != nil {
			t.Errorf("a TLS 1.2 client offering %s failed: %v", tls.CipherSuiteName(s), err)
		}
	}
}

// connStall sends the headers of an admin POST whose body never comes,
// and returns once the server has the request.
func connStall(t *testing.T, addr string, cfg *tls.Config, token string) net.Conn {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /api/v1/namespaces HTTP/1.1\r\nHost: 127.0.0.1\r\n"+
		"Authorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"kind\":", token)
	time.Sleep(300 * time.Millisecond) // the handler is reading the body
	return c
}

// A SIGTERM whose --shutdown-timeout ran out on a slow client used to be
// an error (exit status 1). Cutting that client is the timeout doing its
// job: Stop returns nil and says at Warn how many connections it cut.
func TestConnShutdownCutsSlowClientCleanly(t *testing.T) {
	var logs connLog
	ts := startServer(t, servertest.Options{Logger: logs.logger(), Config: func(c *config.Server) {
		c.ShutdownTimeout = time.Second
	}})
	connStall(t, connHostPort(t, ts), connTLS(t, ts), ts.Bundle().AdminToken)
	t0 := time.Now()
	ts.Stop() // fails the test unless server.Stop returned nil
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("Stop took %v with a 1s shutdown timeout", d)
	}
	cut := logs.matching("level=WARN", "shutdown", "connections=")
	if len(cut) != 1 {
		t.Fatalf("want one Warn naming the connections cut; log:\n%s", logs.String())
	}
	if m := regexp.MustCompile(`connections=(\d+)`).FindStringSubmatch(cut[0]); m == nil || m[1] == "0" {
		t.Fatalf("the Warn does not count the slow client: %s", cut[0])
	}
}

// The same through the binary: `skiff server` cut off a slow client at
// SIGTERM and exits 0.
func TestConnServerProcessExitsZeroAfterCuttingSlowClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the skiff binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "skiff")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/skiff")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	cmd := exec.Command(bin, "server", "--data-dir", data, "--listen", "127.0.0.1:0", "--disable-agent", "--shutdown-timeout", "1s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill() // by PID
			_ = cmd.Wait()
		}
	})
	var logs connLog
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`msg="skiff server ready" url=(https://\S+)`)
		for sc.Scan() {
			fmt.Fprintln(&logs, sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
	}()
	var u string
	select {
	case u = <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not get ready:\n%s", logs.String())
	}
	ca, err := os.ReadFile(filepath.Join(data, pki.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	token, err := os.ReadFile(filepath.Join(data, pki.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	connStall(t, strings.TrimPrefix(u, "https://"), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}},
		strings.TrimSpace(string(token)))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("skiff server exited with status %d after SIGTERM with a slow client:\n%s", exit.ExitCode(), logs.String())
		} else if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("skiff server did not exit after SIGTERM:\n%s", logs.String())
	}
}

// --request-read-timeout bounds reading a request, but a watch stays open
// by design: an HTTP/1.1 watch still delivers events after the timeout
// has passed. (net/http lifts the read deadline itself once a request's
// body is read; the server lifts it for long-running requests too, so
// this holds whichever does.)
func TestConnWatchOutlivesReadTimeout(t *testing.T) {
	ts := startServer(t, servertest.Options{Config: func(c *config.Server) { c.RequestReadTimeout = time.Second }})
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", connHostPort(t, ts), connTLS(t, ts))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /api/v1/namespaces?watch=true HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n", ts.Bundle().AdminToken)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("watch: %v %v", resp, err)
	}
	time.Sleep(2500 * time.Millisecond)
	ns := &api.Namespace{ObjectMeta: api.ObjectMeta{Name: "after-the-timeout"}}
	if err := ts.Client().Create(context.Background(), api.Lookup(api.Resources(), "v1", "namespaces"), "", ns); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make(chan string, 1)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for !strings.Contains(b.String(), "after-the-timeout") {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		got <- b.String()
	}()
	if s := <-got; !strings.Contains(s, "after-the-timeout") {
		t.Fatalf("the watch ended or stayed silent after the read timeout: %q", s)
	}
}
