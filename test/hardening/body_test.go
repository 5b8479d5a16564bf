package hardening

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/server/servertest"
)

const (
	// bodyNode is the node whose token the tests send with, the probe's
	// credential.
	bodyNode     = "body-node"
	bodyPassword = "body-test-node-password-0123456789"
	// bodyLimit is the API's body limit (apiserver.DefaultMaxBodyBytes):
	// the largest Content-Length the server takes.
	bodyLimit = 3 << 20
	// bodyStallSent is what a stalled request sends of its body.
	bodyStallSent = 200
)

// bodyEnv is a server of the body tests with a node token.
type bodyEnv struct {
	srv   *servertest.Server
	tls   *tls.Config
	token string // the node's
}

func newBodyEnv(t *testing.T, cfg func(*config.Server)) *bodyEnv {
	t.Helper()
	srv := startServer(t, servertest.Options{Config: cfg})
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(srv.Bundle().CACertPEM) {
		t.Fatal("no CA certificate")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := netagent.Join(ctx, srv.URL(), srv.Bundle().CACertPEM, srv.Bundle().NodeToken, bodyNode, bodyPassword)
	if err != nil {
		t.Fatal(err)
	}
	return &bodyEnv{srv: srv, tls: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, token: resp.Token}
}

// h2Client is an HTTP/2 client of the server (one connection carries many
// streams; the transport opens more at the server's stream limit).
func (e *bodyEnv) h2Client(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: e.tls.Clone(), ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// stallBody sends bodyStallSent bytes and then nothing until release is
// closed, when it fails (the client then resets the request).
type stallBody struct {
	sent    bool
	release <-chan struct{}
}

func (b *stallBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, strings.Repeat(" ", bodyStallSent)), nil
	}
	<-b.release
	return 0, errors.New("stalled body released")
}

// stalledRequest is a node's create of a Node declaring contentLength bytes
// of body and sending bodyStallSent of them.
func (e *bodyEnv) stalledRequest(t *testing.T, ctx context.Context, contentLength int64, release <-chan struct{}) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL()+"/api/v1/nodes", &stallBody{release: release})
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = contentLength
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/json")
	return req
}

// bodyReaders counts the goroutines of this process blocked reading a
// request body in the API server.
func bodyReaders(t *testing.T) int {
	t.Helper()
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	n := 0
	for block := range strings.SplitSeq(b.String(), "\n\n") {
		if !strings.Contains(block, "apiserver.readBody") {
			continue
		}
		// "N @ 0x..." heads each group of identical stacks (the first
		// after the profile's own header line).
		head, _, _ := strings.Cut(block, " @ ")
		head = head[strings.LastIndexByte(head, '\n')+1:]
		if c, err := strconv.Atoi(head); err == nil {
			n += c
		}
	}
	return n
}

