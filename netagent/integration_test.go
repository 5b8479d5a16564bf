package netagent_test

import (
	"context"
	"net/netip"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/server"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resources   = api.Resources()
	resPods     = api.Lookup(resources, "v1", "pods")
	resNodes    = api.Lookup(resources, "v1", "nodes")
	resServices = api.Lookup(resources, "v1", "services")
	resLeases   = api.Lookup(resources, "coordination.k8s.io/v1", "leases")
)

// startServer runs a control plane (no built-in agent) for the test
// (server/servertest).
func startServer(t testing.TB) *server.Server {
	t.Helper()
	return servertest.Start(t, servertest.Options{}).Server()
}

// runningAgent is an in-process agent over fakes.
type runningAgent struct {
	*netagent.Agent
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned
	err    error
}

func (r *runningAgent) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case <-r.done:
		if r.err != nil {
			t.Fatalf("agent Run: %v", r.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the agent did not stop")
	}
}

func startAgent(t *testing.T, s *server.Server, cfg netagent.Config, deps netagent.Deps) *runningAgent {
	t.Helper()
	if deps.NodeNetNS == nil && cfg.PodRoutes != netagent.PodRoutesNone {
		// Its pod routes would go into the machine's own namespace.
		t.Fatalf("an agent under test without Deps.NodeNetNS must have PodRoutes %q", netagent.PodRoutesNone)
	}
	a, err := netagent.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningAgent{Agent: a, cancel: cancel, done: make(chan struct{})}
	go func() { r.err = a.Run(ctx); close(r.done) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	select {
	case <-a.Ready():
	case <-r.done:
		t.Fatalf("agent stopped before Ready: %v", r.err)
	case <-time.After(30 * time.Second):
		t.Fatal("agent not Ready after 30s")
	}
	return r
}

func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not true after %v (last error: %v)", what, d, last)
}

func podReady(p *api.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == api.PodReady {
			return c.Status == api.ConditionTrue
		}
	}
	return false
}

