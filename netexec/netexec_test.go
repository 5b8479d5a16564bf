package netexec

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// serving is a Server running on 127.0.0.1 listeners.
type serving struct {
	srv      *Server
	httpAddr string
	udpAddr  string
	done     chan error // Serve's result
	cancel   context.CancelFunc
}

func startServer(t *testing.T, cfg Config) *serving {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{srv: NewServer(cfg), httpAddr: ln.Addr().String(), udpAddr: pc.LocalAddr().String(), done: make(chan error, 1), cancel: cancel}
	go func() { s.done <- s.srv.Serve(ctx, ln, pc) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after cancel")
		}
	})
	return s
}

func get(t *testing.T, rawURL string) (int, string) {
	t.Helper()
	resp, err := http.Get(rawURL)
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestHTTPHandlers(t *testing.T) {
	s := startServer(t, Config{PodName: "pod-a"})
	base := "http://" + s.httpAddr
	tests := []struct {
		name       string
		path       string
		wantCode   int
		wantBody   string
		wantPrefix string
	}{
		{name: "hostname", path: "/hostname", wantCode: 200, wantBody: "pod-a"},
		{name: "hostName alias", path: "/hostName", wantCode: 200, wantBody: "pod-a"},
		{name: "echo", path: "/echo?msg=" + url.QueryEscape("hello world"), wantCode: 200, wantBody: "hello world"},
		{name: "echo with code", path: "/echo?msg=gone&code=503", wantCode: 503, wantBody: "gone"},
		{name: "echo bad code", path: "/echo?msg=x&code=abc", wantCode: 400, wantPrefix: "argument 'code'"},
		{name: "echo empty", path: "/echo", wantCode: 200, wantBody: ""},
		{name: "root", path: "/", wantCode: 200, wantPrefix: "NOW: "},
		{name: "unknown path", path: "/nope", wantCode: 404},
		{name: "healthz starts 200", path: "/healthz", wantCode: 200, wantBody: "OK"},
		{name: "exit bad code", path: "/exit?code=300", wantCode: 400},
		{name: "sethealth bad", path: "/sethealth?status=abc", wantCode: 400},
		{name: "sethealth out of range", path: "/sethealth?status=99", wantCode: 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, base+tc.path)
			if code != tc.wantCode {
				t.Errorf("status = %d, want %d (body %q)", code, tc.wantCode, body)
			}
			if tc.wantPrefix != "" && !strings.HasPrefix(body, tc.wantPrefix) {
				t.Errorf("body = %q, want prefix %q", body, tc.wantPrefix)
			}
			if tc.wantPrefix == "" && tc.wantCode == 200 && body != tc.wantBody {
				t.Errorf("body = %q, want %q", body, tc.wantBody)
			}
		})
	}
}

func TestClientIP(t *testing.T) {
	s := startServer(t, Config{PodName: "pod-a"})
	conn, err := net.Dial("tcp", s.httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /clientip HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	want := conn.LocalAddr().String()
	if !strings.HasSuffix(string(b), "\r\n\r\n"+want) {
		t.Fatalf("response %q does not end with the caller's address %q", b, want)
	}
}

func TestHealthzFollowsSetHealth(t *testing.T) {
	s := startServer(t, Config{PodName: "pod-a"})
	base := "http://" + s.httpAddr
	steps := []struct {
		name string
		set  int // 0: only read
		want int
	}{
		{name: "initially ok", want: 200},
		{name: "set 503", set: 503, want: 503},
		{name: "set 500", set: 500, want: 500},
		{name: "back to 200", set: 200, want: 200},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.set != 0 {
				if code, body := get(t, base+"/sethealth?status="+strconv.Itoa(st.set)); code != 200 {
					t.Fatalf("sethealth: %d %q", code, body)
				}
			}
			if code, _ := get(t, base+"/healthz"); code != st.want {
				t.Fatalf("/healthz = %d, want %d", code, st.want)
			}
		})
	}
}

