package portforward

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
)

// The pure-WebSocket channel protocol (the kubelet's websocket.go): the
// ports come in the query (`?port=80&port=8080` or `port=80,8080`); port i
// has data channel 2i and error channel 2i+1, and the server's first
// message on each is the port as 2 bytes, little-endian. Each message is
// one channel byte and the payload (v4.channel.k8s.io, or no subprotocol),
// or, in text messages, the channel as an ASCII digit and the payload in
// base64 (v4.base64.channel.k8s.io). One WebSocket is one connection per
// port; it ends when every port's connection has ended.
const (
	ProtocolChannelV4       = "v4.channel.k8s.io"
	ProtocolBase64ChannelV4 = "v4.base64.channel.k8s.io"
)

// channelPorts reads the port query as NewV4Options does.
func channelPorts(r *http.Request) ([]uint16, error) {
	vs := r.URL.Query()[HeaderPort]
	if len(vs) == 0 {
		return nil, fmt.Errorf("query parameter %q is required", HeaderPort)
	}
	var ports []uint16
	for _, v := range vs {
		if v == "" {
			return nil, fmt.Errorf("query parameter %q cannot be empty", HeaderPort)
		}
		for _, p := range strings.Split(v, ",") {
			n, err := strconv.ParseUint(p, 10, 16)
			if err != nil {
				return nil, fmt.Errorf("unable to parse %q as a port: %v", v, err)
			}
			if n < 1 {
				return nil, fmt.Errorf("port %q must be > 0", v)
			}
			ports = append(ports, uint16(n))
		}
	}
	return ports, nil
}

// serveChannels runs the channel protocol over an upgraded WebSocket.
func serveChannels(w http.ResponseWriter, r *http.Request, dial DialFunc, o Options) error {
	ports, err := channelPorts(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return err
	}
	u := websocket.Upgrader{
		Subprotocols:    []string{ProtocolChannelV4, ProtocolBase64ChannelV4},
		ReadBufferSize:  bufSize,
		WriteBufferSize: bufSize,
		CheckOrigin:     func(*http.Request) bool { return true },
	}
	ws, err := u.Upgrade(w, r, nil)
	if err != nil {
		return err
	}
	defer ws.Close()
	cw := &channelWriter{ws: ws, b64: ws.Subprotocol() == ProtocolBase64ChannelV4}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Dial first, so that no byte the client sends after the port
	// frames finds its connection missing.
	conns := make([]net.Conn, len(ports))
	errs := make([]error, len(ports))
	for i, p := range ports {
		conns[i], errs[i] = dial(ctx, p)
	}
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i, p := range ports {
		var pb [2]byte
		binary.LittleEndian.PutUint16(pb[:], p)
		if cw.send(byte(2*i), pb[:]) != nil || cw.send(byte(2*i+1), pb[:]) != nil {
			return nil
		}
	}
	// The reader hands the client's bytes to each port's connection.
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		defer cancel()
		for {
			typ, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if typ == websocket.TextMessage {
				if len(msg) == 0 {
					continue
				}
				d, err := base64.StdEncoding.DecodeString(string(msg[1:]))
				if err != nil {
					return
				}
				msg = append([]byte{msg[0] - '0'}, d...)
			}
			if len(msg) < 2 || msg[0]%2 != 0 || int(msg[0]/2) >= len(ports) {
				continue
			}
			if c := conns[msg[0]/2]; c != nil {
				if _, err := c.Write(msg[1:]); err != nil {
					c.Close()
				}
			}
		}
	}()
	var wg sync.WaitGroup
	for i, p := range ports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := conns[i]
			if errs[i] != nil {
				_ = cw.send(byte(2*i+1), fmt.Appendf(nil, "error forwarding port %d to pod %s, uid %v: %v", p, o.Pod, o.UID, errs[i]))
				return
			}
			stop := context.AfterFunc(ctx, func() { c.Close() })
			defer stop()
			buf := make([]byte, bufSize)
			for {
				n, err := c.Read(buf)
				if n > 0 && cw.send(byte(2*i), buf[:n]) != nil {
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), deadlineSoon())
	ws.Close()
	<-readDone
	return nil
}

// channelWriter sends one message per call, serialised.
type channelWriter struct {
	mu  sync.Mutex
	ws  *websocket.Conn
	b64 bool
	buf []byte
}

func (c *channelWriter) send(ch byte, p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.b64 {
		return c.ws.WriteMessage(websocket.TextMessage, append([]byte{'0' + ch}, base64.StdEncoding.EncodeToString(p)...))
	}
	c.buf = append(append(c.buf[:0], ch), p...)
	return c.ws.WriteMessage(websocket.BinaryMessage, c.buf)
}
