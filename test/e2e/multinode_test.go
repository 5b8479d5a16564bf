package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/cli"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/kubectl"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/podroutes"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/process"
	"github.com/skiff-dev/skiff/netexec"
	"github.com/skiff-dev/skiff/server/servertest"
)

// The multi-node LAN: a bridge in its own namespace, with the two nodes
// and an outside machine on it (addresses only inside the test's
// namespaces).
const (
	mnLANPrefix = 24
	mnExtIP     = "192.0.2.200"
	mnNodePort  = 30090
)

// The routed layout (vxlan): mn-b is on another network, behind a router
// namespace that is also on the LAN.
const (
	mnRouterLAN  = "192.0.2.1"
	mnRouterWAN  = "198.51.100.1"
	mnRoutedNode = "198.51.100.22"
)

// mnAgent is one node of the multi-node cluster: a namespace with an
// in-process agent (process runtime, iptables proxy).
type mnAgent struct {
	name    string
	ns      *netnstest.NS
	dataDir string
	agent   *netagent.Agent
	cancel  context.CancelFunc
	done    chan struct{}
}

type multiNode struct {
	t       *testing.T
	ips     map[string]string // node addresses
	s       *servertest.Server
	admin   *client.Client
	dataDir string
	lan     *netnstest.NS
	ext     *netnstest.NS
	nodes   map[string]*mnAgent
}

// lanPort makes a veth from ns (named ifName, addressed addr) to the LAN
// bridge, whose end is enslaved to it.
func lanPort(t *testing.T, lan, ns *netnstest.NS, br *netlink.Bridge, lanEnd, ifName, addr string) {
	t.Helper()
	hl := lan.Netlink(t)
	hn := ns.Netlink(t)
	nsh, err := vnetns.GetFromPath(ns.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer nsh.Close()
	if err := hl.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: lanEnd, MasterIndex: br.Index}, PeerName: ifName,
		PeerNamespace: netlink.NsFd(int(nsh))}); err != nil {
		t.Fatalf("veth %s <-> %s/%s: %v", lanEnd, ns.Name, ifName, err)
	}
	le, err := hl.LinkByName(lanEnd)
	if err != nil {
		t.Fatal(err)
	}
	if err := hl.LinkSetUp(le); err != nil {
		t.Fatal(err)
	}
	ne, err := hn.LinkByName(ifName)
	if err != nil {
		t.Fatal(err)
	}
	a := netip.PrefixFrom(netip.MustParseAddr(addr), mnLANPrefix)
	if err := hn.AddrAdd(ne, &netlink.Addr{IPNet: netnstest.IPNet(a)}); err != nil {
		t.Fatal(err)
	}
	if err := hn.LinkSetUp(ne); err != nil {
		t.Fatal(err)
	}
}

