package proxytest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/proxy"
)

// BackendFactory makes the backend under test, programming node.
type BackendFactory func(t testing.TB, node *Node) proxy.Backend

// Kernel is a running proxy on a simulated node: Services and
// EndpointSlices go in through Cluster, the Proxier programs the backend
// in the node namespace, and the cases send real traffic between the
// namespaces.
type Kernel struct {
	Node    *Node
	Cluster *Cluster
	Rec     *Recorder
	Proxier *proxy.Proxier
	t       *testing.T
}

// StartKernel builds a node with pods pod0..pod5 (10.244.0.2-7) and runs
// a Proxier over the backend newBackend makes. At the end of the test it
// checks that the machine's own iptables did not change.
func StartKernel(t *testing.T, newBackend BackendFactory) *Kernel {
	t.Helper()
	netnstest.RequireRoot(t)
	before := HostRules(t)
	t.Cleanup(func() {
		if after := HostRules(t); after != before {
			t.Errorf("the machine's own iptables changed during the test:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
	node := NewNode(t)
	for i := range 6 {
		node.AddPod("pod"+strconv.Itoa(i), netip.AddrFrom4([4]byte{10, 244, 0, byte(2 + i)}))
	}
	k := &Kernel{Node: node, Cluster: NewCluster(), t: t}
	k.Rec = &Recorder{Next: newBackend(t, node)}
	p, err := proxy.New(proxy.Config{
		NodeName:      NodeName,
		NodeIPs:       []netip.Addr{NodeIP},
		ClusterCIDR:   ClusterCIDR,
		ServiceCIDR:   ServiceCIDR,
		MinSyncPeriod: 10 * time.Millisecond,
		Conntrack:     node.Conntrack(t),
		Listen:        node.Listen,
	}, k.Rec, k.Cluster.Services, k.Cluster.Slices, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	k.Proxier = p
	k.Cluster.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	k.Rec.WaitFor(t, 0, func(Call) bool { return true })
	return k
}

// Apply sets objects and waits until a sync programmed port with want
// endpoints (ready or not).
func (k *Kernel) Apply(t testing.TB, port proxy.ServicePortName, want int, objs ...api.Object) {
	t.Helper()
	n := len(k.Rec.Calls())
	for _, o := range objs {
		k.Cluster.Apply(o)
	}
	_, i := k.Rec.WaitForIndex(t, n, func(c Call) bool { return c.Services[port] != nil && len(c.Endpoints[port]) == want })
	// The backend has the rules; wait for the rest of that sync (health
	// checks, conntrack clean-up) too.
	deadline := time.Now().Add(10 * time.Second)
	for k.Proxier.Syncs() < uint64(i+1) {
		if time.Now().After(deadline) {
			t.Fatalf("sync %d did not complete", i)
		}
		time.Sleep(time.Millisecond)
	}
}

// PodEP is the endpoint of pod i (ready, on this node).
func PodEP(i int) EP { return EP{IP: fmt.Sprintf("10.244.0.%d", 2+i), Node: NodeName} }

// answers sends n requests with ask and counts the answering pods.
func answers(t testing.TB, n int, ask func() (string, error)) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for range n {
		out, err := ask()
		if err != nil {
			t.Fatalf("request failed: %v (answers so far %v)", err, seen)
		}
		name, _, _ := strings.Cut(out, " ")
		seen[name]++
	}
	return seen
}

// expectPods checks that the answers came from exactly want.
func expectPods(t testing.TB, seen map[string]int, want ...string) {
	t.Helper()
	var got []string
	for p := range seen {
		got = append(got, p)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("answered by %v, want exactly %v", seen, want)
	}
}

var httpPort = []api.EndpointPort{SlicePort("http", PodHTTPPort, api.ProtocolTCP)}

func portName(ns, name, port, proto string) proxy.ServicePortName {
	return proxy.ServicePortName{Namespace: ns, Name: name, Port: port, Protocol: proto}
}

// KernelCase is one real-kernel case, shared by every proxy mode.
type KernelCase struct {
	Name string
	Run  func(t *testing.T, k *Kernel)
}

// KernelCases are the real-kernel cases that every proxy mode must pass.
var KernelCases = []KernelCase{
	{"ClusterIP from a pod and from the node", func(t *testing.T, k *Kernel) {
		svc := Service("e2e", "web", "10.96.0.10", TCP("http", 80))
		sl := Slice("e2e", "web", "web-1", httpPort, PodEP(0), PodEP(1), PodEP(2))
		k.Apply(t, portName("e2e", "web", "http", "TCP"), 3, svc, sl)
		ask := func(ns *NetNS) func() (string, error) {
			return func() (string, error) { return HTTPGet(ns, "http://10.96.0.10/") }
		}
		expectPods(t, answers(t, 60, ask(k.Node.Pods[5].NetNS)), "pod0", "pod1", "pod2")
		expectPods(t, answers(t, 60, ask(k.Node.NetNS)), "pod0", "pod1", "pod2")
	}},
	{"NodePort from outside through the node address", func(t *testing.T, k *Kernel) {
		svc := Service("e2e", "np", "10.96.0.11", TCP("http", 80))
		svc.Spec.Type = api.ServiceTypeNodePort
		svc.Spec.Ports[0].NodePort = 30080
		sl := Slice("e2e", "np", "np-1", httpPort, PodEP(0), PodEP(1))
		k.Apply(t, portName("e2e", "np", "http", "TCP"), 2, svc, sl)
		seen := map[string]int{}
		for range 40 {
			out, err := HTTPGet(k.Node.Client, "http://192.168.77.1:30080/")
			if err != nil {
				t.Fatal(err)
			}
			name, from, _ := strings.Cut(out, " ")
			seen[name]++
			// Cluster policy: masqueraded to the node's bridge address.
			if !strings.HasPrefix(from, Gateway.String()+":") {
				t.Errorf("%s saw the client as %s, want the masqueraded %s", name, from, Gateway)
			}
		}
		expectPods(t, seen, "pod0", "pod1")
	}},
	{"hairpin: a pod reaching itself through its Service", func(t *testing.T, k *Kernel) {
		svc := Service("e2e", "self", "10.96.0.12", TCP("http", 80))
		sl := Slice("e2e", "self", "self-1", httpPort, PodEP(3))
		k.Apply(t, portName("e2e", "self", "http", "TCP"), 1, svc, sl)
		expectPods(t, answers(t, 20, func() (string, error) { return HTTPGet(k.Node.Pods[3].NetNS, "http://10.96.0.12/") }), "pod3")
	}},
	{"Local policy keeps the client IP; health check node port", func(t *testing.T, k *Kernel) {
		svc := Service("e2e", "local", "10.96.0.13", TCP("http", 80))
		svc.Spec.Type = api.ServiceTypeLoadBalancer
		svc.Spec.Ports[0].NodePort = 30081
		svc.Spec.ExternalTrafficPolicy = api.ServiceTrafficPolicyLocal
		svc.Spec.HealthCheckNodePort = 32081
		// pod1 is local; 10.244.9.9 is on another node (unreachable here).
		sl := Slice("e2e", "local", "local-1", httpPort, PodEP(1), EP{IP: "10.244.9.9", Node: "node-b"})
		k.Apply(t, portName("e2e", "local", "http", "TCP"), 2, svc, sl)
		for range 20 {
			out, err := HTTPGet(k.Node.Client, "http://192.168.77.1:30081/")
			if err != nil {
				t.Fatal(err)
			}
			name, from, _ := strings.Cut(out, " ")
			if name != "pod1" || !strings.HasPrefix(from, ClientIP.String()+":") {
				t.Fatalf("answer %q: want pod1 seeing the client address %s", out, ClientIP)
			}
		}
		body, err := waitHealth(k.Node.Client, "http://192.168.77.1:32081/", 200)
		if err != nil {
			t.Fatal(err)
		}
		var hc struct {
			Service        struct{ Namespace, Name string }
			LocalEndpoints int `json:"localEndpoints"`
		}
		if err := json.Unmarshal([]byte(body), &hc); err != nil || hc.LocalEndpoints != 1 || hc.Service.Name != "local" {
			t.Errorf("health check body %q (%v)", body, err)
		}
		// No local endpoint left: 503.
		sl2 := Slice("e2e", "local", "local-1", httpPort, EP{IP: "10.244.9.9", Node: "node-b"})
		k.Apply(t, portName("e2e", "local", "http", "TCP"), 1, sl2)
		if _, err := waitHealth(k.Node.Client, "http://192.168.77.1:32081/", 503); err != nil {
			t.Error(err)
		}
	}},
	{"no endpoints: connection refused at once", func(t *testing.T, k *Kernel) {
		svc := Service("e2e", "empty", "10.96.0.14", TCP("http", 80))
		k.Apply(t, portName("e2e", "empty", "http", "TCP"), 0, svc)
		for _, target := range []string{"10.96.0.14:80", "10.96.0.14:81", "10.96.77.77:80"} {
			for _, from := range []*NetNS{k.Node.Pods[5].NetNS, k.Node.NetNS} {
				start := time.Now()
				c, err := from.Dial("tcp", target, nil, 3*time.Second)
				if err == nil {
					c.Close()
					t.Fatalf("%s: connected", target)
				}
				if !errors.Is(err, syscall.ECONNREFUSED) {
					t.Errorf("%s from %s: %v, want connection refused", target, from.Name, err)
				}
				if d := time.Since(start); d > time.Second {
					t.Errorf("%s: refused after %v, want at once (ICMP reject, not a timeout)", target, d)
				}
			}
		}
	}},
	{"UDP Service after its endpoint changes", func(t *testing.T, k *Kernel) {
		svc := Service("e2e", "dns", "10.96.0.53", UDP("dns", 53))
		port := portName("e2e", "dns", "dns", "UDP")
		udpPort := []api.EndpointPort{SlicePort("dns", PodUDPPort, api.ProtocolUDP)}
		k.Apply(t, port, 1, svc, Slice("e2e", "dns", "dns-1", udpPort, PodEP(0)))
		for range 3 {
			if out, err := UDPAsk(k.Node.Pods[5].NetNS, "10.96.0.53:53", 40053); err != nil || !strings.HasPrefix(out, "pod0 ") {
				t.Fatalf("before the change: %q %v", out, err)
			}
		}
		// Same client socket address: only the conntrack clean-up lets
		// it reach the new endpoint (pod0 is still alive and answering).
		k.Apply(t, port, 1, Slice("e2e", "dns", "dns-1", udpPort, PodEP(1)))
		if out, err := UDPAsk(k.Node.Pods[5].NetNS, "10.96.0.53:53", 40053); err != nil || !strings.HasPrefix(out, "pod1 ") {
			t.Fatalf("after the change: %q %v, want pod1", out, err)
		}
	}},
	{"scale 3 to 5: every pod gets traffic", func(t *testing.T, k *Kernel) {
		svc := Service("e2e", "scale", "10.96.0.15", TCP("http", 80))
		port := portName("e2e", "scale", "http", "TCP")
		k.Apply(t, port, 3, svc, Slice("e2e", "scale", "scale-1", httpPort, PodEP(0), PodEP(1), PodEP(2)))
		ask := func() (string, error) { return HTTPGet(k.Node.Pods[5].NetNS, "http://10.96.0.15/") }
		expectPods(t, answers(t, 60, ask), "pod0", "pod1", "pod2")
		k.Apply(t, port, 5, Slice("e2e", "scale", "scale-1", httpPort, PodEP(0), PodEP(1), PodEP(2), PodEP(3), PodEP(4)))
		expectPods(t, answers(t, 100, ask), "pod0", "pod1", "pod2", "pod3", "pod4")
	}},
	{"session affinity sticks", func(t *testing.T, k *Kernel) {
		svc := Service("e2e", "sticky", "10.96.0.16", TCP("http", 80))
		svc.Spec.SessionAffinity = api.ServiceAffinityClientIP
		k.Apply(t, portName("e2e", "sticky", "http", "TCP"), 3, svc, Slice("e2e", "sticky", "sticky-1", httpPort, PodEP(0), PodEP(1), PodEP(2)))
		for _, from := range []*NetNS{k.Node.Pods[4].NetNS, k.Node.Pods[5].NetNS} {
			seen := answers(t, 30, func() (string, error) { return HTTPGet(from, "http://10.96.0.16/") })
			if len(seen) != 1 {
				t.Errorf("client %s reached %v, want one pod", from.Name, seen)
			}
		}
	}},
	{"a pod that fails readiness gets none", func(t *testing.T, k *Kernel) {
		svc := Service("e2e", "ready", "10.96.0.17", TCP("http", 80))
		notReady := PodEP(2)
		notReady.NotReady = true
		k.Apply(t, portName("e2e", "ready", "http", "TCP"), 3, svc, Slice("e2e", "ready", "ready-1", httpPort, PodEP(0), PodEP(1), notReady))
		expectPods(t, answers(t, 60, func() (string, error) { return HTTPGet(k.Node.Pods[5].NetNS, "http://10.96.0.17/") }), "pod0", "pod1")
	}},
}

// RunKernelCases runs every KernelCase against one node and proxy.
func RunKernelCases(t *testing.T, newBackend BackendFactory) *Kernel {
	k := StartKernel(t, newBackend)
	for _, c := range KernelCases {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, k) })
	}
	return k
}

// CheckRestart keeps an HTTP connection from pod5 to a Service of the
// KernelCases (10.96.0.15:80) open while a new backend from newBackend (as
// after an agent restart) does its first full sync of the last State over
// the rules the running one programmed: the connection stays with its pod,
// and new connections work.
func (k *Kernel) CheckRestart(t *testing.T, newBackend BackendFactory) {
	conn, err := k.Node.Pods[5].Dial("tcp", "10.96.0.15:80", nil, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	get := func() string {
		t.Helper()
		_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
		if _, err := fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
		return b.String()
	}
	first := get()
	calls := k.Rec.Calls()
	last := calls[len(calls)-1]
	st := &proxy.State{
		Services: last.Services, Endpoints: last.Endpoints, NodeName: NodeName,
		NodeIPs:     []netip.Addr{NodeIP},
		ClusterCIDR: ClusterCIDR, ServiceCIDR: ServiceCIDR,
	}
	if err := newBackend(t, k.Node).Sync(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	second := get()
	if !strings.HasPrefix(first, "pod") || !strings.HasPrefix(second, "pod") {
		t.Errorf("answers %q then %q", first, second)
	}
	if name := func(s string) string { n, _, _ := strings.Cut(s, " "); return n }; name(first) != name(second) {
		t.Errorf("the connection moved from %q to %q", first, second)
	}
	if out, err := HTTPGet(k.Node.Pods[5].NetNS, "http://10.96.0.15/"); err != nil || !strings.HasPrefix(out, "pod") {
		t.Errorf("after the restart: %q %v", out, err)
	}
}

// waitHealth polls a health check URL until it answers code.
func waitHealth(ns *NetNS, url string, code int) (string, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		body, status, err := httpStatus(ns, url)
		if err == nil && status == code {
			return body, nil
		}
		if time.Now().After(deadline) {
			return body, fmt.Errorf("GET %s: %d %v, want %d", url, status, err, code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func httpStatus(ns *NetNS, url string) (string, int, error) {
	c, err := ns.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"), nil, 2*time.Second)
	if err != nil {
		return "", 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := fmt.Fprintf(c, "GET / HTTP/1.0\r\nHost: x\r\n\r\n"); err != nil {
		return "", 0, err
	}
	var buf strings.Builder
	b := make([]byte, 4096)
	for {
		n, err := c.Read(b)
		buf.Write(b[:n])
		if err != nil {
			break
		}
	}
	resp := buf.String()
	head, body, _ := strings.Cut(resp, "\r\n\r\n")
	fields := strings.Fields(head)
	if len(fields) < 2 {
		return "", 0, fmt.Errorf("bad response %q", resp)
	}
	status, _ := strconv.Atoi(fields[1])
	return body, status, nil
}
