package netagent_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/client/portforward"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/kubectl"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/server/servertest"
)

var resDeployments = api.Lookup(resources, "apps/v1", "deployments")

// pfCluster is a server with its built-in agent (process runtime) in a
// node namespace the test made, running pod "pf": netexec on :8080
// ("http") and a TCP echo on 127.0.0.1:9000 only; Service pf-svc
// (80 -> "http", 9009 -> 9000) and Deployment pf-deploy of the same pod.
type pfCluster struct {
	ts         *servertest.Server // nil on containerd (startServer)
	url, token string
	ca         []byte
}

func pfPodSpec() api.PodSpec {
	self, _ := os.Executable()
	p := netexecPod("x", "netexec", "--http-port=8080", "--udp-port=8081")
	spec := p.Spec
	spec.Containers = append(spec.Containers, api.Container{Name: "echo", Image: "skiff", Command: []string{self, "tcp-echo", "127.0.0.1:9000"}})
	return spec
}

func startPFCluster(t testing.TB, deploy bool) *pfCluster {
	t.Helper()
	requireNode(t)
	ns := netnstest.NewNode(t)
	ts := servertest.Start(t, servertest.Options{Agent: true, Config: func(cfg *config.Server) {
		cfg.AgentNetNS = ns.Path
		cfg.AgentNodeName = "pf-node"
		cfg.NodeIP = []string{"192.0.2.21"}
		cfg.Runtime = "process"
	}})
	select {
	case <-ts.Server().Agent().Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("built-in agent not Ready")
	}
	admin := ts.Client()
	ctx := context.Background()
	t.Cleanup(func() {
		// Pods go before the server stops (their processes hold the netns).
		one := int64(1)
		_ = admin.Delete(ctx, resDeployments, "default", "pf-deploy", client.DeleteOptions{})
		_ = admin.Delete(ctx, resPods, "default", "pf", client.DeleteOptions{GracePeriodSeconds: &one})
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			var list api.PodList
			if err := admin.List(ctx, resPods, "default", client.ListOptions{}, &list); err == nil {
				if len(list.Items) == 0 {
					return
				}
				for _, p := range list.Items {
					_ = admin.Delete(ctx, resPods, "default", p.Name, client.DeleteOptions{GracePeriodSeconds: &one})
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Errorf("pods still there 30s after delete")
	})
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "pf", Namespace: "default", Labels: map[string]string{"app": "pf"}}, Spec: pfPodSpec()}
	if err := admin.Create(ctx, resPods, "default", pod); err != nil {
		t.Fatal(err)
	}
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "pf-svc", Namespace: "default"}, Spec: api.ServiceSpec{
		Selector: map[string]string{"app": "pf"},
		Ports: []api.ServicePort{
			{Name: "web", Port: 80, TargetPort: api.FromString("http")},
			{Name: "echo", Port: 9009, TargetPort: api.FromInt32(9000)},
		}}}
	if err := admin.Create(ctx, resServices, "default", svc); err != nil {
		t.Fatal(err)
	}
	if deploy {
		one := int32(1)
		d := &api.Deployment{ObjectMeta: api.ObjectMeta{Name: "pf-deploy", Namespace: "default"}, Spec: api.DeploymentSpec{
			Replicas: &one,
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "pf-deploy"}},
			Template: api.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "pf-deploy"}}, Spec: pfPodSpec()},
		}}
		if err := admin.Create(ctx, resDeployments, "default", d); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var p api.Pod
		err := admin.Get(ctx, resPods, "default", "pf", &p)
		if err == nil && podReady(&p) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod pf not Ready: %v %+v", err, p.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return &pfCluster{ts: ts, url: ts.URL(), token: ts.Bundle().AdminToken, ca: ts.Bundle().CACertPEM}
}

