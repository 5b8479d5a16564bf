package netagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/cgroups"
	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/process"
	"github.com/skiff-dev/skiff/server"
)

var resSlices = api.Lookup(resources, "discovery.k8s.io/v1", "endpointslices")

// requireNode skips unless the test can make namespaces and run the CNI
// plugins (CI runs as root with containernetworking-plugins installed).
func requireNode(t testing.TB) {
	t.Helper()
	netnstest.RequireCNIPlugins(t)
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("needs iptables (the portmap plugin runs it)")
	}
}

// node is a simulated node: a network namespace the test created, with an
// in-process agent whose pod network, node DNS and probes live in it, and
// the process runtime.
type node struct {
	t       *testing.T
	ns      *netnstest.NS
	cfg     netagent.Config
	dataDir string
	agent   *runningAgent
	rt      *process.Runtime
	proxy   netagent.ProxyFunc // Deps.Proxy; nil runs no service proxy
	cg      *cgroups.FS        // Deps.Cgroups and the runtime's; nil: none
}

func newNode(t *testing.T, s *server.Server, name string) *node {
	t.Helper()
	return newNodeWith(t, s, name, func(*node) {})
}

// newNodeWith is newNode with set changing the node before its agent
// starts.
func newNodeWith(t *testing.T, s *server.Server, name string, set func(*node)) *node {
	t.Helper()
	n := &node{t: t, ns: netnstest.NewNode(t), dataDir: t.TempDir()}
	n.cfg = netagent.Config{
		Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
		NodeName: name, NodeIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")},
		DataDir: n.dataDir, Runtime: "process", DNSUpstreams: []string{},
		RelistPeriod: 200 * time.Millisecond, Logger: testLog(t),
	}
	// Whatever happens, no pod process outlives the test, and the node's
	// pod networks go before its namespace.
	set(n)
	t.Cleanup(n.cleanup)
	n.start()
	return n
}

// testLog logs to stderr with SKIFF_TEST_LOG set, else nowhere.
func testLog(t *testing.T) *slog.Logger {
	if os.Getenv("SKIFF_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.DiscardHandler)
}

// start runs an agent (a fresh process runtime over the same state dir, as
// after a real restart).
func (n *node) start() {
	n.t.Helper()
	pc := process.Config{StateDir: filepath.Join(n.dataDir, "runtime", "process"), Logger: n.cfg.Logger}
	if n.cg != nil {
		pc.Cgroups = n.cg
	}
	rt, err := process.New(pc)
	if err != nil {
		n.t.Fatal(err)
	}
	n.rt = rt
	deps := netagent.Deps{Runtime: rt, NodeNetNS: n.ns.Do, Proxy: n.proxy}
	if n.cg != nil {
		deps.Cgroups = n.cg
	}
	n.agent = startAgent(n.t, nil, n.cfg, deps)
}

func (n *node) cleanup() {
	if n.agent != nil {
		n.agent.cancel()
		<-n.agent.done
	}
	ctx := context.Background()
	rt, err := process.New(process.Config{StateDir: filepath.Join(n.dataDir, "runtime", "process")})
	if err == nil {
		cs, _ := rt.List(ctx)
		for _, c := range cs {
			if c.State == runtime.StateRunning {
				n.t.Errorf("pod process %s/%s (pid %d) still running at the end", c.PodUID, c.Name, c.Pid)
				_ = rt.Stop(ctx, c.ID, 0)
			}
			_ = rt.Remove(ctx, c.ID)
		}
	}
	net, err := cni.New(cni.Config{DataDir: n.dataDir, PodCIDR: netip.MustParsePrefix("10.244.0.0/24"), ServiceCIDR: netip.MustParsePrefix("10.96.0.0/16")})
	if err == nil {
		_ = n.ns.Do(func() error {
			uids, _ := net.Pods(ctx)
			for _, u := range uids {
				n.t.Errorf("pod network %s still there at the end", u)
				_ = net.DelPod(ctx, u)
			}
			return nil
		})
	}
}

// http is a client whose connections start in the node's namespace.
func (n *node) http() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (c net.Conn, err error) {
			err = n.ns.Do(func() error {
				var d net.Dialer
				c, err = d.DialContext(ctx, network, addr)
				return err
			})
			return c, err
		},
	}}
}