func TestExitReturnsExitErrorAfterAnswering(t *testing.T) {
	s := startServer(t, Config{PodName: "pod-a"})
	code, body := get(t, "http://"+s.httpAddr+"/exit?code=7")
	if code != 200 || body != "exiting with code 7" {
		t.Fatalf("/exit answered %d %q", code, body)
	}
	select {
	case err := <-s.done:
		var ee *ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 7 {
			t.Fatalf("Serve returned %v, want *ExitError{7}", err)
		}
		s.done <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after /exit")
	}
	if _, err := net.DialTimeout("tcp", s.httpAddr, time.Second); err == nil {
		t.Fatal("HTTP listener still accepts after /exit")
	}
}

func TestServeReturnsNilOnCancel(t *testing.T) {
	s := startServer(t, Config{PodName: "pod-a"})
	s.cancel()
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("Serve after cancel = %v, want nil", err)
		}
		s.done <- err
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
}

func TestRun(t *testing.T) {
	// Find a free port pair, then let Run bind them.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{HTTPPort: port, UDPPort: -1, Address: "127.0.0.1", PodName: "run-pod"})
	}()
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get(base + "/hostname")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Run never served: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if body != "run-pod" {
		t.Errorf("/hostname = %q", body)
	}
	// A second Run on the same port fails to listen.
	if err := Run(context.Background(), Config{HTTPPort: port, UDPPort: -1, Address: "127.0.0.1"}); err == nil || !strings.Contains(err.Error(), "netexec: http listen") {
		t.Errorf("Run on a busy port = %v, want a listen error", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}

func udpExchange(t *testing.T, addr, msg string, timeout time.Duration) (string, error) {
	t.Helper()
	conn, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, 2048)
	n, err := conn.Read(buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

func TestUDP(t *testing.T) {
	s := startServer(t, Config{PodName: "pod-a"})
	tests := []struct {
		name  string
		msg   string
		want  string
		local bool // want the sender's address
	}{
		{name: "hostname", msg: "hostname", want: "pod-a"},
		{name: "hostname any case and newline", msg: "HostName\n", want: "pod-a"},
		{name: "echo keeps case", msg: "echo Hello World", want: "Hello World"},
		{name: "clientip", msg: "clientip", local: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("udp", s.udpAddr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte(tc.msg)); err != nil {
				t.Fatal(err)
			}
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 2048)
			n, err := conn.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if tc.local {
				want = conn.LocalAddr().String()
			}
			if got := string(buf[:n]); got != want {
				t.Fatalf("reply %q, want %q", got, want)
			}
		})
	}
	t.Run("unknown command gets no answer", func(t *testing.T) {
		if got, err := udpExchange(t, s.udpAddr, "frobnicate", 300*time.Millisecond); err == nil {
			t.Fatalf("unknown command answered %q", got)
		}
		if got, err := udpExchange(t, s.udpAddr, "hostname", 5*time.Second); err != nil || got != "pod-a" {
			t.Fatalf("server unusable after an unknown command: %q, %v", got, err)
		}
	})
}

