package web_test

import (
	"bufio"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// A small RFC 6455 peer for the tests (the module has no WebSocket
// library, and the test must see the frames): a server that speaks
// Kubernetes' v5.channel.k8s.io exec protocol, and a client.

const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

const (
	opBinary = 2
	opClose  = 8
	opPing   = 9
	opPong   = 10
)

func wsAcceptKey(key string) string {
	h := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

// wsConn is one side of a WebSocket: a client masks what it writes.
type wsConn struct {
	c      net.Conn
	r      *bufio.Reader
	client bool
	mu     sync.Mutex
}

func (w *wsConn) write(op byte, p []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	hdr := []byte{0x80 | op}
	maskBit := byte(0)
	if w.client {
		maskBit = 0x80
	}
	switch n := len(p); {
	case n < 126:
		hdr = append(hdr, maskBit|byte(n))
	case n < 1<<16:
		hdr = append(hdr, maskBit|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, maskBit|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	body := p
	if w.client {
		var key [4]byte
		_, _ = rand.Read(key[:])
		hdr = append(hdr, key[:]...)
		body = make([]byte, len(p))
		for i := range p {
			body[i] = p[i] ^ key[i%4]
		}
	}
	_, err := w.c.Write(append(hdr, body...))
	return err
}

// read returns the next data or close frame (answering pings).
func (w *wsConn) read() (byte, []byte, error) {
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.r, h[:]); err != nil {
			return 0, nil, err
		}
		if h[0]&0x80 == 0 {
			return 0, nil, errors.New("ws: fragmented frames are not used here")
		}
		op := h[0] & 0x0f
		masked := h[1]&0x80 != 0
		if masked == w.client {
			return 0, nil, fmt.Errorf("ws: mask bit %v on a frame to the %s", masked, map[bool]string{true: "client", false: "server"}[w.client])
		}
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(w.r, b[:]); err != nil {
				return 0, nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(w.r, b[:]); err != nil {
				return 0, nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		var key [4]byte
		if masked {
			if _, err := io.ReadFull(w.r, key[:]); err != nil {
				return 0, nil, err
			}
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(w.r, p); err != nil {
			return 0, nil, err
		}
		if masked {
			for i := range p {
				p[i] ^= key[i%4]
			}
		}
		switch op {
		case opPing:
			if err := w.write(opPong, p); err != nil {
				return 0, nil, err
			}
			continue
		case opPong:
			continue
		}
		return op, p, nil
	}
}

// wsAccept upgrades r to a WebSocket of subprotocol proto, or answers an
// error and returns nil.
func wsAccept(w http.ResponseWriter, r *http.Request, proto string) *wsConn {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || r.Header.Get("Sec-WebSocket-Key") == "" {
		http.Error(w, "not a websocket", http.StatusBadRequest)
		return nil
	}
	offered := false
	for _, p := range strings.Split(r.Header.Get("Sec-WebSocket-Protocol"), ",") {
		offered = offered || strings.TrimSpace(p) == proto
	}
	if !offered {
		http.Error(w, "subprotocol "+proto+" not offered", http.StatusBadRequest)
		return nil
	}
	c, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return nil
	}
	fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: %s\r\n\r\n", wsAcceptKey(r.Header.Get("Sec-WebSocket-Key")), proto)
	if err := rw.Flush(); err != nil {
		c.Close()
		return nil
	}
	return &wsConn{c: c, r: rw.Reader}
}

// wsDial opens a client WebSocket to https URL u (TLS with cfg) with
// headers; it returns the HTTP status and body of a refused handshake.
func wsDial(u string, cfg *tls.Config, hdr http.Header) (*wsConn, int, string, error) {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, "", err
	}
	c, err := tls.Dial("tcp", req.URL.Host, cfg)
	if err != nil {
		return nil, 0, "", err
	}
	var k [16]byte
	_, _ = rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	req.Header = hdr.Clone()
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", key)
	if err := req.Write(c); err != nil {
		c.Close()
		return nil, 0, "", err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		c.Close()
		return nil, 0, "", err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		c.Close()
		return nil, resp.StatusCode, string(b), nil
	}
	if resp.Header.Get("Sec-WebSocket-Accept") != wsAcceptKey(key) {
		c.Close()
		return nil, resp.StatusCode, "", errors.New("ws: wrong Sec-WebSocket-Accept")
	}
	return &wsConn{c: c, r: br, client: true}, resp.StatusCode, resp.Header.Get("Sec-WebSocket-Protocol"), nil
}

// execRequest is what the test exec server saw of one request.
type execRequest struct {
	Path, Query, Auth, Cookie, Origin, Protocol string
}

// testExecServer plays the API's pods/exec for one pod: it checks the
// bearer token (want; and refuses the command "refuse" with 403, as the
// API refuses a handshake before any upgrade), upgrades to v5.channel.k8s.io, and runs a tiny
// "shell": it echoes stdin to stdout as a terminal would (a carriage
// return becomes \r\n), answers a line "size" with the last resize it
// got, writes "oops" to stderr for a line "err", and for a line "exit N"
// sends the error channel's Status (Success for 0, else NonZeroExitCode
// with the code) and closes.
func testExecServer(t testing.TB, want string, seen chan<- execRequest) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req := execRequest{Path: r.URL.Path, Query: r.URL.RawQuery, Auth: r.Header.Get("Authorization"), Cookie: r.Header.Get("Cookie"), Origin: r.Header.Get("Origin"), Protocol: r.Header.Get("Sec-WebSocket-Protocol")}
		select {
		case seen <- req:
		default:
		}
		if req.Auth != "Bearer "+want || r.URL.Query().Get("command") == "refuse" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"p\" is forbidden: cannot create resource \"pods/exec\"","reason":"Forbidden","code":403}`)
			return
		}
		ws := wsAccept(w, r, "v5.channel.k8s.io")
		if ws == nil {
			return
		}
		defer ws.c.Close()
		out := func(ch byte, s string) { _ = ws.write(opBinary, append([]byte{ch}, s...)) }
		out(1, "$ ")
		size := "none"
		var line []byte
		for {
			op, p, err := ws.read()
			if err != nil || op == opClose || len(p) == 0 {
				return
			}
			switch p[0] {
			case 4:
				var s struct{ Width, Height int }
				if err := json.Unmarshal(p[1:], &s); err != nil {
					out(2, "bad resize: "+err.Error()+"\r\n")
					continue
				}
				size = fmt.Sprintf("%dx%d", s.Width, s.Height)
			case 0:
				for _, c := range p[1:] {
					switch c {
					case '\r':
						out(1, "\r\n")
						cmd := string(line)
						line = line[:0]
						switch {
						case cmd == "size":
							out(1, "size "+size+"\r\n")
						case cmd == "err":
							out(2, "oops\r\n")
						case strings.HasPrefix(cmd, "exit"):
							code := strings.TrimSpace(strings.TrimPrefix(cmd, "exit"))
							if code == "" || code == "0" {
								out(3, `{"metadata":{},"status":"Success"}`)
							} else {
								out(3, `{"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: exit status `+code+`","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"`+code+`"}]}}`)
							}
							_ = ws.write(opClose, []byte{0x03, 0xe8})
							return
						default:
							out(1, "you said "+cmd+"\r\n")
						}
						out(1, "$ ")
					case 0x7f:
						if len(line) > 0 {
							line = line[:len(line)-1]
							out(1, "\b \b")
						}
					default:
						line = append(line, c)
						out(1, string([]byte{c}))
					}
				}
			}
		}
	}
}