func (n *node) get(t *testing.T, rawURL string) string {
	t.Helper()
	resp, err := n.http().Get(rawURL)
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", rawURL, resp.StatusCode, b)
	}
	return string(b)
}

func netexecPod(name string, args ...string) *api.Pod {
	self, _ := os.Executable()
	period := int32(1)
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name}},
		Spec: api.PodSpec{Containers: []api.Container{{
			Name: "netexec", Image: "skiff", Command: append([]string{self}, args...),
			Env:   []api.EnvVar{{Name: "POD_NAME", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080}},
			ReadinessProbe: &api.Probe{ProbeHandler: api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Path: "/healthz", Port: api.FromString("http")}},
				PeriodSeconds: period, FailureThreshold: 1},
		}}},
	}
}

func waitPod(t *testing.T, c *client.Client, name string, d time.Duration, what string, cond func(*api.Pod) bool) *api.Pod {
	t.Helper()
	var p api.Pod
	eventually(t, d, name+": "+what, func() (bool, error) {
		err := c.Get(context.Background(), resPods, "default", name, &p)
		return err == nil && cond(&p), err
	})
	return &p
}

type dialResult struct {
	Responses []string `json:"responses"`
	Errors    []string `json:"errors"`
}

// tryDial is dial without failing the test: while a name does not resolve
// yet (a headless Service whose slice has not arrived: the search list ends
// in a forwarded query the test netns cannot answer, SERVFAIL), netexec
// answers 400, which eventually loops retry.
func (n *node) tryDial(from netip.Addr, host string, port int) (dialResult, error) {
	q := url.Values{"host": {host}, "port": {fmt.Sprint(port)}, "request": {"hostname"}, "protocol": {"http"}, "tries": {"1"}}
	resp, err := n.http().Get(fmt.Sprintf("http://%s/dial?%s", net.JoinHostPort(from.String(), "8080"), q.Encode()))
	if err != nil {
		return dialResult{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return dialResult{}, fmt.Errorf("dial %s: %d %s", host, resp.StatusCode, b)
	}
	var r dialResult
	if err := json.Unmarshal(b, &r); err != nil {
		return dialResult{}, fmt.Errorf("dial answer %q: %v", b, err)
	}
	return r, nil
}

// dial asks pod ip's netexec to reach host:port itself (/dial).
func (n *node) dial(t *testing.T, from netip.Addr, host string, port int) dialResult {
	t.Helper()
	q := url.Values{"host": {host}, "port": {fmt.Sprint(port)}, "request": {"hostname"}, "protocol": {"http"}, "tries": {"1"}}
	body := n.get(t, fmt.Sprintf("http://%s/dial?%s", net.JoinHostPort(from.String(), "8080"), q.Encode()))
	var r dialResult
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("dial answer %q: %v", body, err)
	}
	return r
}