// newMultiNode builds the cluster; routed puts mn-b on another network
// behind a router (so its address is not on-link for mn-a).
func newMultiNode(t *testing.T, mode, routes string, routed bool) *multiNode {
	t.Helper()
	requireRoot(t)
	m := &multiNode{t: t, dataDir: t.TempDir(), lan: netnstest.New(t, "lan"), ext: netnstest.New(t, "ext"), nodes: map[string]*mnAgent{},
		ips: map[string]string{"mn-a": "192.0.2.21", "mn-b": "192.0.2.22"}}
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "lan0"}}
	hl := m.lan.Netlink(t)
	if err := hl.LinkAdd(br); err != nil {
		t.Fatalf("lan bridge: %v", err)
	}
	if err := hl.LinkSetUp(br); err != nil {
		t.Fatal(err)
	}
	lanPort(t, m.lan, m.ext, br, "p-ext", "eth0", mnExtIP)
	// The namespaces first: cleanups run last-in first-out, and m.cleanup
	// needs them.
	for _, name := range []string{"mn-a", "mn-b"} {
		n := &mnAgent{name: name, ns: netnstest.New(t, name), dataDir: t.TempDir()}
		if !routed || name == "mn-a" {
			lanPort(t, m.lan, n.ns, br, "p-"+name, "eth0", m.ips[name])
		}
		m.nodes[name] = n
	}
	if routed {
		m.ips["mn-b"] = mnRoutedNode
		rtr := netnstest.New(t, "rtr")
		lanPort(t, m.lan, rtr, br, "p-rtr", "eth0", mnRouterLAN)
		netnstest.Connect(t,
			netnstest.End{NS: m.nodes["mn-b"].ns, Name: "eth0", Addr: netip.MustParsePrefix(mnRoutedNode + "/24")},
			netnstest.End{NS: rtr, Name: "eth1", Addr: netip.MustParsePrefix(mnRouterWAN + "/24")})
		if err := rtr.Do(func() error { return os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644) }); err != nil {
			t.Fatalf("router: ip_forward: %v", err)
		}
		for ns, gw := range map[*netnstest.NS]string{m.nodes["mn-a"].ns: mnRouterLAN, m.ext: mnRouterLAN, m.nodes["mn-b"].ns: mnRouterWAN} {
			if err := ns.Netlink(t).RouteAdd(&netlink.Route{Dst: netnstest.IPNet(netip.MustParsePrefix("0.0.0.0/0")), Gw: net.ParseIP(gw)}); err != nil {
				t.Fatalf("%s: default route via %s: %v", ns.Name, gw, err)
			}
		}
	}

	s := servertest.Start(t, servertest.Options{DataDir: m.dataDir, Logger: testLog()})
	m.s, m.admin = s, s.Client()
	t.Cleanup(m.cleanup)
	clusterCIDR := netip.MustParsePrefix(s.Config().ClusterCIDR)
	for _, name := range []string{"mn-a", "mn-b"} {
		n := m.nodes[name]
		rt, err := process.New(process.Config{StateDir: filepath.Join(n.dataDir, "runtime", "process")})
		if err != nil {
			t.Fatal(err)
		}
		a, err := netagent.New(netagent.Config{
			Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
			NodeName: name, NodeIPs: []netip.Addr{netip.MustParseAddr(m.ips[name])},
			DataDir: n.dataDir, Runtime: "process", ProxyMode: mode, ClusterCIDR: clusterCIDR, PodRoutes: routes,
			DNSUpstreams: []string{"127.0.0.1:1"}, RelistPeriod: 200 * time.Millisecond,
			Logger: testLog().With("node", name),
		}, netagent.Deps{Runtime: rt, NodeNetNS: n.ns.Do, Proxy: netagent.RunProxy})
		if err != nil {
			t.Fatal(err)
		}
		actx, acancel := context.WithCancel(context.Background())
		n.agent, n.cancel, n.done = a, acancel, make(chan struct{})
		go func() {
			defer close(n.done)
			if err := a.Run(actx); err != nil && actx.Err() == nil {
				t.Errorf("agent %s: %v", name, err)
			}
		}()
	}
	for _, n := range m.nodes {
		select {
		case <-n.agent.Ready():
		case <-time.After(30 * time.Second):
			t.Fatalf("agent %s not Ready", n.name)
		}
	}
	return m
}

// stop stops a node's agent (its pods keep running until cleanup).
func (n *mnAgent) stop() {
	if n.cancel != nil {
		n.cancel()
		<-n.done
		n.cancel = nil
	}
}

// cleanup deletes the pods through the API while the agents run, stops
// them and the server, then removes by PID and path whatever is left.
func (m *multiNode) cleanup() {
	ctx := context.Background()
	_, _ = m.cli("delete", "pods", "--all", "-A", "--grace-period=1")
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var l api.PodList
		if err := m.admin.List(ctx, resPods, "", client.ListOptions{}, &l); err != nil || len(l.Items) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, n := range m.nodes {
		n.stop()
	}
	m.s.Stop()
	for _, n := range m.nodes {
		rt, err := process.New(process.Config{StateDir: filepath.Join(n.dataDir, "runtime", "process")})
		if err == nil {
			cs, _ := rt.List(ctx)
			for _, ct := range cs {
				if ct.State == runtime.StateRunning {
					m.t.Logf("%s: pod process %s/%s (pid %d) still running at the end: killed", n.name, ct.PodUID, ct.Name, ct.Pid)
					_ = rt.Stop(ctx, ct.ID, 0)
				}
				_ = rt.Remove(ctx, ct.ID)
			}
		}
		if n.agent == nil {
			continue
		}
		pc := n.agent.PodCIDR()
		if !pc.IsValid() {
			continue
		}
		nw, err := cni.New(cni.Config{DataDir: n.dataDir, PodCIDR: pc, ServiceCIDR: netip.MustParsePrefix("10.96.0.0/16")})
		if err == nil {
			_ = n.ns.Do(func() error {
				uids, _ := nw.Pods(ctx)
				for _, u := range uids {
					m.t.Logf("%s: pod network %s still there at the end: removed", n.name, u)
					_ = nw.DelPod(ctx, u)
				}
				return nil
			})
		}
	}
}