func TestAgentAgainstServer(t *testing.T) {
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	log := netagent.NewCallLog()
	rt := netagent.NewFakeRuntime(log)
	var net *netagent.FakeNet
	var netMu sync.Mutex
	newNet := netagent.NewFakeNetwork(log, func(n *netagent.FakeNet) { netMu.Lock(); net = n; netMu.Unlock() })
	dataDir := t.TempDir()
	cfg := netagent.Config{
		Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
		NodeName: "node-a", NodeIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")},
		DataDir: dataDir, Runtime: "fake", DNSListenAddr: "127.0.0.1:0", DNSUpstreams: []string{},
		PodRoutes:          netagent.PodRoutesNone, // no node netns: no routes in the machine's namespace
		LeaseRenewInterval: 500 * time.Millisecond, RelistPeriod: 100 * time.Millisecond,
	}
	deps := netagent.Deps{Runtime: rt, NewPodNetwork: newNet}
	ag := startAgent(t, s, cfg, deps)

	// The Node: labels, addresses, capacity, nodeInfo, podCIDR, Ready.
	var node api.Node
	eventually(t, 10*time.Second, "node Ready", func() (bool, error) {
		err := admin.Get(ctx, resNodes, "", "node-a", &node)
		return err == nil && len(node.Status.Conditions) > 0 && node.Status.Conditions[0].Status == api.ConditionTrue, err
	})
	podCIDR := netip.MustParsePrefix(node.Spec.PodCIDR)
	if ag.PodCIDR() != podCIDR || podCIDR.Bits() != 24 || !netip.MustParsePrefix("10.244.0.0/16").Contains(podCIDR.Addr()) {
		t.Fatalf("podCIDR %s (agent says %s)", node.Spec.PodCIDR, ag.PodCIDR())
	}
	if node.Labels[netagent.LabelHostname] != "node-a" || node.Labels[netagent.LabelOS] != "linux" ||
		node.Labels[netagent.LabelOSBeta] != "linux" || node.Labels[netagent.LabelArch] != goruntime.GOARCH ||
		node.Labels[netagent.LabelArchBeta] != goruntime.GOARCH ||
		node.Status.Capacity["pods"] != "110" || node.Status.Allocatable["cpu"] == "" ||
		node.Status.NodeInfo.KubeletVersion == "" || node.Status.NodeInfo.ContainerRuntimeVersion == "" {
		t.Fatalf("node: labels %v status %+v", node.Labels, node.Status)
	}
	if len(node.Status.Addresses) != 2 || node.Status.Addresses[0] != (api.NodeAddress{Type: api.NodeInternalIP, Address: "192.0.2.10"}) ||
		node.Status.Addresses[1] != (api.NodeAddress{Type: api.NodeHostName, Address: "node-a"}) {
		t.Fatalf("addresses %+v", node.Status.Addresses)
	}
	// The Lease is renewed.
	var l1, l2 api.Lease
	if err := admin.Get(ctx, resLeases, netagent.LeaseNamespace, "node-a", &l1); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "lease renewed", func() (bool, error) {
		err := admin.Get(ctx, resLeases, netagent.LeaseNamespace, "node-a", &l2)
		return err == nil && l2.Spec.RenewTime.After(l1.Spec.RenewTime.Time), err
	})
	if len(l2.OwnerReferences) != 1 || l2.OwnerReferences[0].Kind != "Node" {
		t.Fatalf("lease owner %+v", l2.OwnerReferences)
	}

	// A pod the scheduler binds to the node runs and turns Ready.
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Image: "netexec", Command: []string{"netexec"},
			ReadinessProbe: &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"ready"}}}, PeriodSeconds: 1}}}}}
	if err := admin.Create(ctx, resPods, "default", pod); err != nil {
		t.Fatal(err)
	}
	var p api.Pod
	eventually(t, 20*time.Second, "pod Ready", func() (bool, error) {
		err := admin.Get(ctx, resPods, "default", "web", &p)
		return err == nil && podReady(&p), err
	})
	ip := netip.MustParseAddr(p.Status.PodIP)
	if !podCIDR.Contains(ip) || p.Spec.NodeName != "node-a" || p.Status.HostIP != "192.0.2.10" || p.Status.Phase != api.PodRunning {
		t.Fatalf("pod status %+v on %s", p.Status, p.Spec.NodeName)
	}
	// Readiness flips both ways through the real API.
	rt.SetHealth("web", "app", "ready", false)
	eventually(t, 10*time.Second, "pod not Ready", func() (bool, error) {
		err := admin.Get(ctx, resPods, "default", "web", &p)
		return err == nil && !podReady(&p), err
	})
	rt.SetHealth("web", "app", "ready", true)
	eventually(t, 10*time.Second, "pod Ready again", func() (bool, error) {
		err := admin.Get(ctx, resPods, "default", "web", &p)
		return err == nil && podReady(&p), err
	})

	// The node DNS answers cluster names from the agent's own caches.
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: api.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt32(8080), Protocol: api.ProtocolTCP}}}}
	if err := admin.Create(ctx, resServices, "default", svc); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "DNS answers web.default.svc.cluster.local", func() (bool, error) {
		m := new(mdns.Msg)
		m.SetQuestion("web.default.svc.cluster.local.", mdns.TypeA)
		r, err := mdns.Exchange(m, ag.DNSAddr())
		if err != nil || r.Rcode != mdns.RcodeSuccess || len(r.Answer) != 1 {
			return false, err
		}
		return r.Answer[0].(*mdns.A).A.String() == svc.Spec.ClusterIP, nil
	})

	// An agent restart adopts the pod: no new start, same IP, still Ready.
	starts := rt.Starts()
	ag.stop(t)
	ag = startAgent(t, s, cfg, deps)
	time.Sleep(2 * time.Second)
	if rt.Starts() != starts {
		t.Fatalf("the restarted agent started %d containers", rt.Starts()-starts)
	}
	if err := admin.Get(ctx, resPods, "default", "web", &p); err != nil || p.Status.PodIP != ip.String() || !podReady(&p) {
		t.Fatalf("after the agent restart: %v ip %s ready %v", err, p.Status.PodIP, podReady(&p))
	}

	// Graceful deletion through the API: terminating, then gone.
	grace := int64(2)
	if err := admin.Delete(ctx, resPods, "default", "web", client.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "pod deleted", func() (bool, error) {
		err := admin.Get(ctx, resPods, "default", "web", &p)
		return client.IsNotFound(err), nil
	})
	if log.Find("sigterm web/app", 0) < 0 {
		t.Fatalf("no SIGTERM:\n%s", strings.Join(log.Calls(), "\n"))
	}
	netMu.Lock()
	defer netMu.Unlock()
	if net.Has(string(p.UID)) || len(rt.Running("web")) != 0 {
		t.Fatal("the deleted pod left a network or a container")
	}
}