// dial upgrades pods/NAME/portforward on the server: plain SPDY, or SPDY
// over WebSocket (kubectl 1.31+).
func (c *pfCluster) dial(t testing.TB, pod string, overWebSocket bool) *portforward.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.ca)
	tlsCfg := &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}
	u := c.url + "/api/v1/namespaces/default/pods/" + pod + "/portforward"
	auth := http.Header{"Authorization": {"Bearer " + c.token}}
	if overWebSocket {
		d := websocket.Dialer{TLSClientConfig: tlsCfg, Subprotocols: []string{portforward.ProtocolTunnel}}
		ws, resp, err := d.Dial("wss"+strings.TrimPrefix(u, "https"), auth)
		if err != nil {
			t.Fatalf("websocket: %v %v", err, resp)
		}
		cl, err := portforward.NewClient(portforward.WebSocketConn(ws))
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	host := strings.TrimPrefix(c.url, "https://")
	conn, err := tls.Dial("tcp", host, tlsCfg)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, u, nil)
	req.Header = portforward.UpgradeHeader()
	req.Header.Set("Authorization", auth.Get("Authorization"))
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		b := []byte{}
		if resp != nil {
			b, _ = io.ReadAll(resp.Body)
		}
		t.Fatalf("upgrade: %v %v %s", resp, err, b)
	}
	cl, err := portforward.NewClient(&bufferedConn{Conn: conn, r: br})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// echoThrough sends n random bytes over one forwarded connection and
// checks they come back.
func echoThrough(cl *portforward.Client, port uint16, n int) error {
	a, b := net.Pipe()
	errc := make(chan error, 1)
	go func() { errc <- cl.Forward(b, port) }()
	msg := make([]byte, n)
	_, _ = rand.Read(msg)
	go func() { _, _ = a.Write(msg) }()
	got := make([]byte, n)
	_ = a.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, rerr := io.ReadFull(a, got)
	a.Close()
	if err := <-errc; err != nil {
		return err
	}
	if rerr != nil {
		return rerr
	}
	if !bytes.Equal(got, msg) {
		return fmt.Errorf("echo differs")
	}
	return nil
}

// TestPortForwardEndToEnd: through a real server to a pod of the
// built-in agent: both wire protocols, the loopback-only port, a port
// nothing listens on, a client that vanishes mid-stream, then `skiff
// port-forward` for pod/, svc/ and deploy/ with several ports, and 100
// bad cases after which goroutines and sockets are back to baseline.
func TestPortForwardEndToEnd(t *testing.T) {
	c := startPFCluster(t, true)
	for _, ws := range []bool{false, true} {
		cl := c.dial(t, "pf", ws)
		if err := echoThrough(cl, 9000, 4<<20); err != nil {
			t.Fatalf("websocket=%v: echo on the loopback-only port: %v", ws, err)
		}
		err := echoThrough(cl, 7777, 10)
		if err == nil || !strings.Contains(err.Error(), "error forwarding port 7777 to pod default/pf, uid ") || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("websocket=%v: port 7777: %v", ws, err)
		}
		cl.Close()
	}

	kc := c.ts.Kubeconfig()
	run := func(t *testing.T, args ...string) (func() string, map[string]string) {
		t.Helper()
		return portForwardCLI(t, kc, args...)
	}
	get, echoLocal := hostnameVia, echoVia
	t.Run("pod", func(t *testing.T) {
		stop, ports := run(t, "pod/pf", ":8080", ":9000")
		if got := get(t, ports["8080"]); got != "pf" {
			t.Errorf("/hostname = %q", got)
		}
		echoLocal(t, ports["9000"])
		stop()
	})
	t.Run("svc", func(t *testing.T) {
		// Service ports 80 ("http" on the pod: 8080) and echo (9009 -> 9000).
		stop, ports := run(t, "svc/pf-svc", ":80", ":echo")
		if ports["8080"] == "" || ports["9000"] == "" {
			t.Fatalf("targetPorts: %v", ports)
		}
		if got := get(t, ports["8080"]); got != "pf" {
			t.Errorf("/hostname = %q", got)
		}
		echoLocal(t, ports["9000"])
		stop()
	})
	t.Run("deploy", func(t *testing.T) {
		stop, ports := run(t, "deploy/pf-deploy", ":http", ":9000")
		if got := get(t, ports["8080"]); !strings.HasPrefix(got, "pf-deploy-") {
			t.Errorf("/hostname = %q", got)
		}
		echoLocal(t, ports["9000"])
		stop()
	})
	t.Run("refused", func(t *testing.T) {
		stop, ports := run(t, "pod/pf", ":7777")
		conn, err := net.Dial("tcp", "127.0.0.1:"+ports["7777"])
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := conn.Read(make([]byte, 1)); err == nil {
			t.Errorf("read %d bytes from a port nothing listens on", n)
		}
		conn.Close()
		time.Sleep(200 * time.Millisecond)
		if msg := stop(); !strings.Contains(msg, "an error occurred forwarding") || !strings.Contains(msg, "error forwarding port 7777 to pod default/pf") || !strings.Contains(msg, "connection refused") {
			t.Errorf("stderr: %q", msg)
		}
	})

	t.Run("leaks", func(t *testing.T) { badCases(t, c, 100) })
}