// cli runs the skiff CLI in-process with the admin kubeconfig; in is its
// stdin.
func (m *multiNode) cli(in string, args ...string) (string, error) {
	var out bytes.Buffer
	kc := filepath.Join(m.dataDir, "admin.kubeconfig")
	env := kubectl.Env{In: strings.NewReader(in), Out: &out, ErrOut: &out,
		Getenv: func(k string) string {
			if k == "KUBECONFIG" {
				return kc
			}
			return ""
		}}
	root := cli.NewRootWith(cli.Runners{}, env)
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		return out.String(), fmt.Errorf("skiff %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// skiffRoutes are node's Skiff routes ("dst via gw").
func (m *multiNode) skiffRoutes(node string) []string {
	m.t.Helper()
	h := m.nodes[node].ns.Netlink(m.t)
	rs, err := h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Protocol: podroutes.Protocol}, netlink.RT_FILTER_PROTOCOL)
	if err != nil {
		m.t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("%v via %v", r.Dst, r.Gw))
	}
	return out
}

// mnWorkload: the backend pod runs on mn-b only, the client on mn-a only;
// backend-svc (ClusterIP) and backend-np (NodePort) have no endpoint on
// mn-a.
const mnWorkload = `
apiVersion: v1
kind: Pod
metadata: {name: backend, labels: {app: backend}}
spec:
  nodeName: mn-b
  containers:
  - name: netexec
    image: skiff
    command: [skiff, netexec, --http-port=8080, --udp-port=8081]
    env:
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
    ports:
    - {name: http, containerPort: 8080}
    readinessProbe:
      httpGet: {path: /healthz, port: http}
      periodSeconds: 1
---
apiVersion: v1
kind: Pod
metadata: {name: client, labels: {app: client}}
spec:
  nodeName: mn-a
  containers:
  - name: netexec
    image: skiff
    command: [skiff, netexec, --http-port=8080, --udp-port=8081]
    env:
    - name: POD_NAME
      valueFrom: {fieldRef: {fieldPath: metadata.name}}
---
apiVersion: v1
kind: Service
metadata: {name: backend-svc}
spec:
  selector: {app: backend}
  ports:
  - {port: 80, targetPort: 8080}
---
apiVersion: v1
kind: Service
metadata: {name: backend-np}
spec:
  type: NodePort
  selector: {app: backend}
  ports:
  - {port: 80, targetPort: 8080, nodePort: 30090}
`

// podDial has the client pod (on mn-a) request /hostname from host:port
// once through its /dial.
func (m *multiNode) podDial(clientIP, host string, port int) (string, error) {
	return m.podRequest(clientIP, host, port, "hostname")
}

// podRequest is podDial for another netexec request (clientip).
func (m *multiNode) podRequest(clientIP, host string, port int, request string) (string, error) {
	q := url.Values{"host": {host}, "port": {fmt.Sprint(port)}, "request": {request}, "protocol": {"http"}, "tries": {"1"}}
	body, err := get(httpIn(m.nodes["mn-a"].ns, 10*time.Second), fmt.Sprintf("http://%s/dial?%s", net.JoinHostPort(clientIP, "8080"), q.Encode()))
	if err != nil {
		return "", err
	}
	var r netexec.DialResult
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return "", fmt.Errorf("dial answer %q: %w", body, err)
	}
	if len(r.Errors) > 0 {
		return "", fmt.Errorf("dial %s:%d: %v", host, port, r.Errors)
	}
	return strings.Join(r.Responses, ","), nil
}

// sourceIP is the address backend at host:port saw the client pod's
// request come from.
func (m *multiNode) sourceIP(t *testing.T, clientIP, host string, port int) string {
	t.Helper()
	got, err := m.podRequest(clientIP, host, port, "clientip")
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := net.SplitHostPort(got)
	if err != nil {
		t.Fatalf("clientip answer %q: %v", got, err)
	}
	return h
}