// waitBodyReaders waits (bounded) for n requests to be stalled in the
// body read.
func waitBodyReaders(t *testing.T, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := bodyReaders(t)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("the server's request goroutines:\n%s", serverGoroutines(t))
			t.Fatalf("%d requests stalled in the body read after %v, want %d", got, within, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// serverGoroutines is the goroutine profile's groups that serve HTTP or
// run in the API server, for a failure's log.
func serverGoroutines(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	var out []string
	for block := range strings.SplitSeq(b.String(), "\n\n") {
		if strings.Contains(block, "skiff/apiserver") || strings.Contains(block, "serverConn") || strings.Contains(block, "net/http.(*conn).serve") {
			out = append(out, block)
		}
	}
	return strings.Join(out, "\n\n")
}

// heapAfterGC is the live heap.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestBodyStalledBodiesBoundedMemory: 1,000 requests of a node, each
// declaring a 3 MiB body, sending 200 bytes of it and stalling, all served
// at once (the in-flight cap raised out of the way): the server's heap
// grows by what arrived, not by what was declared. The requests are HTTP/2
// streams written by hand on a few connections (bodyH2Conn), so that the
// client, which shares this process, adds next to nothing to the heap.
func TestBodyStalledBodiesBoundedMemory(t *testing.T) {
	const (
		requests = 1000
		// Measured after the fix: ~25 MB for the 1,000 requests (a 16
		// KiB HTTP/2 receive buffer, the 4 KiB body buffer and the
		// request's state each). Allocating the Content-Length up front,
		// it was 3 GB.
		maxGrowth = 100 << 20
	)
	e := newBodyEnv(t, func(c *config.Server) { c.MaxMutatingRequestsInFlight = 2 * requests })
	before := heapAfterGC()
	for sent := 0; sent < requests; {
		c := newBodyH2Conn(t, e)
		for ; sent < requests && c.open < c.maxStreams; sent++ {
			c.stalledCreate(t, bodyLimit)
		}
	}
	waitBodyReaders(t, requests, 25*time.Second)
	after := heapAfterGC()
	growth := int64(after) - int64(before)
	t.Logf("heap %d MB -> %d MB with %d stalled bodies: %d KB a request",
		before>>20, after>>20, requests, growth/requests>>10)
	if growth > maxGrowth {
		t.Fatalf("%d requests declaring %d bytes and sending %d grew the heap by %d MB, want under %d MB",
			requests, bodyLimit, bodyStallSent, growth>>20, maxGrowth>>20)
	}
}

// bodyH2Conn is a hand-written HTTP/2 client connection: it opens streams
// that send their headers and bodyStallSent bytes of body, and never more.
// It reads (and drops) what the server sends, answering SETTINGS and PING.
type bodyH2Conn struct {
	e          *bodyEnv
	conn       *tls.Conn
	mu         sync.Mutex // serializes writes
	maxStreams int
	open       int
	next       uint32 // the next stream id
}

// HTTP/2 frame types and flags (RFC 9113).
const (
	h2Data, h2Headers, h2Settings, h2Ping = 0x0, 0x1, 0x4, 0x6
	h2FlagAck, h2FlagEndHeaders           = 0x1, 0x4
	h2SettingsMaxStreams                  = 0x3
)

func newBodyH2Conn(t *testing.T, e *bodyEnv) *bodyH2Conn {
	t.Helper()
	cfg := e.tls.Clone()
	cfg.NextProtos = []string{"h2"}
	conn, err := tls.Dial("tcp", strings.TrimPrefix(e.srv.URL(), "https://"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("negotiated %q, want h2", p)
	}
	c := &bodyH2Conn{e: e, conn: conn, maxStreams: 100, next: 1}
	if _, err := io.WriteString(conn, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	c.write(t, h2Settings, 0, 0, nil)
	// The server's first frame is its SETTINGS.
	typ, flags, payload, err := readH2Frame(conn)
	if err != nil || typ != h2Settings || flags&h2FlagAck != 0 {
		t.Fatalf("first frame from the server: type %d, %v", typ, err)
	}
	for i := 0; i+6 <= len(payload); i += 6 {
		if binary.BigEndian.Uint16(payload[i:]) == h2SettingsMaxStreams {
			c.maxStreams = int(binary.BigEndian.Uint32(payload[i+2:]))
		}
	}
	c.write(t, h2Settings, h2FlagAck, 0, nil)
	go c.readLoop()
	return c
}

func (c *bodyH2Conn) readLoop() {
	for {
		typ, flags, payload, err := readH2Frame(c.conn)
		if err != nil {
			return
		}
		switch {
		case typ == h2Settings && flags&h2FlagAck == 0:
			_ = c.send(h2Settings, h2FlagAck, 0, nil)
		case typ == h2Ping && flags&h2FlagAck == 0:
			_ = c.send(h2Ping, h2FlagAck, 0, payload)
		}
	}
}

func readH2Frame(r io.Reader) (typ, flags byte, payload []byte, err error) {
	var hdr [9]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, 0, nil, err
	}
	n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, 0, nil, err
	}
	return hdr[3], hdr[4], payload, nil
}

func (c *bodyH2Conn) send(typ, flags byte, stream uint32, payload []byte) error {
	b := make([]byte, 9, 9+len(payload))
	b[0], b[1], b[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	b[3], b[4] = typ, flags
	binary.BigEndian.PutUint32(b[5:], stream)
	b = append(b, payload...)
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.conn.Write(b)
	return err
}

func (c *bodyH2Conn) write(t *testing.T, typ, flags byte, stream uint32, payload []byte) {
	t.Helper()
	if err := c.send(typ, flags, stream, payload); err != nil {
		t.Fatal(err)
	}
}

// stalledCreate opens a stream creating a Node with the node's token,
// declaring contentLength bytes of body and sending bodyStallSent.
func (c *bodyH2Conn) stalledCreate(t *testing.T, contentLength int) {
	t.Helper()
	var block []byte
	for _, f := range [][2]string{
		{":method", "POST"}, {":scheme", "https"},
		{":authority", strings.TrimPrefix(c.e.srv.URL(), "https://")}, {":path", "/api/v1/nodes"},
		{"authorization", "Bearer " + c.e.token}, {"content-type", "application/json"},
		{"content-length", strconv.Itoa(contentLength)},
	} {
		// HPACK literal field without indexing, new name, no Huffman.
		block = append(block, 0)
		block = hpackString(block, f[0])
		block = hpackString(block, f[1])
	}
	id := c.next
	c.next += 2
	c.open++
	c.write(t, h2Headers, h2FlagEndHeaders, id, block)
	c.write(t, h2Data, 0, id, []byte(strings.Repeat(" ", bodyStallSent)))
}

// hpackString appends s as an HPACK string literal (7-bit prefix length).
func hpackString(b []byte, s string) []byte {
	n := len(s)
	if n < 127 {
		b = append(b, byte(n))
	} else {
		b = append(b, 127)
		for n -= 127; n >= 128; n >>= 7 {
			b = append(b, byte(n&127|128))
		}
		b = append(b, byte(n))
	}
	return append(b, s...)
}

// bodyStatus decodes a Status answer.
type bodyStatus struct {
	Kind    string `json:"kind"`
	Reason  string `json:"reason"`
	Code    int    `json:"code"`
	Message string `json:"message"`
	Details struct {
		RetryAfterSeconds int `json:"retryAfterSeconds"`
	} `json:"details"`
}

func decodeBodyStatus(t *testing.T, what string, r io.Reader) bodyStatus {
	t.Helper()
	b, _ := io.ReadAll(r)
	var st bodyStatus
	if err := json.Unmarshal(b, &st); err != nil || st.Kind != "Status" {
		t.Errorf("%s: not a Status: %s (%v)", what, b, err)
	}
	return st
}

// h1Stalled sends, over a fresh HTTP/1.1 TLS connection, a create of a
// Node declaring contentLength bytes and sending bodyStallSent, then waits
// up to wait for the answer; it returns the response (nil when the server
// closed the connection without one) and how long it took.
func (e *bodyEnv) h1Stalled(t *testing.T, token string, contentLength int, wait time.Duration) (*http.Response, time.Duration) {
	t.Helper()
	cfg := e.tls.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	host := strings.TrimPrefix(e.srv.URL(), "https://")
	conn, err := tls.Dial("tcp", host, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	start := time.Now()
	fmt.Fprintf(conn, "POST /api/v1/nodes HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		host, auth, contentLength, strings.Repeat(" ", bodyStallSent))
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	took := time.Since(start)
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("HTTP/1.1, Content-Length %d, %d bytes sent: no answer in %v", contentLength, bodyStallSent, wait)
	}
	if err != nil {
		return nil, took // closed without an answer: also an end
	}
	t.Cleanup(func() { res.Body.Close() })
	return res, took
}

// TestBodyStalledBodyTimesOut: a body that stops short of its
// Content-Length is answered 408 (reason Timeout) once the body timeout
// has passed, over HTTP/1.1 and HTTP/2, with or without a token; before,
// such a request was held forever.
func TestBodyStalledBodyTimesOut(t *testing.T) {
	const timeout = time.Second
	// The answer may come this much after the timeout on a loaded machine.
	const slack = 10 * time.Second
	e := newBodyEnv(t, func(c *config.Server) { c.RequestBodyTimeout = timeout })

	for _, c := range []struct {
		name          string
		token         string
		contentLength int
		code          int
	}{
		{"node token, 1000 bytes declared", e.token, 1000, http.StatusRequestTimeout},
		{"node token, 3 MiB declared", e.token, bodyLimit, http.StatusRequestTimeout},
		{"no token", "", 1000, http.StatusUnauthorized},
	} {
		res, took := e.h1Stalled(t, c.token, c.contentLength, timeout+slack)
		if res == nil {
			t.Logf("HTTP/1.1 %s: connection closed after %v", c.name, took)
			continue
		}
		st := decodeBodyStatus(t, "HTTP/1.1 "+c.name, res.Body)
		if res.StatusCode != c.code || st.Code != c.code {
			t.Errorf("HTTP/1.1 %s: %d %+v, want %d", c.name, res.StatusCode, st, c.code)
		}
		if c.code == http.StatusRequestTimeout && (st.Reason != "Timeout" || took < timeout/2) {
			t.Errorf("HTTP/1.1 %s: reason %q after %v", c.name, st.Reason, took)
		}
		t.Logf("HTTP/1.1 %s: %d after %v", c.name, res.StatusCode, took)
	}

	// HTTP/2: the deadline is the stream's.
	hc := e.h2Client(t)
	release := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), timeout+slack)
	defer cancel()
	start := time.Now()
	res, err := hc.Do(e.stalledRequest(t, ctx, 1000, release))
	// The transport's writer of the body ends with the body's Read: let it
	// end before the response is closed.
	close(release)
	if err != nil {
		t.Fatalf("HTTP/2: %v after %v", err, time.Since(start))
	}
	defer res.Body.Close()
	st := decodeBodyStatus(t, "HTTP/2", res.Body)
	if res.ProtoMajor != 2 || res.StatusCode != http.StatusRequestTimeout || st.Reason != "Timeout" {
		t.Errorf("HTTP/2: %s %d %+v, want HTTP/2 408 Timeout", res.Proto, res.StatusCode, st)
	}
	t.Logf("HTTP/2: %d after %v: %s", res.StatusCode, time.Since(start), st.Message)
}

// TestBodyInflightCap: with the write pool full (three writes stalled in
// their bodies), the next write of a node gets 429 TooManyRequests with
// Retry-After: 1 at once, over HTTP/2 and over HTTP/1.1 (even with a
// stalled body of its own); the admin (system:masters) and reads are still
// served, and watches, which are not counted, do not take the read pool.
func TestBodyInflightCap(t *testing.T) {
	const limit = 3
	e := newBodyEnv(t, func(c *config.Server) {
		c.MaxMutatingRequestsInFlight = limit
		c.MaxRequestsInFlight = limit
		c.RequestBodyTimeout = 25 * time.Second // the held writes outlive the test
	})
	hc := e.h2Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	// The held writes are HTTP/2 streams written by hand (bodyH2Conn), each
	// sending 200 of its 1,000 bytes: with Go's client a stalled body's
	// stream could see its answer only when the body's Read ended, so a
	// write answered 429 at once looked held. The server's own controllers
	// write at start-up too, and a write of theirs can hold a slot for a
	// moment: a stream answered 429 is over on the server, so streams are
	// opened until `limit` of them are held in their body read.
	h2 := newBodyH2Conn(t, e)
	free := func() { h2.conn.Close() } // resets every held stream
	defer free()
	begin := time.Now()
	for opened := 0; ; {
		got := bodyReaders(t)
		if got >= limit {
			break
		}
		if time.Since(begin) > 15*time.Second {
			t.Logf("the server's request goroutines:\n%s", serverGoroutines(t))
			t.Fatalf("%d writes held in the body read after 15s and %d streams, want %d", got, opened, limit)
		}
		// `limit` streams at once, then one more each 500 ms while short.
		if opened < limit || opened < 10*limit && time.Since(begin) > time.Duration(opened)*500*time.Millisecond {
			h2.stalledCreate(t, 1000)
			opened++
		}
		time.Sleep(100 * time.Millisecond)
	}

	do := func(method, path, token, body string) (*http.Response, time.Duration) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, e.srv.URL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		res, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res, time.Since(start)
	}
	node := `{"apiVersion":"v1","kind":"Node","metadata":{"name":"` + bodyNode + `"}}`

	res, took := do(http.MethodPost, "/api/v1/nodes", e.token, node)
	st := decodeBodyStatus(t, "write over the cap", res.Body)
	if res.StatusCode != http.StatusTooManyRequests || st.Reason != "TooManyRequests" ||
		res.Header.Get("Retry-After") != "1" || st.Details.RetryAfterSeconds != 1 {
		t.Errorf("write over the cap: %d Retry-After %q %+v, want 429 TooManyRequests, Retry-After 1",
			res.StatusCode, res.Header.Get("Retry-After"), st)
	}
	if took > 5*time.Second {
		t.Errorf("the 429 took %v", took)
	}
	// Over HTTP/1.1 with a stalled body of its own: answered at once, the
	// connection closed rather than the rest of the body waited for.
	if h1, took := e.h1Stalled(t, e.token, 1000, 10*time.Second); h1 == nil || h1.StatusCode != http.StatusTooManyRequests || took > 5*time.Second {
		t.Errorf("HTTP/1.1 stalled write over the cap: %v after %v, want 429 at once", h1, took)
	}

	admin := e.srv.Bundle().AdminToken
	lease := `{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"body-admin"}}`
	if res, _ := do(http.MethodPost, "/apis/coordination.k8s.io/v1/namespaces/default/leases", admin, lease); res.StatusCode != http.StatusCreated {
		t.Errorf("admin write with the write pool full: %d, want 201", res.StatusCode)
	}
	if res, _ := do(http.MethodGet, "/api/v1/nodes", e.token, ""); res.StatusCode != http.StatusOK {
		t.Errorf("node read with the write pool full: %d, want 200", res.StatusCode)
	}
	metrics, _ := do(http.MethodGet, "/metrics", admin, "")
	b, _ := io.ReadAll(metrics.Body)
	if want := `apiserver_current_inflight_requests{request_kind="mutating"} 3`; !strings.Contains(string(b), want) {
		t.Errorf("/metrics lacks %s", want)
	}

	// More watches than the read pool holds, all open at once.
	for i := range 2 * limit {
		if res, _ := do(http.MethodGet, "/api/v1/pods?watch=true", e.token, ""); res.StatusCode != http.StatusOK {
			t.Fatalf("watch %d: %d, want 200", i, res.StatusCode)
		}
	}
	if res, _ := do(http.MethodGet, "/api/v1/pods", e.token, ""); res.StatusCode != http.StatusOK {
		t.Errorf("read with %d watches open and a read pool of %d: %d, want 200", 2*limit, limit, res.StatusCode)
	}

	free()
	// A stalled request's client sees its answer a moment before the
	// server's handler returns its slot: the write is admitted once they
	// have, within a few seconds.
	code := 0
	for deadline := time.Now().Add(5 * time.Second); ; {
		res, _ := do(http.MethodPost, "/api/v1/nodes", e.token, node)
		if code = res.StatusCode; code != http.StatusTooManyRequests || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code != http.StatusCreated {
		t.Errorf("node write after the stalled ones ended: %d, want 201", code)
	}
}
