package remotecommand

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// The subprotocols and channels (apimachinery's remotecommand constants).
const (
	ProtocolV5 = "v5.channel.k8s.io"
	ProtocolV4 = "v4.channel.k8s.io"

	ChannelStdin  = 0
	ChannelStdout = 1
	ChannelStderr = 2
	ChannelError  = 3
	ChannelResize = 4
	ChannelClose  = 255
)

// Stream is one upgraded exec or attach, over WebSocket (Session) or
// SPDY.
type Stream interface {
	// Protocol is the negotiated protocol.
	Protocol() string
	// Streams are the stream's stdin, stdout, stderr and resizes for a
	// runtime.
	Streams() runtime.Streams
	// Done is closed when the client's side of the connection has ended.
	Done() <-chan struct{}
	// Close ends the stream with st on the error channel, closes the
	// connection and waits for the stream's goroutines.
	Close(st api.Status)
}

// Options are the query of an exec or attach.
type Options struct {
	Command                    []string
	Stdin, Stdout, Stderr, TTY bool
}

// ParseOptions reads the query; exec requires a command.
func ParseOptions(q url.Values, exec bool) (Options, error) {
	o := Options{Command: q["command"]}
	var err error
	b := func(name string) bool {
		v := q.Get(name)
		if v == "" {
			return false
		}
		x, e := strconv.ParseBool(v)
		if e != nil && err == nil {
			err = fmt.Errorf("%s: %q is not a boolean", name, v)
		}
		return x
	}
	o.Stdin, o.Stdout, o.Stderr, o.TTY = b("stdin"), b("stdout"), b("stderr"), b("tty")
	if err != nil {
		return o, err
	}
	if o.TTY {
		o.Stderr = false // the kubelet's rule: a terminal has one output
	}
	if !o.Stdin && !o.Stdout && !o.Stderr {
		return o, errors.New("you must specify at least 1 of stdin, stdout, stderr")
	}
	if exec && len(o.Command) == 0 {
		return o, errors.New("you must specify at least one command for the container")
	}
	return o, nil
}

// Query is the inverse of ParseOptions.
func (o Options) Query() url.Values {
	q := url.Values{}
	for _, c := range o.Command {
		q.Add("command", c)
	}
	for name, v := range map[string]bool{"stdin": o.Stdin, "stdout": o.Stdout, "stderr": o.Stderr, "tty": o.TTY} {
		if v {
			q.Set(name, "true")
		}
	}
	return q
}

// Session is one upgraded exec or attach.
type Session struct {
	ws    *websocket.Conn
	proto string
	opts  Options

	wmu sync.Mutex // one writer at a time

	stdinR *io.PipeReader
	stdinW *io.PipeWriter

	rmu     sync.Mutex
	resize  func(runtime.TerminalSize)
	pending *runtime.TerminalSize

	done      chan struct{} // the reader ended
	closeOnce sync.Once
}

// negotiate picks the subprotocol of r (v5 over v4), "" if none.
func negotiate(r *http.Request) string {
	offered := map[string]bool{}
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(v, ",") {
			offered[strings.TrimSpace(p)] = true
		}
	}
	for _, p := range []string{ProtocolV5, ProtocolV4} {
		if offered[p] {
			return p
		}
	}
	return ""
}

// Upgrade takes the connection of an exec or attach request over
// (WebSocket, or SPDY/3.1). An error for which Answered is false comes
// before anything was written (the caller answers it, 400).
func Upgrade(w http.ResponseWriter, r *http.Request, o Options) (Stream, error) {
	if !websocket.IsWebSocketUpgrade(r) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "SPDY/3.1") {
			return upgradeSPDY(w, r, o)
		}
		return nil, errors.New("unable to upgrade connection: the request is neither a WebSocket nor a SPDY/3.1 upgrade")
	}
	proto := negotiate(r)
	if proto == "" {
		return nil, fmt.Errorf("unable to upgrade connection: requested protocol(s) are not supported: %v; supports [%s %s]",
			r.Header.Values("Sec-WebSocket-Protocol"), ProtocolV5, ProtocolV4)
	}
	up := websocket.Upgrader{
		Subprotocols:     []string{proto},
		HandshakeTimeout: 10 * time.Second,
		ReadBufferSize:   32 << 10,
		WriteBufferSize:  32 << 10,
		// The caller authenticated the request (the node API's client
		// certificate, the server's bearer token); no browser cookie
		// carries authority here.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		// The upgrader has answered the client itself.
		return nil, fmt.Errorf("%w: %v", errAnswered, err)
	}
	s := &Session{ws: ws, proto: proto, opts: o, done: make(chan struct{})}
	if o.Stdin {
		s.stdinR, s.stdinW = io.Pipe()
	}
	first := byte(ChannelError)
	switch {
	case o.Stdout:
		first = ChannelStdout
	case o.Stderr:
		first = ChannelStderr
	}
	if err := s.write(first, nil); err != nil {
		_ = ws.Close()
		return nil, fmt.Errorf("%w: %v", errAnswered, err)
	}
	go s.read()
	return s, nil
}

