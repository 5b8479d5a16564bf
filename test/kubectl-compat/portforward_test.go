package kubectlcompat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/server/servertest"
)

// TestPortForward runs kubectl port-forward and client-go's port
// forwarders against a second server that has its built-in agent (the
// process runtime, in a node namespace the test made): pod "pf" serves
// netexec on 8080 ("http") and a TCP echo on 127.0.0.1:9000 only. The
// current kubectl sends SPDY over WebSocket (KEP-4006), Debian's 1.20
// plain SPDY; client-go is run with both dialers.
func TestPortForward(t *testing.T) {
	netnstest.RequireCNIPlugins(t)
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("needs iptables (the portmap plugin runs it)")
	}
	node := netnstest.NewNode(t)
	ts := servertest.Start(t, servertest.Options{Agent: true, Config: func(cfg *config.Server) {
		cfg.AgentNetNS = node.Path
		cfg.AgentNodeName = "pf-node"
		cfg.NodeIP = []string{"192.0.2.22"}
		cfg.Runtime = "process"
	}})
	rc, err := clientcmd.BuildConfigFromFlags("", ts.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	c := ctx(t)
	self, _ := os.Executable()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pf", Labels: map[string]string{"app": "pf"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "web", Image: "skiff", Command: []string{self, "netexec", "--http-port=8080", "--udp-port=8081"},
			Env:   []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}},
		{Name: "echo", Image: "skiff", Command: []string{self, "tcp-echo", "127.0.0.1:9000"}},
	}}}
	if _, err := cs.CoreV1().Pods("default").Create(c, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(1)
		_ = cs.CoreV1().Pods("default").Delete(context.Background(), "pf", metav1.DeleteOptions{GracePeriodSeconds: &zero})
		for range 150 {
			if _, err := cs.CoreV1().Pods("default").Get(context.Background(), "pf", metav1.GetOptions{}); err != nil {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "pf-svc"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "pf"},
		Ports:    []corev1.ServicePort{{Name: "web", Port: 80, TargetPort: intstr.FromString("http")}},
	}}
	if _, err := cs.CoreV1().Services("default").Create(c, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		p, err := cs.CoreV1().Pods("default").Get(c, "pf", metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod pf not running: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Wait for netexec to listen (the pod runs before its ports are open).
	time.Sleep(time.Second)

	t.Run("kubectl", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, env.kubectl, "port-forward", "pod/pf", ":9000", ":8080", ":7777", "--kubeconfig", ts.Kubeconfig())
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, errOut := &syncBuf{}, &syncBuf{}
		cmd.Stdout, cmd.Stderr = out, errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		ports := forwarded(t, out, errOut, 3)
		echoOnce(t, ports["9000"])
		if got := hostname(t, ports["8080"]); got != "pf" {
			t.Errorf("/hostname = %q", got)
		}
		conn, err := net.Dial("tcp", "127.0.0.1:"+ports["7777"])
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _ = conn.Read(make([]byte, 1))
		conn.Close()
		waitFor(t, errOut, "error forwarding port 7777 to pod default/pf")
		if !strings.Contains(errOut.String(), "connection refused") {
			t.Errorf("stderr: %q", errOut.String())
		}
	})
	t.Run("kubectl svc", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, env.kubectl, "port-forward", "svc/pf-svc", ":80", "--kubeconfig", ts.Kubeconfig())
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, errOut := &syncBuf{}, &syncBuf{}
		cmd.Stdout, cmd.Stderr = out, errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		ports := forwarded(t, out, errOut, 1)
		if got := hostname(t, ports["8080"]); got != "pf" {
			t.Errorf("/hostname through the Service's targetPort = %q (%v)", got, ports)
		}
	})

	u, err := url.Parse(ts.URL() + "/api/v1/namespaces/default/pods/pf/portforward")
	if err != nil {
		t.Fatal(err)
	}
	dialers := map[string]func() (httpstream.Dialer, error){
		"spdy": func() (httpstream.Dialer, error) {
			tr, up, err := spdy.RoundTripperFor(rc)
			if err != nil {
				return nil, err
			}
			return spdy.NewDialer(up, &http.Client{Transport: tr}, http.MethodPost, u), nil
		},
		"websocket": func() (httpstream.Dialer, error) { return portforward.NewSPDYOverWebsocketDialer(u, rc) },
	}
	for name, mk := range dialers {
		t.Run("client-go "+name, func(t *testing.T) {
			d, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			stop, ready := make(chan struct{}), make(chan struct{})
			out, errOut := &syncBuf{}, &syncBuf{}
			fw, err := portforward.NewOnAddresses(d, []string{"127.0.0.1"}, []string{"0:9000", "0:8080"}, stop, ready, out, errOut)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- fw.ForwardPorts() }()
			select {
			case <-ready:
			case err := <-done:
				t.Fatalf("ForwardPorts: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("not ready")
			}
			got, err := fw.GetPorts()
			if err != nil || len(got) != 2 {
				t.Fatalf("ports %v %v", got, err)
			}
			echoOnce(t, fmt.Sprint(got[0].Local))
			if h := hostname(t, fmt.Sprint(got[1].Local)); h != "pf" {
				t.Errorf("/hostname = %q", h)
			}
			close(stop)
			if err := <-done; err != nil {
				t.Errorf("ForwardPorts: %v", err)
			}
		})
	}
}

// forwarded reads kubectl's "Forwarding from 127.0.0.1:L -> R" lines.
func forwarded(t *testing.T, out, errOut *syncBuf, n int) map[string]string {
	t.Helper()
	re := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)`)
	ports := map[string]string{}
	for deadline := time.Now().Add(30 * time.Second); len(ports) < n && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, m := range re.FindAllStringSubmatch(out.String(), -1) {
			ports[m[2]] = m[1]
		}
	}
	if len(ports) < n {
		t.Fatalf("no Forwarding lines: %q %q", out.String(), errOut.String())
	}
	return ports
}

func waitFor(t *testing.T, b *syncBuf, s string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(b.String(), s) {
			return
		}
	}
	t.Errorf("%q never in %q", s, b.String())
}

func echoOnce(t *testing.T, port string) {
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
		t.Fatalf("echo via %s: %q %v", port, line, err)
	}
}

func hostname(t *testing.T, port string) string {
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

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
