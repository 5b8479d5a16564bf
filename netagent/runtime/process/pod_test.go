package process

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netexec"
)

// startClientSide serves, inside the client netns, a DNS server on
// clientIP:53 (client.skiff.test -> clientIP, everything else NXDOMAIN)
// and a netexec named "client" on clientIP:9090 (HTTP) and :9091 (UDP).
func startClientSide(t *testing.T, clientNS string) {
	t.Helper()
	var dnsConn, udpConn net.PacketConn
	var ln net.Listener
	err := inNetNS(clientNS, func() error {
		var err error
		if dnsConn, err = net.ListenPacket("udp", clientIP+":53"); err != nil {
			return err
		}
		if ln, err = net.Listen("tcp", clientIP+":9090"); err != nil {
			return err
		}
		udpConn, err = net.ListenPacket("udp", clientIP+":9091")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: dnsConn, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		if len(q.Question) == 1 && strings.EqualFold(q.Question[0].Name, "client.skiff.test.") {
			if q.Question[0].Qtype == dns.TypeA {
				rr, _ := dns.NewRR("client.skiff.test. 5 IN A " + clientIP)
				m.Answer = append(m.Answer, rr)
			}
		} else {
			m.Rcode = dns.RcodeNameError
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- netexec.NewServer(netexec.Config{PodName: "client"}).Serve(ctx, ln, udpConn) }()
	t.Cleanup(func() { cancel(); <-done })
}

func httpGet(t *testing.T, clientNS, rawURL string) (int, string) {
	t.Helper()
	resp, err := clientIn(clientNS).Get(rawURL)
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

func udpFrom(t *testing.T, ns, addr, msg string) string {
	t.Helper()
	var conn net.Conn
	if err := inNetNS(ns, func() error {
		var err error
		conn, err = net.Dial("udp", addr)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 2048)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("UDP %q to %s: %v", msg, addr, err)
	}
	return string(buf[:n])
}

// TestNetexecPod runs `netexec` (this test binary) as a container in a pod
// netns and talks to it from a client netns over a veth pair.
func TestNetexecPod(t *testing.T) {
	requireRoot(t)
	podNS, clientNS := newPodAndClient(t)
	startClientSide(t, clientNS)
	const podResolv = "nameserver " + clientIP + "\nsearch skiff.test\noptions ndots:5\n"
	const podHosts = "127.0.0.1 localhost\n" + podIP + " netexec-alias\n"
	sb := newSandbox(t, "netexec-pod", podNS, podResolv, podHosts)
	hostResolv := readFile(t, "/etc/resolv.conf")
	hostHosts := readFile(t, "/etc/hosts")
	if hostResolv == podResolv || hostHosts == podHosts {
		t.Fatal("the pod's files must differ from the host's for this test to mean anything")
	}

	rt := newRuntime(t, t.TempDir())
	ctx := context.Background()
	st := start(t, rt, sb, runtime.ContainerSpec{
		Name:    "netexec",
		Image:   "ignored/by-the-process-runtime:latest",
		Command: []string{testBinary(t), "netexec"},
		Args:    []string{"--http-port=8080", "--udp-port=8081"},
	})
	if st.State != runtime.StateRunning || st.Pid <= 0 || st.PodUID != sb.PodUID || st.Name != "netexec" {
		t.Fatalf("Start status %+v", st)
	}
	base := "http://" + podIP + ":8080"
	eventually(t, 20*time.Second, "netexec to serve", func() bool {
		resp, err := clientIn(clientNS).Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})

	t.Run("process is in the pod netns", func(t *testing.T) {
		got, err := readlinkNS(st.Pid)
		if err != nil {
			t.Fatal(err)
		}
		if want := netnsID(t, sb.NetNSPath); got != want {
			t.Fatalf("process netns %s, want %s", got, want)
		}
	})
	t.Run("hostname is the pod name", func(t *testing.T) {
		if _, body := httpGet(t, clientNS, base+"/hostname"); body != sb.Name {
			t.Fatalf("/hostname = %q, want %q", body, sb.Name)
		}
	})
	t.Run("clientip is the client across the veth", func(t *testing.T) {
		if _, body := httpGet(t, clientNS, base+"/clientip"); !strings.HasPrefix(body, clientIP+":") {
			t.Fatalf("/clientip = %q, want %s:<port>", body, clientIP)
		}
	})
	t.Run("udp", func(t *testing.T) {
		if got := udpFrom(t, clientNS, podIP+":8081", "hostname"); got != sb.Name {
			t.Errorf("UDP hostname = %q", got)
		}
		if got := udpFrom(t, clientNS, podIP+":8081", "echo Across The Veth"); got != "Across The Veth" {
			t.Errorf("UDP echo = %q", got)
		}
	})
	t.Run("dial", func(t *testing.T) {
		tests := []struct {
			name string
			q    url.Values
			want []string
		}{
			// "client" resolves only through the pod's resolv.conf: its
			// search domain and the DNS server in the client netns.
			{name: "http by name via resolv.conf", q: url.Values{"host": {"client"}, "port": {"9090"}, "request": {"hostname"}, "tries": {"2"}}, want: []string{"client", "client"}},
			{name: "udp by name via resolv.conf", q: url.Values{"host": {"client.skiff.test"}, "port": {"9091"}, "request": {"hostname"}, "protocol": {"udp"}}, want: []string{"client"}},
			// "netexec-alias" is only in the pod's hosts file.
			{name: "http by name via hosts", q: url.Values{"host": {"netexec-alias"}, "port": {"8080"}, "request": {"hostname"}}, want: []string{sb.Name}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				code, body := httpGet(t, clientNS, base+"/dial?"+tc.q.Encode())
				var res netexec.DialResult
				if err := json.Unmarshal([]byte(body), &res); code != 200 || err != nil {
					t.Fatalf("/dial: %d %q (%v)", code, body, err)
				}
				if strings.Join(res.Responses, ",") != strings.Join(tc.want, ",") || len(res.Errors) != 0 {
					t.Fatalf("/dial = %+v, want responses %q", res, tc.want)
				}
			})
		}
	})
	t.Run("exec sees the pod's files, the host keeps its own", func(t *testing.T) {
		for file, want := range map[string]string{"/etc/resolv.conf": podResolv, "/etc/hosts": podHosts} {
			code, out, err := rt.Exec(ctx, st.ID, []string{"cat", file}, 10*time.Second)
			if err != nil || code != 0 || string(out) != want {
				t.Errorf("cat %s in the container: %d %q %v, want %q", file, code, out, err, want)
			}
		}
		if got := readFile(t, "/etc/resolv.conf"); got != hostResolv {
			t.Errorf("host /etc/resolv.conf changed to %q", got)
		}
		if got := readFile(t, "/etc/hosts"); got != hostHosts {
			t.Errorf("host /etc/hosts changed to %q", got)
		}
	})
	t.Run("exec runs in the pod netns", func(t *testing.T) {
		code, out, err := rt.Exec(ctx, st.ID, []string{"readlink", "/proc/self/ns/net"}, 10*time.Second)
		if want := netnsID(t, sb.NetNSPath) + "\n"; err != nil || code != 0 || string(out) != want {
			t.Fatalf("readlink: %d %q %v, want %q", code, out, err, want)
		}
	})
	t.Run("exec exit codes", func(t *testing.T) {
		tests := []struct {
			name     string
			cmd      []string
			wantCode int
			wantOut  string
		}{
			{name: "success", cmd: []string{"true"}, wantCode: 0},
			{name: "exit 3", cmd: []string{"sh", "-c", "exit 3"}, wantCode: 3},
			{name: "stdout and stderr", cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 1"}, wantCode: 1, wantOut: "out\nerr\n"},
			{name: "killed by SIGTERM", cmd: []string{"sh", "-c", "kill -TERM $$"}, wantCode: 143},
			{name: "env of the container", cmd: []string{"sh", "-c", "echo $PATH"}, wantCode: 0, wantOut: strings.TrimPrefix(defaultPath, "PATH=") + "\n"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				code, out, err := rt.Exec(ctx, st.ID, tc.cmd, 10*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if code != tc.wantCode || (tc.wantOut != "" && string(out) != tc.wantOut) {
					t.Fatalf("Exec %q = %d %q, want %d %q", tc.cmd, code, out, tc.wantCode, tc.wantOut)
				}
			})
		}
	})
	t.Run("exec timeout", func(t *testing.T) {
		t0 := time.Now()
		code, _, err := rt.Exec(ctx, st.ID, []string{"sleep", "30"}, 300*time.Millisecond)
		elapsed := time.Since(t0)
		t.Logf("exec of sleep 30 with a 300ms timeout returned after %v", elapsed)
		if !errors.Is(err, context.DeadlineExceeded) || code != -1 {
			t.Fatalf("Exec = %d, %v; want -1 and DeadlineExceeded", code, err)
		}
		if elapsed > 10*time.Second {
			t.Fatalf("Exec took %v", elapsed)
		}
	})
	t.Run("exec of a missing command", func(t *testing.T) {
		code, _, err := rt.Exec(ctx, st.ID, []string{"no-such-command-skiff"}, 10*time.Second)
		if err == nil || code != -1 || !strings.Contains(err.Error(), "executable file not found") {
			t.Fatalf("Exec = %d, %v", code, err)
		}
	})
	t.Run("logs", func(t *testing.T) {
		var buf bytes.Buffer
		if err := rt.Logs(ctx, st.ID, false, &buf); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"netexec: started HTTP server", "uri=/hostname", "from=" + clientIP} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("logs lack %q:\n%s", want, buf.String())
			}
		}
	})
	t.Run("stop", func(t *testing.T) {
		t0 := time.Now()
		if err := rt.Stop(ctx, st.ID, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		t.Logf("netexec stopped by SIGTERM in %v", time.Since(t0))
		got, err := rt.Status(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != runtime.StateExited || got.ExitCode != 0 || got.FinishedAt.IsZero() {
			t.Fatalf("after Stop: %+v, want exited 0", got)
		}
		if alive(st.Pid, mustTicks(t, rt, st.ID)) {
			t.Fatal("process still alive")
		}
		if _, _, err := rt.Exec(ctx, st.ID, []string{"true"}, time.Second); !errors.Is(err, runtime.ErrNotRunning) {
			t.Fatalf("Exec in a stopped container: %v", err)
		}
		if err := rt.Stop(ctx, st.ID, time.Second); err != nil {
			t.Fatalf("second Stop: %v", err)
		}
	})
}

func mustTicks(t *testing.T, rt *Runtime, id string) uint64 {
	t.Helper()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.containers[id].rec.StartTicks
}
