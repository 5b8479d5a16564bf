package portforward

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/moby/spdystream"
)

// The names on the wire (k8s.io/api/core/v1 and apimachinery httpstream).
const (
	// ProtocolV1 is the only portforward protocol version there is.
	ProtocolV1 = "portforward.k8s.io"
	// ProtocolTunnel is the WebSocket subprotocol of SPDY over WebSocket.
	ProtocolTunnel = "SPDY/3.1+" + ProtocolV1
	// HeaderSpdy31 is the Upgrade value of plain SPDY.
	HeaderSpdy31 = "SPDY/3.1"

	HeaderProtocolVersion          = "X-Stream-Protocol-Version"
	HeaderAcceptedProtocolVersions = "X-Accepted-Stream-Protocol-Versions"

	HeaderStreamType = "streamType"
	HeaderPort       = "port"
	HeaderRequestID  = "requestID"
	StreamTypeError  = "error"
	StreamTypeData   = "data"
)

// Defaults of Options (the kubelet's streaming server: 4h idle, 30s for
// a pair's second stream).
const (
	DefaultIdleTimeout           = 4 * time.Hour
	DefaultStreamCreationTimeout = 30 * time.Second
)

// bufSize is each copy's buffer: one read, one SPDY data frame.
const bufSize = 256 << 10

// DialFunc connects to a port of the pod.
type DialFunc func(ctx context.Context, port uint16) (net.Conn, error)

// Options of Serve. Pod and UID name the pod in error messages.
type Options struct {
	Pod, UID              string
	IdleTimeout           time.Duration
	StreamCreationTimeout time.Duration
	Log                   *slog.Logger
}

// IsUpgrade reports whether r asks for a portforward upgrade Serve takes
// (plain SPDY or SPDY over WebSocket).
func IsUpgrade(r *http.Request) bool {
	return headerHas(r.Header, "Connection", "upgrade") &&
		(headerHas(r.Header, "Upgrade", "spdy/3.1") || headerHas(r.Header, "Upgrade", "websocket"))
}

// Serve upgrades r and forwards each stream pair to dial until the
// connection closes. It returns once everything it started has ended;
// an error is a failed upgrade (already answered to the client).
func Serve(w http.ResponseWriter, r *http.Request, dial DialFunc, o Options) error {
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.StreamCreationTimeout <= 0 {
		o.StreamCreationTimeout = DefaultStreamCreationTimeout
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	var conn net.Conn
	if websocket.IsWebSocketUpgrade(r) && !tunnelRequested(r) {
		return serveChannels(w, r, dial, o)
	}
	if websocket.IsWebSocketUpgrade(r) {
		c, err := upgradeWebSocket(w, r)
		if err != nil {
			return err
		}
		conn = c
	} else {
		c, err := upgradeSPDY(w, r)
		if err != nil {
			return err
		}
		conn = c
	}
	sc, err := spdystream.NewConnection(conn, true)
	if err != nil {
		conn.Close()
		return fmt.Errorf("portforward: SPDY connection: %w", err)
	}
	sc.SetIdleTimeout(o.IdleTimeout)
	h := &handler{conn: sc, dial: dial, o: o, streams: make(chan *spdystream.Stream, 1), pairs: map[string]*pair{}}
	ctx, cancel := context.WithCancel(context.Background())
	go sc.Serve(h.newStream)
	h.run(ctx)
	cancel()
	h.wg.Wait()
	// Reset what is left so the peer sees it, then close; closing the
	// spdystream connection closes the network connection after its
	// shutdown, which the net.Conn close here makes immediate.
	h.resetAll()
	_ = sc.Close()
	conn.Close()
	return nil
}

// tunnelRequested: the client offers SPDY over WebSocket.
func tunnelRequested(r *http.Request) bool {
	for _, p := range websocket.Subprotocols(r) {
		if p == ProtocolTunnel {
			return true
		}
	}
	return false
}

func deadlineSoon() time.Time { return time.Now().Add(time.Second) }

func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, s := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(s), token) {
				return true
			}
		}
	}
	return false
}

