package remotecommand

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// Conn is the client side of an exec or attach (skiff exec, attach, cp).
type Conn struct {
	ws    *websocket.Conn
	proto string
	wmu   sync.Mutex
}

// StatusError is a failure the server answered, before the upgrade (an
// API Status) or on the error channel.
type StatusError struct{ Status api.Status }

func (e *StatusError) Error() string { return e.Status.Message }

// Dial opens an exec or attach at url (wss://…/pods/p/exec?…), offering
// v5 then v4. A refusal before the upgrade is a *StatusError when the
// server answered a Status.
func Dial(ctx context.Context, d *websocket.Dialer, url string, header http.Header) (*Conn, error) {
	dd := *d
	dd.Subprotocols = []string{ProtocolV5, ProtocolV4}
	ws, resp, err := dd.DialContext(ctx, url, header)
	if err != nil {
		if resp != nil {
			defer resp.Body.Close()
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			var st api.Status
			if json.Unmarshal(b, &st) == nil && st.Message != "" {
				return nil, &StatusError{Status: st}
			}
			return nil, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
		}
		return nil, err
	}
	if p := ws.Subprotocol(); p != ProtocolV5 && p != ProtocolV4 {
		_ = ws.Close()
		return nil, fmt.Errorf("the server chose subprotocol %q", p)
	}
	return &Conn{ws: ws, proto: ws.Subprotocol()}, nil
}

// Protocol is the negotiated subprotocol.
func (c *Conn) Protocol() string { return c.proto }

func (c *Conn) send(ch byte, p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.WriteMessage(websocket.BinaryMessage, append([]byte{ch}, p...))
}

// Resize sends a terminal size.
func (c *Conn) Resize(sz runtime.TerminalSize) error {
	b, _ := json.Marshal(sz)
	return c.send(ChannelResize, b)
}

// Close closes the connection.
func (c *Conn) Close() error { return c.ws.Close() }

// Run copies stdin (nil: none) to the command, its stdout and stderr to
// the writers, until the server ends the stream; EOF on stdin is sent as
// the v5 close of channel 0 (v4 has no way to say it). It returns the
// command's exit code, or an error the server sent (a *StatusError) or
// the connection's. Run closes the connection; a stdin copy still
// blocked reading stdin ends at its next read.
func (c *Conn) Run(stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	defer c.ws.Close()
	if stdin != nil {
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := stdin.Read(buf)
				if n > 0 {
					if c.send(ChannelStdin, buf[:n]) != nil {
						return
					}
				}
				if err != nil {
					if c.proto == ProtocolV5 {
						_ = c.send(ChannelClose, []byte{ChannelStdin})
					}
					return
				}
			}
		}()
	}
	var status []byte
	got := false
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) && !got {
				return -1, fmt.Errorf("the stream ended before the command: %w", err)
			}
			break
		}
		if len(data) == 0 {
			continue
		}
		ch, data := data[0], data[1:]
		var w io.Writer
		switch ch {
		case ChannelStdout:
			w = stdout
		case ChannelStderr:
			w = stderr
		case ChannelError:
			status = append(status, data...)
			got = got || len(data) > 0
			continue
		}
		if w != nil && len(data) > 0 {
			if _, err := w.Write(data); err != nil {
				return -1, err
			}
		}
	}
	if !got {
		return -1, errors.New("the stream ended without the command's status")
	}
	return decodeStatus(status)
}

// decodeStatus reads the error channel as client-go's errorDecoderV4.
func decodeStatus(b []byte) (int, error) {
	var st api.Status
	if err := json.Unmarshal(b, &st); err != nil {
		return -1, fmt.Errorf("error stream protocol error: %v in %q", err, b)
	}
	switch st.Status {
	case "Success":
		return 0, nil
	case "Failure":
		if st.Reason == "NonZeroExitCode" && st.Details != nil {
			for _, c := range st.Details.Causes {
				if c.Type == "ExitCode" {
					n, err := strconv.ParseUint(c.Message, 10, 8)
					if err != nil {
						return -1, fmt.Errorf("error stream protocol error: invalid exit code value %q", c.Message)
					}
					return int(n), nil
				}
			}
		}
		return -1, &StatusError{Status: st}
	}
	return -1, errors.New("error stream protocol error: unknown error")
}

// Write sends p on stdin (Run does it from a reader; this is for callers
// that drive the stream themselves).
func (c *Conn) Write(p []byte) (int, error) {
	if err := c.send(ChannelStdin, p); err != nil {
		return 0, err
	}
	return len(p), nil
}
