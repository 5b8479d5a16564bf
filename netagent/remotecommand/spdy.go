package remotecommand

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/moby/spdystream"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// streamCreationTimeout bounds how long the client has to open its
// streams after a SPDY upgrade (the kubelet's
// DefaultStreamCreationTimeout).
const streamCreationTimeout = 30 * time.Second

// spdySession is an exec or attach over SPDY/3.1 with the v4 protocol,
// as the kubelet serves it (cri/streaming/remotecommand/httpstream.go):
// the server answers 101 with X-Stream-Protocol-Version:
// v4.channel.k8s.io, then the client opens one SPDY stream per channel,
// named by its streamType header (error, stdin, stdout, stderr, resize);
// the error stream gets the final Status; resize carries a sequence of
// JSON sizes; stdin's end is the stream's half-close.
type spdySession struct {
	conn    *spdystream.Connection
	opts    Options
	streams map[string]*spdystream.Stream

	rmu     sync.Mutex
	resize  func(runtime.TerminalSize)
	pending *runtime.TerminalSize

	resizeDone chan struct{}
	closeOnce  sync.Once
}

func upgradeSPDY(w http.ResponseWriter, r *http.Request, o Options) (Stream, error) {
	ok := false
	for _, v := range r.Header.Values("X-Stream-Protocol-Version") {
		for _, p := range strings.Split(v, ",") {
			ok = ok || strings.TrimSpace(p) == ProtocolV4
		}
	}
	if !ok {
		return nil, fmt.Errorf("unable to upgrade connection: SPDY is served with %s only, the client offers %v (X-Stream-Protocol-Version)",
			ProtocolV4, r.Header.Values("X-Stream-Protocol-Version"))
	}
	w.Header().Set("X-Stream-Protocol-Version", ProtocolV4)
	w.Header().Set("Connection", "Upgrade")
	w.Header().Set("Upgrade", "SPDY/3.1")
	w.WriteHeader(http.StatusSwitchingProtocols)
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errAnswered, err)
	}
	if brw.Reader.Buffered() > 0 {
		nc = &bufferedConn{Conn: nc, r: brw.Reader}
	}
	conn, err := spdystream.NewConnection(nc, true)
	if err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("%w: %v", errAnswered, err)
	}
	got := make(chan *spdystream.Stream, 8)
	go conn.Serve(func(st *spdystream.Stream) {
		_ = st.SendReply(http.Header{}, false)
		select {
		case got <- st:
		default: // more streams than a client opens: ignored
		}
	})
	want := map[string]bool{"error": true}
	if o.Stdin {
		want["stdin"] = true
	}
	if o.Stdout {
		want["stdout"] = true
	}
	if o.Stderr {
		want["stderr"] = true
	}
	if o.TTY {
		want["resize"] = true
	}
	s := &spdySession{conn: conn, opts: o, streams: map[string]*spdystream.Stream{}, resizeDone: make(chan struct{})}
	timer := time.NewTimer(streamCreationTimeout)
	defer timer.Stop()
	for len(s.streams) < len(want) {
		select {
		case st := <-got:
			typ := st.Headers().Get("streamType")
			if want[typ] {
				s.streams[typ] = st
			}
		case <-timer.C:
			_ = conn.Close()
			return nil, fmt.Errorf("%w: the client opened %d of %d streams in %v", errAnswered, len(s.streams), len(want), streamCreationTimeout)
		case <-conn.CloseChan():
			return nil, fmt.Errorf("%w: the client went away before opening its streams", errAnswered)
		}
	}
	if rs := s.streams["resize"]; rs != nil {
		go func() {
			defer close(s.resizeDone)
			dec := json.NewDecoder(rs)
			for {
				var sz runtime.TerminalSize
				if dec.Decode(&sz) != nil {
					return
				}
				s.setSize(sz)
			}
		}()
	} else {
		close(s.resizeDone)
	}
	return s, nil
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func (s *spdySession) setSize(sz runtime.TerminalSize) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.resize == nil {
		s.pending = &sz
		return
	}
	s.resize(sz)
}

func (s *spdySession) onResize(fn func(runtime.TerminalSize)) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.resize = fn
	if s.pending != nil {
		fn(*s.pending)
		s.pending = nil
	}
}

func (s *spdySession) Protocol() string { return "SPDY/3.1+" + ProtocolV4 }

func (s *spdySession) Done() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		<-s.conn.CloseChan()
		close(ch)
	}()
	return ch
}

func (s *spdySession) Streams() runtime.Streams {
	st := runtime.Streams{TTY: s.opts.TTY}
	if x := s.streams["stdin"]; x != nil {
		st.Stdin = x
	}
	if x := s.streams["stdout"]; x != nil {
		st.Stdout = x
	}
	if x := s.streams["stderr"]; x != nil {
		st.Stderr = x
	}
	if s.opts.TTY {
		st.Resize = s.onResize
	}
	return st
}

func (s *spdySession) Close(status api.Status) {
	s.closeOnce.Do(func() {
		b, _ := json.Marshal(status)
		if es := s.streams["error"]; es != nil {
			_, _ = es.Write(b)
		}
		for _, st := range s.streams {
			_ = st.Close()
		}
		_ = s.conn.Close()
		select {
		case <-s.conn.CloseChan():
		case <-time.After(closeTimeout):
		}
		for _, st := range s.streams {
			_ = st.Reset() // unblocks a reader of stdin or resize
		}
		<-s.resizeDone
	})
}