// BenchmarkPortForwardThroughput echoes 64 MiB per iteration through the
// server and the node to the pod's loopback-only echo (both directions
// at once; SetBytes counts one direction).
//
//	go test -run '^$' -bench BenchmarkPortForwardThroughput -benchtime=5x ./netagent/
func BenchmarkPortForwardThroughput(b *testing.B) {
	c := startPFCluster(b, false)
	cl := c.dial(b, "pf", false)
	defer cl.Close()
	const size = 64 << 20
	b.SetBytes(size)
	for b.Loop() {
		a, p := net.Pipe()
		errc := make(chan error, 1)
		go func() { errc <- cl.Forward(p, 9000) }()
		go func() {
			buf := make([]byte, 256<<10)
			for sent := 0; sent < size; sent += len(buf) {
				if _, err := a.Write(buf); err != nil {
					return
				}
			}
		}()
		if _, err := io.CopyN(io.Discard, a, size); err != nil {
			b.Fatal(err)
		}
		a.Close()
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
	}
}

// portForwardCLI runs `skiff port-forward ARGS` (in-process, on
// 127.0.0.1) until stop, and returns the local port of each remote port
// from its "Forwarding from" lines.
func portForwardCLI(t *testing.T, kubeconfig string, args ...string) (stop func() string, ports map[string]string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &lockedBuf{}, &lockedBuf{}
	var cmd interface {
		SetArgs([]string)
		ExecuteContext(context.Context) error
	}
	for _, x := range kubectl.Commands(kubectl.Env{Out: out, ErrOut: errOut, In: strings.NewReader("")}) {
		if x.Name() == "port-forward" {
			cmd = x
		}
	}
	cmd.SetArgs(append(args, "--kubeconfig", kubeconfig, "--address", "127.0.0.1"))
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	re := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)`)
	deadline := time.Now().Add(20 * time.Second)
	ports = map[string]string{}
	for len(ports) < len(args)-1 && time.Now().Before(deadline) {
		for _, m := range re.FindAllStringSubmatch(out.String(), -1) {
			ports[m[2]] = m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(ports) < len(args)-1 {
		cancel()
		t.Fatalf("%v: no Forwarding lines: %q %q", args, out.String(), errOut.String())
	}
	return func() string {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%v: %v", args, err)
		}
		return errOut.String()
	}, ports
}

// hostnameVia is netexec's /hostname through a local port.
func hostnameVia(t *testing.T, port string) string {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://127.0.0.1:" + port + "/hostname")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// echoVia sends a line through a local port and expects it back.
func echoVia(t *testing.T, port string) {
	t.Helper()
	conn, err := net.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("ping\n"))
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || line != "ping\n" {
		t.Fatalf("echo via port %s: %q %v", port, line, err)
	}
}

func socketCount(t testing.TB) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range es {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPortForwardContainerd: the same wire path to a pod on containerd
// through a remote agent's node API (pinned HTTPS, the upgrade spliced by
// the server): the loopback-only echo of the pod's second container over
// both protocols, a refused port, and 100 bad cases back to baseline.
func TestPortForwardContainerd(t *testing.T) {
	requireNode(t)
	workload, skiff := requireContainerd(t)
	ctx := context.Background()
	ts := servertest.Start(t, servertest.Options{})
	s := ts.Server()
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	dataDir, crt := managedContainerd(t, "skpf", skiff, nil, workloadImage("skiff.local/netexec:test", workload))
	rt, name := crt, "containerd"
	ns := netnstest.NewNode(t)
	cfg := netagent.Config{
		Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
		NodeName: "node-pf", NodeIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")},
		DataDir: dataDir, Runtime: name, DNSUpstreams: []string{}, NodeAPIListen: "127.0.0.1:0",
		RelistPeriod: 200 * time.Millisecond, Logger: testLog(t),
	}
	startAgent(t, nil, cfg, netagent.Deps{Runtime: rt, NodeNetNS: ns.Do})
	img := "skiff.local/netexec:test"
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "pf", Namespace: "default"}, Spec: api.PodSpec{Containers: []api.Container{
		{Name: "web", Image: img, ImagePullPolicy: api.PullIfNotPresent, Args: []string{"netexec", "--http-port=8080", "--udp-port=-1"},
			Env:   []api.EnvVar{{Name: "POD_NAME", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080}}},
		{Name: "echo", Image: img, ImagePullPolicy: api.PullIfNotPresent, Args: []string{"tcp-echo", "127.0.0.1:9000"}},
	}}}
	if err := admin.Create(ctx, resPods, "default", pod); err != nil {
		t.Fatal(err)
	}
	waitPod(t, admin, "pf", 60*time.Second, "Running", func(p *api.Pod) bool { return p.Status.Phase == api.PodRunning })
	c := &pfCluster{url: s.URL(), token: s.Bundle().AdminToken, ca: s.Bundle().CACertPEM}
	eventually(t, 20*time.Second, "the echo listens", func() (bool, error) {
		cl := c.dial(t, "pf", false)
		defer cl.Close()
		err := echoThrough(cl, 9000, 16)
		return err == nil, err
	})
	for _, ws := range []bool{false, true} {
		cl := c.dial(t, "pf", ws)
		if err := echoThrough(cl, 9000, 4<<20); err != nil {
			t.Fatalf("websocket=%v: echo on the loopback-only port: %v", ws, err)
		}
		err := echoThrough(cl, 7777, 10)
		if err == nil || !strings.Contains(err.Error(), "error forwarding port 7777 to pod default/pf, uid ") || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("websocket=%v: port 7777: %v", ws, err)
		}
		cl.Close()
	}
	// skiff port-forward, two ports, through the remote node API.
	stop, ports := portForwardCLI(t, ts.Kubeconfig(), "pod/pf", ":9000", ":http")
	echoVia(t, ports["9000"])
	eventually(t, 20*time.Second, "netexec answers", func() (bool, error) {
		c := &http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get("http://127.0.0.1:" + ports["8080"] + "/healthz")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Errorf("%s", resp.Status)
	})
	if got := hostnameVia(t, ports["8080"]); got != "pf" {
		t.Errorf("/hostname = %q", got)
	}
	stop()
	badCases(t, c, 100)
	one := int64(1)
	if err := admin.Delete(ctx, resPods, "default", "pf", client.DeleteOptions{GracePeriodSeconds: &one}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "pod deleted", func() (bool, error) {
		var q api.Pod
		err := admin.Get(ctx, resPods, "default", "pf", &q)
		return client.IsNotFound(err), err
	})
}

// badCases runs n refused ports and vanished clients (half over
// WebSocket), then checks that goroutines and sockets (of this process:
// the server, and the agent when it runs here) come back to baseline.
func badCases(t *testing.T, c *pfCluster, n int) {
	if testing.Short() {
		n = 20
	}
	// Settle, then the baseline.
	time.Sleep(500 * time.Millisecond)
	base, baseFDs := runtime.NumGoroutine(), socketCount(t)
	for i := range n {
		cl := c.dial(t, "pf", i%2 == 1)
		switch i % 4 {
		case 0, 1: // refused
			_ = echoThrough(cl, 7777, 1)
		case 2, 3: // the client vanishes mid-stream
			a, b := net.Pipe()
			go func() { _ = cl.Forward(b, 9000) }()
			_, _ = a.Write(make([]byte, 64<<10))
			cl.Close()
			a.Close()
		}
		cl.Close()
	}
	deadline := time.Now().Add(30 * time.Second)
	for (runtime.NumGoroutine() > base+5 || socketCount(t) > baseFDs) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if g, s := runtime.NumGoroutine(), socketCount(t); g > base+5 || s > baseFDs {
		buf := make([]byte, 2<<20)
		t.Fatalf("after %d bad cases: goroutines %d (baseline %d), sockets %d (baseline %d)\n%s", n, g, base, s, baseFDs, buf[:runtime.Stack(buf, true)])
	}
}