// startDNS serves name -> 127.0.0.1 on a loopback UDP port and returns a
// resolver that asks only it.
func startDNS(t *testing.T, name string) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		if len(q.Question) == 1 && strings.EqualFold(q.Question[0].Name, dns.Fqdn(name)) {
			if q.Question[0].Qtype == dns.TypeA {
				rr, _ := dns.NewRR(dns.Fqdn(name) + " 5 IN A 127.0.0.1")
				m.Answer = append(m.Answer, rr)
			}
		} else {
			m.Rcode = dns.RcodeNameError
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

func TestDial(t *testing.T) {
	resolver := startDNS(t, "target.skiff.test")
	target := startServer(t, Config{PodName: "pod-b"})
	client := startServer(t, Config{PodName: "pod-a", Resolver: resolver, DialTimeout: 2 * time.Second})
	_, targetHTTPPort, _ := net.SplitHostPort(target.httpAddr)
	_, targetUDPPort, _ := net.SplitHostPort(target.udpAddr)

	// A port with nothing behind it: listen, note, close.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closedPort, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()

	tests := []struct {
		name          string
		query         url.Values
		wantCode      int
		wantResponses []string
		wantErrors    int
	}{
		{name: "http by IP, three tries", query: url.Values{"host": {"127.0.0.1"}, "port": {targetHTTPPort}, "request": {"hostname"}, "tries": {"3"}},
			wantCode: 200, wantResponses: []string{"pod-b", "pod-b", "pod-b"}},
		{name: "http by name through the resolver", query: url.Values{"host": {"target.skiff.test"}, "port": {targetHTTPPort}, "request": {"hostname"}, "protocol": {"http"}},
			wantCode: 200, wantResponses: []string{"pod-b"}},
		{name: "http request with a query", query: url.Values{"host": {"127.0.0.1"}, "port": {targetHTTPPort}, "request": {"echo?msg=hi"}},
			wantCode: 200, wantResponses: []string{"hi"}},
		{name: "udp hostname", query: url.Values{"host": {"target.skiff.test"}, "port": {targetUDPPort}, "request": {"hostname"}, "protocol": {"udp"}, "tries": {"2"}},
			wantCode: 200, wantResponses: []string{"pod-b", "pod-b"}},
		{name: "udp echo", query: url.Values{"host": {"127.0.0.1"}, "port": {targetUDPPort}, "request": {"echo Dial Me"}, "protocol": {"UDP"}},
			wantCode: 200, wantResponses: []string{"Dial Me"}},
		{name: "http to a closed port reports every try", query: url.Values{"host": {"127.0.0.1"}, "port": {closedPort}, "request": {"hostname"}, "tries": {"2"}},
			wantCode: 200, wantErrors: 2},
		{name: "zero tries", query: url.Values{"host": {"127.0.0.1"}, "port": {targetHTTPPort}, "request": {"hostname"}, "tries": {"0"}},
			wantCode: 200},
		{name: "unknown name", query: url.Values{"host": {"nope.skiff.test"}, "port": {targetHTTPPort}, "request": {"hostname"}}, wantCode: 400},
		{name: "no request", query: url.Values{"host": {"127.0.0.1"}, "port": {targetHTTPPort}}, wantCode: 400},
		{name: "bad tries", query: url.Values{"host": {"127.0.0.1"}, "port": {targetHTTPPort}, "request": {"hostname"}, "tries": {"many"}}, wantCode: 400},
		{name: "bad port", query: url.Values{"host": {"127.0.0.1"}, "port": {"http"}, "request": {"hostname"}}, wantCode: 400},
		{name: "bad protocol", query: url.Values{"host": {"127.0.0.1"}, "port": {targetHTTPPort}, "request": {"hostname"}, "protocol": {"sctp"}}, wantCode: 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, "http://"+client.httpAddr+"/dial?"+tc.query.Encode())
			if code != tc.wantCode {
				t.Fatalf("status %d, want %d (body %q)", code, tc.wantCode, body)
			}
			if code != 200 {
				return
			}
			var res DialResult
			if err := json.Unmarshal([]byte(body), &res); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			if strings.Join(res.Responses, "|") != strings.Join(tc.wantResponses, "|") {
				t.Errorf("responses %q, want %q", res.Responses, tc.wantResponses)
			}
			if len(res.Errors) != tc.wantErrors {
				t.Errorf("errors %q, want %d of them", res.Errors, tc.wantErrors)
			}
			// agnhost leaves out an empty list.
			if len(res.Responses) == 0 && strings.Contains(body, `"responses"`) || len(res.Errors) == 0 && strings.Contains(body, `"errors"`) {
				t.Errorf("body %q carries an empty list", body)
			}
		})
	}
}

func TestPodName(t *testing.T) {
	t.Setenv("POD_NAME", "from-env")
	if got := PodName(); got != "from-env" {
		t.Fatalf("PodName() = %q with $POD_NAME set", got)
	}
	t.Setenv("POD_NAME", "")
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	if got := PodName(); got != h {
		t.Fatalf("PodName() = %q without $POD_NAME, want the host name %q", got, h)
	}
}