// errAnswered marks an Upgrade error after which nothing more may be
// written to the client.
var errAnswered = errors.New("remotecommand: upgrade failed")

// Answered reports whether err (from Upgrade) was already answered to the
// client.
func Answered(err error) bool { return errors.Is(err, errAnswered) }

// Protocol is the negotiated subprotocol.
func (s *Session) Protocol() string { return s.proto }

// Done is closed when the client's side of the connection has ended.
func (s *Session) Done() <-chan struct{} { return s.done }

func (s *Session) read() {
	defer close(s.done)
	defer func() {
		if s.stdinW != nil {
			_ = s.stdinW.Close()
		}
	}()
	for {
		_, data, err := s.ws.ReadMessage()
		if err != nil {
			return
		}
		if len(data) == 0 {
			continue
		}
		ch, data := data[0], data[1:]
		switch ch {
		case ChannelStdin:
			if s.stdinW != nil && len(data) > 0 {
				if _, err := s.stdinW.Write(data); err != nil {
					s.stdinW = nil // the command's stdin is gone; drop the rest
				}
			}
		case ChannelResize:
			var sz runtime.TerminalSize
			if json.Unmarshal(data, &sz) == nil {
				s.setSize(sz)
			}
		case ChannelClose:
			if s.proto == ProtocolV5 && len(data) == 1 && data[0] == ChannelStdin && s.stdinW != nil {
				_ = s.stdinW.Close()
				s.stdinW = nil
			}
		}
	}
}

func (s *Session) setSize(sz runtime.TerminalSize) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.resize == nil {
		s.pending = &sz
		return
	}
	s.resize(sz)
}

// OnResize is runtime.Streams.Resize: fn gets every size the client sends
// (the last one sent before, at once), in order, before any stdin sent
// after it reaches the command.
func (s *Session) OnResize(fn func(runtime.TerminalSize)) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.resize = fn
	if s.pending != nil {
		fn(*s.pending)
		s.pending = nil
	}
}

// Streams are the session's streams for a runtime.
func (s *Session) Streams() runtime.Streams {
	st := runtime.Streams{TTY: s.opts.TTY}
	if s.opts.Stdin {
		st.Stdin = s.stdinR
	}
	if s.opts.Stdout {
		st.Stdout = channelWriter{s, ChannelStdout}
	}
	if s.opts.Stderr {
		st.Stderr = channelWriter{s, ChannelStderr}
	}
	if s.opts.TTY {
		st.Resize = s.OnResize
	}
	return st
}

type channelWriter struct {
	s  *Session
	ch byte
}

func (c channelWriter) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += 32 << 10 {
		if err := c.s.write(c.ch, p[off:min(len(p), off+32<<10)]); err != nil {
			return off, err
		}
	}
	return len(p), nil
}

func (s *Session) write(ch byte, p []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	w, err := s.ws.NextWriter(websocket.BinaryMessage)
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte{ch}); err != nil {
		return err
	}
	if _, err := w.Write(p); err != nil {
		return err
	}
	return w.Close()
}

// closeTimeout bounds the final status and close frame.
const closeTimeout = 5 * time.Second

// Close ends the session with st (Success, ExitCode or Failure) on the
// error channel, closes the connection and waits for the reader.
func (s *Session) Close(st api.Status) {
	s.closeOnce.Do(func() {
		b, _ := json.Marshal(st)
		_ = s.ws.SetWriteDeadline(time.Now().Add(closeTimeout))
		_ = s.write(ChannelError, b)
		s.wmu.Lock()
		_ = s.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(closeTimeout))
		s.wmu.Unlock()
		if s.stdinR != nil {
			_ = s.stdinR.Close() // unblocks a reader stuck handing stdin over
		}
		_ = s.ws.Close()
		<-s.done
	})
}

// Success is the status of exit code 0.
func Success() api.Status { return api.Status{Status: "Success"} }

// ExitCode is the status of a command's exit code (Success for 0).
func ExitCode(cmd []string, code int) api.Status {
	if code == 0 {
		return Success()
	}
	return api.Status{
		Status:  "Failure",
		Reason:  "NonZeroExitCode",
		Message: fmt.Sprintf("command terminated with non-zero exit code: error executing command %v, exit code %d", cmd, code),
		Details: &api.StatusDetails{Causes: []api.StatusCause{{Type: "ExitCode", Message: strconv.Itoa(code)}}},
	}
}

// Failure is the status of an error other than an exit code.
func Failure(msg string) api.Status {
	return api.Status{Status: "Failure", Reason: api.StatusReasonInternalError, Code: http.StatusInternalServerError, Message: msg}
}