func TestNodeE2E(t *testing.T) {
	requireNode(t)
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n := newNode(t, s, "node-e2e")
	podCIDR := n.agent.PodCIDR()
	gw := n.agent.Gateway()
	if n.agent.DNSAddr() != net.JoinHostPort(gw.String(), "53") {
		t.Fatalf("node DNS on %s, want the gateway %s:53", n.agent.DNSAddr(), gw)
	}

	for _, name := range []string{"a", "b"} {
		if err := admin.Create(ctx, resPods, "default", netexecPod(name, "netexec", "--http-port=8080", "--udp-port=8081")); err != nil {
			t.Fatal(err)
		}
	}
	pa := waitPod(t, admin, "a", 30*time.Second, "Ready", podReady)
	pb := waitPod(t, admin, "b", 30*time.Second, "Ready", podReady)
	ipA, ipB := netip.MustParseAddr(pa.Status.PodIP), netip.MustParseAddr(pb.Status.PodIP)
	if !podCIDR.Contains(ipA) || !podCIDR.Contains(ipB) || ipA == ipB {
		t.Fatalf("pod IPs %s %s, podCIDR %s", ipA, ipB, podCIDR)
	}

	// The pods answer from their own netns, and reach each other across
	// the bridge.
	if got := n.get(t, "http://"+net.JoinHostPort(ipA.String(), "8080")+"/hostname"); got != "a" {
		t.Fatalf("a's /hostname = %q", got)
	}
	if r := n.dial(t, ipA, ipB.String(), 8080); len(r.Responses) != 1 || r.Responses[0] != "b" {
		t.Fatalf("a -> b: %+v", r)
	}

	// Cluster names resolve through the pods' resolv.conf via the agent's
	// DNS: a headless Service answers with the ready pod's IP.
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "bee", Namespace: "default"},
		Spec: api.ServiceSpec{ClusterIP: api.ClusterIPNone, Selector: map[string]string{"app": "b"},
			Ports: []api.ServicePort{{Name: "http", Port: 8080, TargetPort: api.FromInt32(8080), Protocol: api.ProtocolTCP}}}}
	if err := admin.Create(ctx, resServices, "default", svc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "a reaches bee by name", func() (bool, error) {
		r, err := n.tryDial(ipA, "bee", 8080)
		if err != nil {
			return false, err
		}
		return len(r.Responses) == 1 && r.Responses[0] == "b", fmt.Errorf("%+v", r)
	})
	if r := n.dial(t, ipA, "bee.default.svc.cluster.local", 8080); len(r.Responses) != 1 || r.Responses[0] != "b" {
		t.Fatalf("a -> bee's FQDN: %+v", r)
	}
	rc, err := os.ReadFile(filepath.Join(n.dataDir, "pods", string(pa.UID), "resolv.conf"))
	if err != nil || !strings.HasPrefix(string(rc), "nameserver "+gw.String()+"\n") {
		t.Fatalf("a's resolv.conf: %q %v", rc, err)
	}

	// Probes flip Ready both ways (netexec /sethealth).
	n.get(t, "http://"+net.JoinHostPort(ipB.String(), "8080")+"/sethealth?status=503")
	waitPod(t, admin, "b", 10*time.Second, "not Ready", func(p *api.Pod) bool { return !podReady(p) })
	n.get(t, "http://"+net.JoinHostPort(ipB.String(), "8080")+"/sethealth?status=200")
	waitPod(t, admin, "b", 10*time.Second, "Ready again", podReady)

	// An agent restart adopts the pods: same processes, same IPs, no
	// restart, Ready throughout.
	pidsBefore := pids(t, n.rt)
	var notReady []string
	var mu sync.Mutex
	stopWatch := watchReady(t, admin, func(p *api.Pod) {
		mu.Lock()
		b, _ := json.Marshal(p.Status)
		notReady = append(notReady, p.Name+" rv="+p.ResourceVersion+" "+string(b))
		mu.Unlock()
	})
	n.agent.stop(t)
	n.start()
	time.Sleep(3 * time.Second)
	stopWatch()
	if got := pids(t, n.rt); fmt.Sprint(got) != fmt.Sprint(pidsBefore) {
		t.Fatalf("pids after the agent restart %v, before %v", got, pidsBefore)
	}
	pa2 := waitPod(t, admin, "a", 5*time.Second, "Ready", podReady)
	if pa2.Status.PodIP != pa.Status.PodIP || pa2.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Fatalf("after the agent restart a is %s restarts %d", pa2.Status.PodIP, pa2.Status.ContainerStatuses[0].RestartCount)
	}
	mu.Lock()
	if len(notReady) > 0 {
		t.Fatalf("pods went not Ready across the agent restart: %v", notReady)
	}
	mu.Unlock()
	// The restarted agent's DNS answers SERVFAIL until its caches sync.
	eventually(t, 20*time.Second, "a reaches bee after the agent restart", func() (bool, error) {
		r, err := n.tryDial(ipA, "bee", 8080)
		if err != nil {
			return false, err
		}
		return len(r.Responses) == 1, fmt.Errorf("%+v", r)
	})

	// Graceful termination of a pod that ignores SIGTERM: it shows as
	// terminating (its endpoint serving and terminating) for the grace
	// period, then SIGKILL, the network goes, the pod is deleted.
	grace := int64(3)
	slow := netexecPod("slow", "ignore-term", "--http-port=8080", "--udp-port=8081")
	slow.Spec.TerminationGracePeriodSeconds = &grace
	if err := admin.Create(ctx, resPods, "default", slow); err != nil {
		t.Fatal(err)
	}
	slowSvc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "slow", Namespace: "default"},
		Spec: api.ServiceSpec{ClusterIP: api.ClusterIPNone, Selector: map[string]string{"app": "slow"},
			Ports: []api.ServicePort{{Name: "http", Port: 8080, TargetPort: api.FromInt32(8080), Protocol: api.ProtocolTCP}}}}
	if err := admin.Create(ctx, resServices, "default", slowSvc); err != nil {
		t.Fatal(err)
	}
	ps := waitPod(t, admin, "slow", 30*time.Second, "Ready", podReady)
	ipS := netip.MustParseAddr(ps.Status.PodIP)
	deleted := time.Now()
	if err := admin.Delete(ctx, resPods, "default", "slow", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "slow's endpoint serving and terminating", func() (bool, error) {
		var list api.EndpointSliceList
		if err := admin.List(ctx, resSlices, "default", client.ListOptions{LabelSelector: "kubernetes.io/service-name=slow"}, &list); err != nil {
			return false, err
		}
		for _, sl := range list.Items {
			for _, ep := range sl.Endpoints {
				c := ep.Conditions
				if c.Serving != nil && *c.Serving && c.Terminating != nil && *c.Terminating {
					return true, nil
				}
			}
		}
		return false, fmt.Errorf("%+v", list.Items)
	})
	// Still answering during the grace period (SIGTERM ignored).
	if got := n.get(t, "http://"+net.JoinHostPort(ipS.String(), "8080")+"/hostname"); got != "slow" {
		t.Fatalf("slow during its grace period: %q", got)
	}
	eventually(t, 15*time.Second, "slow deleted", func() (bool, error) {
		var p api.Pod
		err := admin.Get(ctx, resPods, "default", "slow", &p)
		return client.IsNotFound(err), err
	})
	took := time.Since(deleted)
	if took < time.Duration(grace)*time.Second || took > time.Duration(grace)*time.Second+5*time.Second {
		t.Fatalf("slow was deleted %v after the DELETE; its grace period is %ds", took, grace)
	}
	for _, c := range must(n.rt.List(ctx)) {
		if c.PodUID == string(ps.UID) {
			t.Fatalf("slow's container is still known to the runtime: %+v", c)
		}
	}
	if c, err := n.http().Get("http://" + net.JoinHostPort(ipS.String(), "8080") + "/hostname"); err == nil {
		c.Body.Close()
		t.Fatal("slow still answers after its deletion")
	}

	// Delete the rest; nothing is left (cleanup checks processes and
	// networks).
	for _, name := range []string{"a", "b"} {
		zero := int64(1)
		if err := admin.Delete(ctx, resPods, "default", name, client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "b"} {
		eventually(t, 15*time.Second, name+" deleted", func() (bool, error) {
			var p api.Pod
			err := admin.Get(ctx, resPods, "default", name, &p)
			return client.IsNotFound(err), err
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// pids are the running pod processes, sorted by container ID.
func pids(t *testing.T, rt *process.Runtime) []string {
	t.Helper()
	cs, err := rt.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		if c.State == runtime.StateRunning {
			if err := syscall.Kill(c.Pid, 0); err != nil {
				t.Fatalf("pid %d of %s: %v", c.Pid, c.ID, err)
			}
			out = append(out, fmt.Sprintf("%s=%d", c.ID, c.Pid))
		}
	}
	slices.Sort(out)
	return out
}

// watchReady calls notReady for every pod update that is not Ready,
// until the returned stop is called.
func watchReady(t *testing.T, c *client.Client, notReady func(*api.Pod)) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inf := client.NewInformer(c, resPods, client.InformerOptions{Namespace: "default"})
	inf.AddEventHandler(client.HandlerFuncs{UpdateFunc: func(_, obj api.Object) {
		if p := obj.(*api.Pod); p.DeletionTimestamp == nil && !podReady(p) {
			notReady(p)
		}
	}})
	done := make(chan struct{})
	go func() { _ = inf.Run(ctx); close(done) }()
	if !client.WaitForCacheSync(ctx, inf.HasSynced) {
		t.Fatal("pod informer did not sync")
	}
	return func() { cancel(); <-done }
}
