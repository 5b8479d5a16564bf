package probe

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// target points at a real listener on 127.0.0.1.
func targetOf(t *testing.T, addr string) (Target, int32) {
	t.Helper()
	ap := netip.MustParseAddrPort(addr)
	return Target{PodIP: ap.Addr(), Ports: []api.ContainerPort{{Name: "http", ContainerPort: int32(ap.Port())}}}, int32(ap.Port())
}

func TestHTTPGet(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(200)
		case "/redirect":
			http.Redirect(w, r, "http://192.0.2.1/elsewhere", http.StatusFound)
		case "/missing":
			http.Error(w, "nope", 404)
		case "/boom":
			http.Error(w, "broken", 500)
		case "/header":
			if r.Header.Get("X-Probe") == "yes" && r.Host == "probe.example" && r.UserAgent() == UserAgent {
				w.WriteHeader(200)
				return
			}
			w.WriteHeader(400)
		case "/slow":
			time.Sleep(1500 * time.Millisecond)
		}
	}))
	defer srv.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer tlsSrv.Close()

	tg, port := targetOf(t, srv.Listener.Addr().String())
	tlsTarget, tlsPort := targetOf(t, tlsSrv.Listener.Addr().String())
	closed := freePort(t)

	cases := []struct {
		name   string
		action api.HTTPGetAction
		target Target
		want   Result
		msg    string
	}{
		{"200", api.HTTPGetAction{Path: "/ok", Port: api.FromInt32(port)}, tg, Success, ""},
		{"named port", api.HTTPGetAction{Path: "/ok", Port: api.FromString("http")}, tg, Success, ""},
		{"path without slash", api.HTTPGetAction{Path: "ok", Port: api.FromInt32(port)}, tg, Success, ""},
		{"redirect is not followed and counts as success", api.HTTPGetAction{Path: "/redirect", Port: api.FromInt32(port)}, tg, Success, ""},
		{"404", api.HTTPGetAction{Path: "/missing", Port: api.FromInt32(port)}, tg, Failure, "statuscode: 404"},
		{"500 with body", api.HTTPGetAction{Path: "/boom", Port: api.FromInt32(port)}, tg, Failure, "500 broken"},
		{"headers and Host", api.HTTPGetAction{Path: "/header", Port: api.FromInt32(port),
			HTTPHeaders: []api.HTTPHeader{{Name: "X-Probe", Value: "yes"}, {Name: "Host", Value: "probe.example"}}}, tg, Success, ""},
		{"missing header", api.HTTPGetAction{Path: "/header", Port: api.FromInt32(port)}, tg, Failure, "400"},
		{"explicit host", api.HTTPGetAction{Path: "/ok", Host: "127.0.0.1", Port: api.FromInt32(port)}, Target{}, Success, ""},
		{"timeout", api.HTTPGetAction{Path: "/slow", Port: api.FromInt32(port)}, tg, Failure, ""},
		{"connection refused", api.HTTPGetAction{Path: "/", Port: api.FromInt32(closed)}, tg, Failure, "refused"},
		{"unknown port name", api.HTTPGetAction{Path: "/", Port: api.FromString("grpc")}, tg, Failure, `no container port named "grpc"`},
		{"no pod IP", api.HTTPGetAction{Path: "/", Port: api.FromInt32(port)}, Target{}, Failure, "no IP"},
		{"https without verification", api.HTTPGetAction{Path: "/", Port: api.FromInt32(tlsPort), Scheme: "HTTPS"}, tlsTarget, Success, ""},
	}
	p := &Prober{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.action
			got, msg := p.Probe(context.Background(), &api.Probe{ProbeHandler: api.ProbeHandler{HTTPGet: &a}, TimeoutSeconds: 1}, tc.target)
			if got != tc.want {
				t.Fatalf("result %v (%s), want %v", got, msg, tc.want)
			}
			if !strings.Contains(msg, tc.msg) {
				t.Fatalf("message %q lacks %q", msg, tc.msg)
			}
		})
	}
	if hits.Load() == 0 {
		t.Fatal("the server saw no request")
	}
}

func freePort(t *testing.T) int32 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return int32(p)
}

func TestTCPSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	tg, port := targetOf(t, ln.Addr().String())
	closed := freePort(t)
	var dialed atomic.Int64
	cases := []struct {
		name   string
		action api.TCPSocketAction
		prober *Prober
		want   Result
	}{
		{"open", api.TCPSocketAction{Port: api.FromInt32(port)}, &Prober{}, Success},
		{"named", api.TCPSocketAction{Port: api.FromString("http")}, &Prober{}, Success},
		{"closed", api.TCPSocketAction{Port: api.FromInt32(closed)}, &Prober{}, Failure},
		{"through the injected dialer", api.TCPSocketAction{Port: api.FromInt32(port)}, &Prober{Dial: func(ctx context.Context, n, a string) (net.Conn, error) {
			dialed.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, n, a)
		}}, Success},
		{"dialer failure", api.TCPSocketAction{Port: api.FromInt32(port)}, &Prober{Dial: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("no such netns")
		}}, Failure},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.action
			got, msg := tc.prober.Probe(context.Background(), &api.Probe{ProbeHandler: api.ProbeHandler{TCPSocket: &a}}, tg)
			if got != tc.want {
				t.Fatalf("result %v (%s), want %v", got, msg, tc.want)
			}
		})
	}
	if dialed.Load() != 1 {
		t.Fatalf("injected dialer used %d times, want 1", dialed.Load())
	}
}

// fakeExec answers exec checks by command.
type fakeExec struct {
	calls atomic.Int64
}

func (f *fakeExec) Exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (int, []byte, error) {
	f.calls.Add(1)
	if id != "ctr-1" {
		return 0, nil, errors.New("no such container " + id)
	}
	switch cmd[0] {
	case "true":
		return 0, []byte("fine\n"), nil
	case "exit":
		n, _ := strconv.Atoi(cmd[1])
		return n, []byte("bad"), nil
	case "sleep":
		<-ctx.Done()
		return -1, nil, ctx.Err()
	}
	return 127, nil, nil
}

func TestExec(t *testing.T) {
	fe := &fakeExec{}
	cases := []struct {
		name string
		cmd  []string
		id   string
		want Result
		msg  string
	}{
		{"exit 0", []string{"true"}, "ctr-1", Success, "fine"},
		{"exit 3", []string{"exit", "3"}, "ctr-1", Failure, "exited with 3"},
		{"timeout", []string{"sleep"}, "ctr-1", Failure, "timed out"},
		{"runtime error", []string{"true"}, "ctr-9", Failure, "no such container"},
		{"empty command", nil, "ctr-1", Failure, "no command"},
	}
	p := &Prober{Exec: fe}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := p.Probe(context.Background(), &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: tc.cmd}}, TimeoutSeconds: 1},
				Target{ContainerID: tc.id})
			if got != tc.want || !strings.Contains(msg, tc.msg) {
				t.Fatalf("got %v %q, want %v containing %q", got, msg, tc.want, tc.msg)
			}
		})
	}
	if r, msg := (&Prober{}).Probe(context.Background(), &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"true"}}}}, Target{}); r != Failure {
		t.Fatalf("exec without a runtime: %v %s", r, msg)
	}
	if r, msg := p.Probe(context.Background(), &api.Probe{ProbeHandler: api.ProbeHandler{GRPC: &api.GRPCAction{Port: 9}}}, Target{}); r != Failure || !strings.Contains(msg, "not supported") {
		t.Fatalf("grpc: %v %s", r, msg)
	}
}

func TestSettingsDefaults(t *testing.T) {
	cases := []struct {
		name string
		in   api.Probe
		want Settings
	}{
		{"zero", api.Probe{}, Settings{0, 10 * time.Second, time.Second, 1, 3}},
		{"all set", api.Probe{InitialDelaySeconds: 5, PeriodSeconds: 2, TimeoutSeconds: 3, SuccessThreshold: 2, FailureThreshold: 7},
			Settings{5 * time.Second, 2 * time.Second, 3 * time.Second, 2, 7}},
		{"negative delay", api.Probe{InitialDelaySeconds: -4}, Settings{0, 10 * time.Second, time.Second, 1, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := SettingsOf(&tc.in); got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