func clientProtocols(h http.Header) []string {
	var out []string
	for _, v := range h.Values(HeaderProtocolVersion) {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// upgradeSPDY is httpstream.Handshake and the SPDY response upgrader.
func upgradeSPDY(w http.ResponseWriter, r *http.Request) (net.Conn, error) {
	if !headerHas(r.Header, "Connection", "upgrade") || !headerHas(r.Header, "Upgrade", strings.ToLower(HeaderSpdy31)) {
		err := errors.New("unable to upgrade: missing upgrade headers in request")
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, err
	}
	protos := clientProtocols(r.Header)
	if len(protos) == 0 {
		err := fmt.Errorf("unable to upgrade: %s is required", HeaderProtocolVersion)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, err
	}
	found := false
	for _, p := range protos {
		found = found || p == ProtocolV1
	}
	if !found {
		w.Header().Add(HeaderAcceptedProtocolVersions, ProtocolV1)
		err := fmt.Errorf("unable to upgrade: unable to negotiate protocol: client supports %v, server accepts %v", protos, []string{ProtocolV1})
		http.Error(w, err.Error(), http.StatusForbidden)
		return nil, err
	}
	// ResponseController follows Unwrap through middleware wrappers.
	c, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		err = fmt.Errorf("unable to upgrade: unable to hijack response: %w", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil, err
	}
	// No deadline of the HTTP server outlives the upgrade (the idle
	// timeout of the SPDY connection bounds it instead).
	_ = c.SetDeadline(time.Time{})
	// The 101 is written by hand: after Hijack the ResponseWriter is gone.
	resp := "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + HeaderSpdy31 +
		"\r\n" + HeaderProtocolVersion + ": " + ProtocolV1 + "\r\n\r\n"
	if _, err := brw.WriteString(resp); err != nil {
		c.Close()
		return nil, err
	}
	if err := brw.Flush(); err != nil {
		c.Close()
		return nil, err
	}
	return &bufConn{Conn: c, r: brw.Reader}, nil
}

// bufConn reads what the HTTP server had buffered first.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func upgradeWebSocket(w http.ResponseWriter, r *http.Request) (net.Conn, error) {
	ok := false
	for _, p := range websocket.Subprotocols(r) {
		ok = ok || p == ProtocolTunnel
	}
	if !ok {
		err := fmt.Errorf("unable to upgrade: unable to negotiate protocol: client supports %v, server accepts %v", websocket.Subprotocols(r), []string{ProtocolTunnel})
		http.Error(w, err.Error(), http.StatusForbidden)
		return nil, err
	}
	u := websocket.Upgrader{
		Subprotocols:    []string{ProtocolTunnel},
		ReadBufferSize:  bufSize,
		WriteBufferSize: bufSize,
		CheckOrigin:     func(*http.Request) bool { return true },
	}
	ws, err := u.Upgrade(w, r, nil)
	if err != nil {
		return nil, err // Upgrade answered the client
	}
	return newWSConn(ws), nil
}

// handler pairs the streams of one connection and runs their forwards.
type handler struct {
	conn    *spdystream.Connection
	dial    DialFunc
	o       Options
	streams chan *spdystream.Stream
	wg      sync.WaitGroup

	mu    sync.Mutex
	pairs map[string]*pair
	all   []*spdystream.Stream
}

type pair struct {
	id          string
	data, error *spdystream.Stream
	complete    chan struct{}
}

// newStream is spdystream's handler: it checks the headers (resetting a
// stream without valid ones, as httpStreamReceived) and replies.
func (h *handler) newStream(s *spdystream.Stream) {
	if err := checkStream(s.Headers()); err != nil {
		h.o.Log.Debug("portforward: stream rejected", "err", err)
		_ = s.Reset()
		return
	}
	h.mu.Lock()
	h.all = append(h.all, s)
	h.mu.Unlock()
	_ = s.SendReply(http.Header{}, false)
	select {
	case h.streams <- s:
	case <-h.conn.CloseChan():
		_ = s.Reset()
	}
}

func checkStream(hd http.Header) error {
	ps := hd.Get(HeaderPort)
	if ps == "" {
		return fmt.Errorf("%q header is required", HeaderPort)
	}
	port, err := strconv.ParseUint(ps, 10, 16)
	if err != nil {
		return fmt.Errorf("unable to parse %q as a port: %v", ps, err)
	}
	if port < 1 {
		return fmt.Errorf("port %q must be > 0", ps)
	}
	switch t := hd.Get(HeaderStreamType); t {
	case StreamTypeError, StreamTypeData:
	case "":
		return fmt.Errorf("%q header is required", HeaderStreamType)
	default:
		return fmt.Errorf("invalid stream type %q", t)
	}
	return nil
}

func requestID(s *spdystream.Stream) string {
	if id := s.Headers().Get(HeaderRequestID); id != "" {
		return id
	}
	// Clients before requestID: the error stream's ID, data ID - 2.
	if s.Headers().Get(HeaderStreamType) == StreamTypeData {
		return strconv.Itoa(int(s.Identifier()) - 2)
	}
	return strconv.Itoa(int(s.Identifier()))
}

func (h *handler) run(ctx context.Context) {
	for {
		select {
		case <-h.conn.CloseChan():
			return
		case s := <-h.streams:
			id := requestID(s)
			h.mu.Lock()
			p, ok := h.pairs[id]
			if !ok {
				p = &pair{id: id, complete: make(chan struct{})}
				h.pairs[id] = p
				h.wg.Add(1)
				go h.monitor(ctx, p)
			}
			var err error
			switch s.Headers().Get(HeaderStreamType) {
			case StreamTypeError:
				if p.error != nil {
					err = errors.New("error stream already assigned")
				} else {
					p.error = s
				}
			case StreamTypeData:
				if p.data != nil {
					err = errors.New("data stream already assigned")
				} else {
					p.data = s
				}
			}
			done := err == nil && p.error != nil && p.data != nil
			if done {
				close(p.complete)
			}
			errStream := p.error
			h.mu.Unlock()
			if err != nil {
				if errStream != nil {
					fmt.Fprintf(errStream, "error processing stream for request %s: %v", id, err)
				}
				_ = s.Reset()
				continue
			}
			if done {
				h.wg.Add(1)
				go h.forward(ctx, p)
			}
		}
	}
}

// monitor drops a pair whose second stream does not come in time.
func (h *handler) monitor(ctx context.Context, p *pair) {
	defer h.wg.Done()
	t := time.NewTimer(h.o.StreamCreationTimeout)
	defer t.Stop()
	select {
	case <-p.complete:
	case <-ctx.Done():
	case <-t.C:
		h.mu.Lock()
		e, d := p.error, p.data
		delete(h.pairs, p.id)
		h.mu.Unlock()
		if e != nil {
			fmt.Fprintf(e, "(conn=%p, request=%s) timed out waiting for streams", h.conn, p.id)
			_ = e.Close()
			_ = e.Reset()
		}
		if d != nil {
			_ = d.Reset()
		}
		return
	}
	h.mu.Lock()
	delete(h.pairs, p.id)
	h.mu.Unlock()
}

// forward dials the pair's port and copies both ways (the kubelet's
// portForward plus the runtime's copy loop).
func (h *handler) forward(ctx context.Context, p *pair) {
	defer h.wg.Done()
	defer h.forget(p.data, p.error)
	port, _ := strconv.ParseUint(p.data.Headers().Get(HeaderPort), 10, 16)
	err := h.copy(ctx, uint16(port), p.data)
	if err != nil {
		msg := fmt.Sprintf("error forwarding port %d to pod %s, uid %v: %v", port, h.o.Pod, h.o.UID, err)
		h.o.Log.Debug("portforward", "err", msg)
		fmt.Fprint(p.error, msg)
	}
	// Close sends FIN; the Reset after it sends nothing more but frees
	// the streams here (a frame for a stream nobody reads would block
	// spdystream's frame worker, and its shutdown waits for every stream).
	_ = p.data.Close()
	_ = p.error.Close()
	_ = p.data.Reset()
	_ = p.error.Reset()
}

func (h *handler) copy(ctx context.Context, port uint16, data *spdystream.Stream) error {
	pc, err := h.dial(ctx, port)
	if err != nil {
		return err
	}
	defer pc.Close()
	stop := context.AfterFunc(ctx, func() { pc.Close(); _ = data.Reset() })
	defer stop()
	toPod := make(chan struct{})
	go func() {
		defer close(toPod)
		_, err := io.CopyBuffer(writerOnly{pc}, data, make([]byte, bufSize))
		if cw, ok := pc.(interface{ CloseWrite() error }); ok && err == nil {
			_ = cw.CloseWrite() // the client is done sending: the pod may still answer
		} else {
			pc.Close()
		}
	}()
	fromPod := make(chan struct{})
	go func() {
		defer close(fromPod)
		_, _ = io.CopyBuffer(data, readerOnly{pc}, make([]byte, bufSize))
		_ = data.Close() // FIN: the client's copy to its local connection ends
	}()
	select {
	case <-toPod:
		<-fromPod // after a half-close, all the pod says still goes back
	case <-fromPod:
		// The pod is done: as the CRI runtimes (socat), give the other
		// way a second, then stop reading the client.
		t := time.NewTimer(time.Second)
		select {
		case <-toPod:
		case <-t.C:
			_ = data.Reset()
			pc.Close()
			<-toPod
		}
		t.Stop()
	}
	return nil
}

// writerOnly and readerOnly keep io.CopyBuffer on the given buffer.
type writerOnly struct{ io.Writer }
type readerOnly struct{ io.Reader }

func (h *handler) forget(ss ...*spdystream.Stream) {
	h.mu.Lock()
	defer h.mu.Unlock()
	keep := h.all[:0]
	for _, s := range h.all {
		drop := false
		for _, x := range ss {
			drop = drop || s == x
		}
		if !drop {
			keep = append(keep, s)
		}
	}
	h.all = keep
}

func (h *handler) resetAll() {
	h.mu.Lock()
	all := h.all
	h.all = nil
	h.mu.Unlock()
	for _, s := range all {
		_ = s.Reset()
	}
}