// TestMultiNodeHostGW: two agents on one LAN, pods on both; the host-gw
// routes carry pod-to-pod, ClusterIP and NodePort traffic across nodes,
// and follow the Nodes. Once per proxy mode that masquerades with rules
// (iptables, nftables), and once with --pod-routes vxlan and the nodes on
// two networks joined by a router (where host-gw cannot work: the agents
// log "not on-link").
func TestMultiNodeHostGW(t *testing.T) {
	for _, c := range []struct {
		proxy, routes string
		routed        bool
	}{{"iptables", "host-gw", false}, {"nftables", "host-gw", false}, {"iptables", "vxlan", true}} {
		name := c.proxy + "/" + c.routes
		if c.routed {
			name += "/routed"
		}
		t.Run(name, func(t *testing.T) { testMultiNode(t, c.proxy, c.routes, c.routed) })
	}
}

func testMultiNode(t *testing.T, mode, routes string, routed bool) {
	if routes == "vxlan" {
		requireVXLAN(t)
	}
	m := newMultiNode(t, mode, routes, routed)
	ctx := context.Background()
	cidrs := map[string]string{}
	for name := range m.nodes {
		cidrs[name] = m.nodes[name].agent.PodCIDR().String()
	}
	t.Logf("podCIDRs: %v", cidrs)
	wantA := cidrs["mn-b"] + " via " + m.ips["mn-b"]
	wantB := cidrs["mn-a"] + " via " + m.ips["mn-a"]
	if routes == "vxlan" { // via the peer's VTEP address, through skiff.vxlan
		wantA = cidrs["mn-b"] + " via " + netip.MustParsePrefix(cidrs["mn-b"]).Addr().String()
		wantB = cidrs["mn-a"] + " via " + netip.MustParsePrefix(cidrs["mn-a"]).Addr().String()
	}
	eventually(t, 10*time.Second, "a route to each other node's pods", func() (bool, error) {
		a, b := m.skiffRoutes("mn-a"), m.skiffRoutes("mn-b")
		return len(a) == 1 && a[0] == wantA && len(b) == 1 && b[0] == wantB, fmt.Errorf("mn-a %q, mn-b %q", a, b)
	})

	if routes == "vxlan" {
		// The tunnel device, and pods' MTU leaving room for it.
		for name, n := range m.nodes {
			h := n.ns.Netlink(t)
			for dev, mtu := range map[string]int{podroutes.VXLANDevice: podroutes.DefaultVXLANMTU, cni.DefaultBridge: podroutes.DefaultVXLANMTU} {
				l, err := h.LinkByName(dev)
				if err != nil {
					t.Fatalf("%s: %s: %v", name, dev, err)
				}
				if l.Attrs().MTU != mtu {
					t.Fatalf("%s: %s MTU %d, want %d", name, dev, l.Attrs().MTU, mtu)
				}
			}
		}
	}

	if _, err := m.cli(mnWorkload, "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	var backendIP, clientIP string
	eventually(t, 30*time.Second, "backend Ready on mn-b and client Running on mn-a", func() (bool, error) {
		var b, c api.Pod
		if err := m.admin.Get(ctx, resPods, "default", "backend", &b); err != nil {
			return false, err
		}
		if err := m.admin.Get(ctx, resPods, "default", "client", &c); err != nil {
			return false, err
		}
		backendIP, clientIP = b.Status.PodIP, c.Status.PodIP
		return api.IsPodReady(&b) && c.Status.Phase == "Running" && clientIP != "", fmt.Errorf("backend %s ready=%v, client %s %s", backendIP, api.IsPodReady(&b), c.Status.Phase, clientIP)
	})
	for ip, name := range map[string]string{backendIP: "mn-b", clientIP: "mn-a"} {
		if !netip.MustParsePrefix(cidrs[name]).Contains(netip.MustParseAddr(ip)) {
			t.Fatalf("pod IP %s is not in %s's podCIDR %s", ip, name, cidrs[name])
		}
	}

	t.Run("pod to pod", func(t *testing.T) {
		eventually(t, 10*time.Second, "client on mn-a reaches backend on mn-b by pod IP", func() (bool, error) {
			got, err := m.podDial(clientIP, backendIP, 8080)
			return got == "backend", fmt.Errorf("%q, %v", got, err)
		})
		// Between pod CIDRs nothing is masqueraded.
		if src := m.sourceIP(t, clientIP, backendIP, 8080); src != clientIP {
			t.Fatalf("backend saw the client pod as %s, want its pod IP %s", src, clientIP)
		}
	})
	t.Run("ClusterIP with endpoints only on the other node", func(t *testing.T) {
		var svc api.Service
		if err := m.admin.Get(ctx, resServices, "default", "backend-svc", &svc); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "client on mn-a reaches backend-svc's ClusterIP", func() (bool, error) {
			got, err := m.podDial(clientIP, svc.Spec.ClusterIP, 80)
			return got == "backend", fmt.Errorf("%q, %v", got, err)
		})
		if src := m.sourceIP(t, clientIP, svc.Spec.ClusterIP, 80); src != clientIP {
			t.Fatalf("through the ClusterIP, backend saw the client pod as %s, want its pod IP %s", src, clientIP)
		}
		// And by name, through mn-a's node DNS.
		eventually(t, 10*time.Second, "client on mn-a reaches backend-svc by name", func() (bool, error) {
			got, err := m.podDial(clientIP, "backend-svc", 80)
			return got == "backend", fmt.Errorf("%q, %v", got, err)
		})
	})
	t.Run("NodePort on the node without the pod", func(t *testing.T) {
		hc := httpIn(m.ext, 5*time.Second)
		for _, node := range []string{"mn-a", "mn-b"} {
			u := fmt.Sprintf("http://%s/hostname", net.JoinHostPort(m.ips[node], fmt.Sprint(mnNodePort)))
			eventually(t, 10*time.Second, "the outside reaches backend through "+node+"'s NodePort", func() (bool, error) {
				got, err := get(hc, u)
				return got == "backend", fmt.Errorf("%q, %v", got, err)
			})
			// Policy Cluster: masqueraded to the entry node (to the
			// address it leaves by: on mn-a its LAN address, or its
			// vxlan device's, on mn-b its bridge's), so that the reply
			// goes back through it.
			got, err := get(hc, fmt.Sprintf("http://%s/clientip", net.JoinHostPort(m.ips[node], fmt.Sprint(mnNodePort))))
			if err != nil {
				t.Fatal(err)
			}
			want := m.ips[node]
			if routes == "vxlan" {
				want = netip.MustParsePrefix(cidrs[node]).Addr().String()
			}
			if node == "mn-b" {
				want = m.nodes[node].agent.Gateway().String()
			}
			if h, _, _ := net.SplitHostPort(got); h != want {
				t.Fatalf("through %s's NodePort, backend saw the client as %q, want %s", node, got, want)
			}
		}
	})
	t.Run("deleting a Node removes the routes to it", func(t *testing.T) {
		// The pods go first (while both agents run), then mn-b's agent
		// stops (else it registers its Node again) and its Node is deleted.
		if _, err := m.cli("", "delete", "pods", "--all", "--grace-period=1"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, "pods gone", func() (bool, error) {
			var l api.PodList
			err := m.admin.List(ctx, resPods, "", client.ListOptions{}, &l)
			return err == nil && len(l.Items) == 0, err
		})
		m.nodes["mn-b"].stop()
		if err := m.admin.Delete(ctx, resNodes, "", "mn-b", client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "mn-a's route to mn-b gone", func() (bool, error) {
			a := m.skiffRoutes("mn-a")
			return len(a) == 0, fmt.Errorf("mn-a still has %q", a)
		})
		// mn-b's agent is stopped: its route to mn-a stays (pods keep
		// running when an agent stops); it was never touched by mn-a.
		if b := m.skiffRoutes("mn-b"); len(b) != 1 || b[0] != wantB {
			t.Fatalf("mn-b's routes: %q, want [%s]", b, wantB)
		}
	})
}

// requireVXLAN skips unless the kernel makes vxlan devices (tried in a
// namespace of the test's own).
func requireVXLAN(t *testing.T) {
	t.Helper()
	requireRoot(t)
	ns := netnstest.New(t, "vxlan-probe")
	h := ns.Netlink(t)
	if err := h.LinkAdd(&netlink.Vxlan{LinkAttrs: netlink.LinkAttrs{Name: "probe0"}, VxlanId: 42, Port: 8472}); err != nil {
		t.Skipf("needs vxlan devices (kernel module vxlan): %v", err)
	}
}
