package ipvs_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables/iptablestest"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs"
	"github.com/skiff-dev/skiff/netagent/proxy/ipvs/ipvstest"
)

var (
	nodeIP      = netip.MustParseAddr("192.168.77.1")
	nodeIP2     = netip.MustParseAddr("192.168.78.1")
	clusterCIDR = netip.MustParsePrefix("10.244.0.0/16")
	serviceCIDR = netip.MustParsePrefix("10.96.0.0/16")
	env         = iptablestest.Env{LocalAddrs: []netip.Addr{nodeIP, nodeIP2, netip.MustParseAddr("10.244.0.1")}}
)

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// svcPort is a TCP Service port ns/name:http on port 80.
func svcPort(ns, name, vip string, mod func(*proxy.ServicePort)) *proxy.ServicePort {
	sp := &proxy.ServicePort{
		Name:       proxy.ServicePortName{Namespace: ns, Name: name, Port: "http", Protocol: "TCP"},
		ClusterIPs: []netip.Addr{addr(vip)},
		Port:       80,
		Protocol:   "TCP",
	}
	if mod != nil {
		mod(sp)
	}
	return sp
}

// eps returns ready endpoints on port 8080; a "+" suffix marks one local
// (on node-a), a "~" suffix one serving and terminating, not ready.
func eps(ips ...string) []proxy.Endpoint {
	var out []proxy.Endpoint
	for _, ip := range ips {
		e := proxy.Endpoint{Port: 8080, NodeName: "node-b", Ready: true, Serving: true}
		if s, ok := strings.CutSuffix(ip, "~"); ok {
			ip, e.Ready, e.Terminating = s, false, true
		}
		if s, ok := strings.CutSuffix(ip, "+"); ok {
			ip, e.NodeName, e.IsLocal = s, "node-a", true
		}
		e.IP = addr(ip)
		out = append(out, e)
	}
	return out
}

type svcEps struct {
	sp  *proxy.ServicePort
	eps []proxy.Endpoint
}

func state(svcs ...svcEps) *proxy.State {
	st := &proxy.State{
		Services:    map[proxy.ServicePortName]*proxy.ServicePort{},
		Endpoints:   map[proxy.ServicePortName][]proxy.Endpoint{},
		NodeName:    "node-a",
		NodeIPs:     []netip.Addr{nodeIP, nodeIP2},
		ClusterCIDR: clusterCIDR,
		ServiceCIDR: serviceCIDR,
	}
	for _, s := range svcs {
		st.Services[s.sp.Name] = s.sp
		st.Endpoints[s.sp.Name] = s.eps
	}
	return st
}

type rig struct {
	b     *ipvs.Backend
	ipvs  *ipvstest.Fake
	addrs *ipvstest.Addrs
	ipt   *iptablestest.Fake
	sysct map[string]string
}

func newRig(t testing.TB, sched string) *rig {
	t.Helper()
	r := &rig{ipvs: ipvstest.New(), addrs: ipvstest.NewAddrs(), ipt: iptablestest.New(iptables.ModeNFT), sysct: map[string]string{}}
	b, err := ipvs.New(context.Background(), ipvs.Config{
		IPVS: r.ipvs, Addrs: r.addrs, Exec: r.ipt, Mode: iptables.ModeNFT, Scheduler: sched,
		Sysctl: func(k, v string) error { r.sysct[k] = v; return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	r.b = b
	return r
}

func (r *rig) sync(t testing.TB, st *proxy.State, changed ...proxy.ServicePortName) {
	t.Helper()
	if changed == nil {
		if err := r.b.Sync(context.Background(), st, nil); err != nil {
			t.Fatalf("full sync: %v", err)
		}
		return
	}
	if err := r.b.Sync(context.Background(), st, changed); err != nil {
		t.Fatalf("partial sync: %v", err)
	}
}

// trace returns the single outcome of a packet through the iptables rules.
func (r *rig) trace(t testing.TB, p iptablestest.Packet) iptablestest.Outcome {
	t.Helper()
	if p.Proto == "" {
		p.Proto = "tcp"
	}
	if p.SPort == 0 {
		p.SPort = 40000
	}
	e := env
	as, _ := r.addrs.List()
	e.LocalAddrs = slices.Concat(env.LocalAddrs, as)
	out, err := r.ipt.Trace(e, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("trace %+v: %d outcomes %+v", p, len(out), out)
	}
	return out[0]
}

func (r *rig) bound() []string {
	as, _ := r.addrs.List()
	var out []string
	for _, a := range as {
		out = append(out, a.String())
	}
	return out
}

func lines(s ...string) string { return strings.Join(s, "\n") + "\n" }

func TestSyncServiceTypes(t *testing.T) {
	pod := addr("10.244.0.5")
	outside := addr("192.168.77.2")
	cases := []struct {
		name  string
		sched string
		svcs  []svcEps
		dump  string   // the IPVS table
		bound []string // addresses on the interface
		check func(t *testing.T, r *rig)
	}{
		{
			name:  "ClusterIP, rr",
			svcs:  []svcEps{{svcPort("ns", "web", "10.96.0.10", nil), eps("10.244.0.2", "10.244.1.2")}},
			dump:  lines("TCP 10.96.0.10:80 rr", "  -> 10.244.0.2:8080 w=1", "  -> 10.244.1.2:8080 w=1"),
			bound: []string{"10.96.0.10"},
			check: func(t *testing.T, r *rig) {
				// From a pod: accepted to the local VIP, not masqueraded.
				if o := r.trace(t, iptablestest.Packet{Src: pod, Dst: addr("10.96.0.10"), DPort: 80}); o.Verdict != "ACCEPT" || o.Mark != 0 {
					t.Errorf("pod -> VIP: %+v", o)
				}
				// From outside the cluster CIDR: marked for masquerade.
				if o := r.trace(t, iptablestest.Packet{Src: outside, Dst: addr("10.96.0.10"), DPort: 80}); o.Verdict != "ACCEPT" || o.Mark != 0x4000 {
					t.Errorf("outside -> VIP: %+v", o)
				}
				// An unknown port of the VIP, an unallocated ClusterIP: rejected.
				for _, p := range []iptablestest.Packet{{Src: pod, Dst: addr("10.96.0.10"), DPort: 81}, {Src: pod, Dst: addr("10.96.7.7"), DPort: 80}, {Src: nodeIP, Dst: addr("10.96.7.7"), DPort: 80, Local: true}} {
					if o := r.trace(t, p); o.Verdict != "REJECT" {
						t.Errorf("%+v: %+v, want REJECT", p, o)
					}
				}
			},
		},
		{
			name:  "scheduler lc",
			sched: "lc",
			svcs:  []svcEps{{svcPort("ns", "web", "10.96.0.10", nil), eps("10.244.0.2")}},
			dump:  lines("TCP 10.96.0.10:80 lc", "  -> 10.244.0.2:8080 w=1"),
			bound: []string{"10.96.0.10"},
		},
		{
			name: "NodePort on every node address, masqueraded",
			svcs: []svcEps{{svcPort("ns", "np", "10.96.0.11", func(sp *proxy.ServicePort) { sp.NodePort = 30080 }), eps("10.244.0.2")}},
			dump: lines("TCP 10.96.0.11:80 rr", "  -> 10.244.0.2:8080 w=1",
				"TCP 192.168.77.1:30080 rr", "  -> 10.244.0.2:8080 w=1",
				"TCP 192.168.78.1:30080 rr", "  -> 10.244.0.2:8080 w=1"),
			bound: []string{"10.96.0.11"},
			check: func(t *testing.T, r *rig) {
				if o := r.trace(t, iptablestest.Packet{Src: outside, Dst: nodeIP, DPort: 30080}); o.Verdict != "ACCEPT" || o.Mark != 0x4000 {
					t.Errorf("outside -> NodePort: %+v", o)
				}
			},
		},
		{
			name: "LoadBalancer with source ranges, external IP",
			svcs: []svcEps{{svcPort("ns", "lb", "10.96.0.12", func(sp *proxy.ServicePort) {
				sp.NodePort = 30081
				sp.LoadBalancerIPs = []netip.Addr{addr("203.0.113.7")}
				sp.ExternalIPs = []netip.Addr{addr("198.51.100.9"), nodeIP}
				sp.LoadBalancerSourceRanges = []netip.Prefix{netip.MustParsePrefix("192.168.77.0/24")}
			}), eps("10.244.0.2")}},
			dump: lines("TCP 10.96.0.12:80 rr", "  -> 10.244.0.2:8080 w=1",
				"TCP 192.168.77.1:30081 rr", "  -> 10.244.0.2:8080 w=1",
				"TCP 192.168.77.1:80 rr", "  -> 10.244.0.2:8080 w=1",
				"TCP 192.168.78.1:30081 rr", "  -> 10.244.0.2:8080 w=1",
				"TCP 198.51.100.9:80 rr", "  -> 10.244.0.2:8080 w=1",
				"TCP 203.0.113.7:80 rr", "  -> 10.244.0.2:8080 w=1"),
			// The node address given as an external IP is not bound again.
			bound: []string{"10.96.0.12", "198.51.100.9", "203.0.113.7"},
			check: func(t *testing.T, r *rig) {
				if o := r.trace(t, iptablestest.Packet{Src: outside, Dst: addr("203.0.113.7"), DPort: 80}); o.Verdict != "ACCEPT" || o.Mark != 0x4000 {
					t.Errorf("in range -> LB: %+v", o)
				}
				if o := r.trace(t, iptablestest.Packet{Src: addr("10.1.1.1"), Dst: addr("203.0.113.7"), DPort: 80}); o.Verdict != "DROP" {
					t.Errorf("out of range -> LB: %+v, want DROP", o)
				}
				// The external IP has no source ranges.
				if o := r.trace(t, iptablestest.Packet{Src: addr("10.1.1.1"), Dst: addr("198.51.100.9"), DPort: 80}); o.Verdict != "ACCEPT" {
					t.Errorf("-> external IP: %+v", o)
				}
				if o := r.trace(t, iptablestest.Packet{Src: addr("10.1.1.1"), Dst: addr("198.51.100.9"), DPort: 22}); o.Verdict != "REJECT" {
					t.Errorf("-> external IP, other port: %+v, want REJECT", o)
				}
			},
		},
		{
			name: "externalTrafficPolicy Local: external servers get local endpoints, no masquerade",
			svcs: []svcEps{{svcPort("ns", "loc", "10.96.0.13", func(sp *proxy.ServicePort) {
				sp.NodePort = 30082
				sp.ExternalPolicyLocal = true
			}), eps("10.244.0.2+", "10.244.1.2")}},
			dump: lines("TCP 10.96.0.13:80 rr", "  -> 10.244.0.2:8080 w=1", "  -> 10.244.1.2:8080 w=1",
				"TCP 192.168.77.1:30082 rr", "  -> 10.244.0.2:8080 w=1",
				"TCP 192.168.78.1:30082 rr", "  -> 10.244.0.2:8080 w=1"),
			bound: []string{"10.96.0.13"},
			check: func(t *testing.T, r *rig) {
				if o := r.trace(t, iptablestest.Packet{Src: outside, Dst: nodeIP, DPort: 30082}); o.Verdict != "ACCEPT" || o.Mark != 0 {
					t.Errorf("outside -> Local NodePort: %+v, want accepted without the masquerade mark", o)
				}
			},
		},
		{
			name: "externalTrafficPolicy Local without a local endpoint: empty external servers",
			svcs: []svcEps{{svcPort("ns", "loc", "10.96.0.13", func(sp *proxy.ServicePort) {
				sp.NodePort = 30082
				sp.ExternalPolicyLocal = true
			}), eps("10.244.1.2")}},
			dump: lines("TCP 10.96.0.13:80 rr", "  -> 10.244.1.2:8080 w=1",
				"TCP 192.168.77.1:30082 rr", "TCP 192.168.78.1:30082 rr"),
			bound: []string{"10.96.0.13"},
		},
		{
			name:  "internalTrafficPolicy Local",
			svcs:  []svcEps{{svcPort("ns", "il", "10.96.0.14", func(sp *proxy.ServicePort) { sp.InternalPolicyLocal = true }), eps("10.244.0.2+", "10.244.1.2")}},
			dump:  lines("TCP 10.96.0.14:80 rr", "  -> 10.244.0.2:8080 w=1"),
			bound: []string{"10.96.0.14"},
		},
		{
			name:  "sessionAffinity ClientIP: persistent with the timeout",
			svcs:  []svcEps{{svcPort("ns", "aff", "10.96.0.15", func(sp *proxy.ServicePort) { sp.AffinityTimeout = 3 * time.Hour }), eps("10.244.0.2")}},
			dump:  lines("TCP 10.96.0.15:80 rr persistent 10800", "  -> 10.244.0.2:8080 w=1"),
			bound: []string{"10.96.0.15"},
		},
		{
			name:  "no endpoints: an empty server, and REJECT",
			svcs:  []svcEps{{svcPort("ns", "empty", "10.96.0.16", func(sp *proxy.ServicePort) { sp.NodePort = 30083 }), nil}},
			dump:  lines("TCP 10.96.0.16:80 rr", "TCP 192.168.77.1:30083 rr", "TCP 192.168.78.1:30083 rr"),
			bound: []string{"10.96.0.16"},
			check: func(t *testing.T, r *rig) {
				for _, p := range []iptablestest.Packet{
					{Src: pod, Dst: addr("10.96.0.16"), DPort: 80},
					{Src: nodeIP, Dst: addr("10.96.0.16"), DPort: 80, Local: true},
					{Src: outside, Dst: nodeIP, DPort: 30083},
				} {
					if o := r.trace(t, p); o.Verdict != "REJECT" {
						t.Errorf("%+v: %+v, want REJECT", p, o)
					}
				}
			},
		},
		{
			name:  "no ready endpoint: serving and terminating ones",
			svcs:  []svcEps{{svcPort("ns", "term", "10.96.0.17", nil), eps("10.244.0.2~", "10.244.0.3~")}},
			dump:  lines("TCP 10.96.0.17:80 rr", "  -> 10.244.0.2:8080 w=1", "  -> 10.244.0.3:8080 w=1"),
			bound: []string{"10.96.0.17"},
		},
		{
			name:  "ready endpoints win over terminating ones",
			svcs:  []svcEps{{svcPort("ns", "term", "10.96.0.17", nil), eps("10.244.0.2~", "10.244.0.3")}},
			dump:  lines("TCP 10.96.0.17:80 rr", "  -> 10.244.0.3:8080 w=1"),
			bound: []string{"10.96.0.17"},
		},
		{
			name: "UDP; SCTP and headless get nothing",
			svcs: []svcEps{
				{svcPort("ns", "dns", "10.96.0.53", func(sp *proxy.ServicePort) { sp.Protocol, sp.Name.Protocol, sp.Port = "UDP", "UDP", 53 }), eps("10.244.0.2")},
				{svcPort("ns", "sctp", "10.96.0.54", func(sp *proxy.ServicePort) { sp.Protocol, sp.Name.Protocol = "SCTP", "SCTP" }), eps("10.244.0.2")},
				{svcPort("ns", "headless", "10.96.0.55", func(sp *proxy.ServicePort) { sp.ClusterIPs = nil }), eps("10.244.0.2")},
			},
			dump:  lines("UDP 10.96.0.53:53 rr", "  -> 10.244.0.2:8080 w=1"),
			bound: []string{"10.96.0.53"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.sched)
			r.sync(t, state(c.svcs...))
			if got := r.ipvs.Dump(); got != c.dump {
				t.Errorf("IPVS table:\n%s\nwant:\n%s", got, c.dump)
			}
			if got := r.bound(); !slices.Equal(got, c.bound) {
				t.Errorf("bound %v, want %v", got, c.bound)
			}
			if c.check != nil {
				c.check(t, r)
			}
			// A second full sync changes nothing.
			r.ipvs.ResetOps()
			r.addrs.ResetOps()
			n := len(r.ipt.Restores())
			r.sync(t, state(c.svcs...))
			if ops := r.ipvs.Ops(); len(ops) != 0 {
				t.Errorf("second full sync made IPVS calls %v", ops)
			}
			if ops := r.addrs.Ops(); len(ops) != 0 {
				t.Errorf("second full sync bound addresses %v", ops)
			}
			if got := len(r.ipt.Restores()); got != n {
				t.Errorf("second full sync ran iptables-restore: %s", r.ipt.Restores()[n])
			}
		})
	}
}

func TestNewChecks(t *testing.T) {
	r := newRig(t, "")
	for k, want := range map[string]string{"net.ipv4.vs.conntrack": "1", "net.ipv4.vs.expire_nodest_conn": "1"} {
		if r.sysct[k] != want {
			t.Errorf("sysctl %s = %q, want %q", k, r.sysct[k], want)
		}
	}
	if r.b.Scheduler() != "rr" {
		t.Errorf("default scheduler %q", r.b.Scheduler())
	}
	_, err := ipvs.New(context.Background(), ipvs.Config{IPVS: ipvstest.New(), Addrs: ipvstest.NewAddrs(), Exec: iptablestest.New(iptables.ModeNFT), Mode: iptables.ModeNFT, Scheduler: "bogus"})
	if err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("unknown scheduler: %v", err)
	}
	_, err = ipvs.New(context.Background(), ipvs.Config{IPVS: ipvstest.New(), Addrs: ipvstest.NewAddrs(), Exec: iptablestest.New(iptables.ModeNFT), Mode: iptables.ModeNFT,
		Sysctl: func(k, v string) error { return syscall.ENOENT }})
	if err == nil || !strings.Contains(err.Error(), "net.ipv4.vs.conntrack") {
		t.Errorf("sysctl failure: %v", err)
	}
	// The iptables tools of the wrong mode are missing.
	_, err = ipvs.New(context.Background(), ipvs.Config{IPVS: ipvstest.New(), Addrs: ipvstest.NewAddrs(), Exec: iptablestest.New(iptables.ModeNFT), Mode: iptables.ModeLegacy})
	if err == nil {
		t.Error("New with unusable iptables tools succeeded")
	}
}

func TestPartialSyncTouchesOnlyChanged(t *testing.T) {
	r := newRig(t, "")
	a := svcPort("ns", "a", "10.96.0.1", nil)
	bb := svcPort("ns", "b", "10.96.0.2", func(sp *proxy.ServicePort) { sp.NodePort = 30001 })
	c := svcPort("ns", "c", "10.96.0.3", nil)
	r.sync(t, state(svcEps{a, eps("10.244.0.2")}, svcEps{bb, eps("10.244.0.3")}, svcEps{c, eps("10.244.0.4")}))

	// One endpoint (on another node) added to b: only b's servers get a
	// real server, and no iptables rule changes.
	r.ipvs.ResetOps()
	r.addrs.ResetOps()
	n := len(r.ipt.Restores())
	st := state(svcEps{a, eps("10.244.0.2")}, svcEps{bb, eps("10.244.0.3", "10.244.1.9")}, svcEps{c, eps("10.244.0.4")})
	r.sync(t, st, bb.Name)
	want := []string{
		"NewDestination TCP 10.96.0.2:80 10.244.1.9:8080 w=1",
		"NewDestination TCP 192.168.77.1:30001 10.244.1.9:8080 w=1",
		"NewDestination TCP 192.168.78.1:30001 10.244.1.9:8080 w=1",
	}
	if got := r.ipvs.Ops(); !slices.Equal(got, want) {
		t.Errorf("ops %q, want %q", got, want)
	}
	if ops := r.addrs.Ops(); len(ops) != 0 {
		t.Errorf("addresses touched: %v", ops)
	}
	if rs := r.ipt.Restores(); len(rs) != n {
		t.Errorf("an endpoint change on another node ran iptables-restore:\n%s", rs[len(rs)-1])
	}
	// A local endpoint: its hairpin rule is written, and only
	// KUBE-IPVS-POSTROUTING is rewritten.
	st = state(svcEps{a, eps("10.244.0.2")}, svcEps{bb, eps("10.244.0.3", "10.244.1.9", "10.244.0.9+")}, svcEps{c, eps("10.244.0.4")})
	r.sync(t, st, bb.Name)
	rs := r.ipt.Restores()
	last := string(rs[len(rs)-1])
	if len(rs) != n+1 || !strings.Contains(last, "-A KUBE-IPVS-POSTROUTING -s 10.244.0.9/32 -d 10.244.0.9/32") ||
		strings.Contains(last, ":KUBE-IPVS-FILTER") || strings.Contains(last, ":KUBE-IPVS-SERVICES") {
		t.Errorf("restore after a local endpoint was added:\n%s", last)
	}

	// c removed, a's endpoint replaced: c's server and address go, a's
	// real server is swapped, b is untouched.
	r.ipvs.ResetOps()
	st2 := state(svcEps{a, eps("10.244.0.7")}, svcEps{bb, eps("10.244.0.3", "10.244.1.9", "10.244.0.9+")})
	r.sync(t, st2, a.Name, c.Name)
	want = []string{
		"DelDestination TCP 10.96.0.1:80 10.244.0.2:8080 w=1",
		"NewDestination TCP 10.96.0.1:80 10.244.0.7:8080 w=1",
		"DelService TCP 10.96.0.3:80",
	}
	if got := r.ipvs.Ops(); !slices.Equal(got, want) {
		t.Errorf("ops %q, want %q", got, want)
	}
	if got := r.bound(); !slices.Equal(got, []string{"10.96.0.1", "10.96.0.2"}) {
		t.Errorf("bound %v", got)
	}
	// A partial sync leaves the kernel as a full sync of the same state.
	ref := newRig(t, "")
	ref.sync(t, st2)
	if got, want := r.ipvs.Dump(), ref.ipvs.Dump(); got != want {
		t.Errorf("after partial syncs:\n%s\nfull sync gives:\n%s", got, want)
	}
	if got, want := r.ipt.Save(""), ref.ipt.Save(""); got != want {
		t.Errorf("iptables after partial syncs:\n%s\nfull sync gives:\n%s", got, want)
	}

	// Affinity switched on: UpdateService, no re-creation.
	r.ipvs.ResetOps()
	a2 := svcPort("ns", "a", "10.96.0.1", func(sp *proxy.ServicePort) { sp.AffinityTimeout = time.Minute })
	r.sync(t, state(svcEps{a2, eps("10.244.0.7")}, svcEps{bb, eps("10.244.0.3", "10.244.1.9", "10.244.0.9+")}), a.Name)
	if got := r.ipvs.Ops(); !slices.Equal(got, []string{"UpdateService TCP 10.96.0.1:80"}) {
		t.Errorf("ops %q", got)
	}
}

func TestFullSyncReconciles(t *testing.T) {
	r := newRig(t, "")
	ctx := context.Background()
	// Left by an earlier run: a server on an address of our interface and
	// one on a node address, a stale address; someone else's server on
	// another address stays.
	_ = r.addrs.Ensure()
	_ = r.addrs.Add(addr("10.96.0.99"))
	_ = r.addrs.Add(addr("10.96.0.1"))
	st := state(svcEps{svcPort("ns", "a", "10.96.0.1", nil), eps("10.244.0.2")})
	old := newRig(t, "")
	old.sync(t, state(
		svcEps{svcPort("ns", "a", "10.96.0.1", nil), eps("10.244.0.5")},
		svcEps{svcPort("ns", "x", "10.96.0.99", func(sp *proxy.ServicePort) { sp.NodePort = 30099 }), eps("10.244.0.5")}))
	svcs, _ := old.ipvs.GetServices()
	for _, s := range svcs {
		s.Flags &^= ipvs.FlagHashed
		if err := r.ipvs.NewService(s); err != nil {
			t.Fatal(err)
		}
		ds, _ := old.ipvs.GetDestinations(s)
		for _, d := range ds {
			if err := r.ipvs.NewDestination(s, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	foreign := svcs[0]
	foreign.Address = addr("172.17.0.5").AsSlice()
	if err := r.ipvs.NewService(foreign); err != nil {
		t.Fatal(err)
	}
	// Chains of an earlier run: a firewall chain no longer needed.
	if _, err := r.ipt.Run(ctx, []byte("*filter\n:KUBE-IPVSFW-OLD - [0:0]\n-A KUBE-IPVSFW-OLD -j DROP\nCOMMIT\n"), "iptables-nft-restore", "--noflush"); err != nil {
		t.Fatal(err)
	}
	r.sync(t, st)
	want := lines("TCP 10.96.0.1:80 rr", "  -> 10.244.0.2:8080 w=1", "TCP 172.17.0.5:80 rr")
	if got := r.ipvs.Dump(); got != want {
		t.Errorf("after a full sync:\n%s\nwant:\n%s", got, want)
	}
	if got := r.bound(); !slices.Equal(got, []string{"10.96.0.1"}) {
		t.Errorf("bound %v", got)
	}
	if s := r.ipt.Save("filter"); strings.Contains(s, "KUBE-IPVSFW-OLD") {
		t.Errorf("stale chain kept:\n%s", s)
	}
	// The jumps are there once, even after another full sync.
	r.sync(t, st)
	nat := r.ipt.Save("nat")
	if n := strings.Count(nat, "-A PREROUTING -m comment --comment skiff-ipvs-services -j KUBE-IPVS-SERVICES"); n != 1 {
		t.Errorf("%d PREROUTING jumps:\n%s", n, nat)
	}
}

func TestFailureMakesNextSyncFull(t *testing.T) {
	r := newRig(t, "")
	a := svcPort("ns", "a", "10.96.0.1", nil)
	bb := svcPort("ns", "b", "10.96.0.2", nil)
	r.sync(t, state(svcEps{a, eps("10.244.0.2")}))
	r.ipvs.FailNext("NewService", errors.New("injected"))
	st := state(svcEps{a, eps("10.244.0.2")}, svcEps{bb, eps("10.244.0.3")})
	if err := r.b.Sync(context.Background(), st, []proxy.ServicePortName{bb.Name}); err == nil {
		t.Fatal("sync with a failing NewService succeeded")
	}
	// The next call, though partial for a, is full: b appears.
	r.sync(t, st, a.Name)
	if !r.b.LastStats().Full {
		t.Error("the sync after a failure was not full")
	}
	if r.ipvs.Get("TCP 10.96.0.2:80") == nil {
		t.Errorf("b missing after the retry:\n%s", r.ipvs.Dump())
	}
}

func TestCleanup(t *testing.T) {
	r := newRig(t, "")
	r.sync(t, state(svcEps{svcPort("ns", "lb", "10.96.0.12", func(sp *proxy.ServicePort) {
		sp.NodePort = 30081
		sp.LoadBalancerIPs = []netip.Addr{addr("203.0.113.7")}
		sp.LoadBalancerSourceRanges = []netip.Prefix{netip.MustParsePrefix("192.168.77.0/24")}
	}), eps("10.244.0.2")}))
	if err := r.b.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := r.ipvs.Dump(); d != "" {
		t.Errorf("IPVS after cleanup:\n%s", d)
	}
	if r.addrs.Exists() {
		t.Error("interface kept")
	}
	if s := r.ipt.Save(""); strings.Contains(s, "IPVS") {
		t.Errorf("iptables after cleanup:\n%s", s)
	}
	// A sync after Cleanup programs everything again.
	r.sync(t, state(svcEps{svcPort("ns", "a", "10.96.0.1", nil), eps("10.244.0.2")}))
	if r.ipvs.Get("TCP 10.96.0.1:80") == nil || !r.addrs.Exists() {
		t.Error("nothing programmed after Cleanup")
	}
}

func TestTraceRules(t *testing.T) {
	r := newRig(t, "")
	r.sync(t, state(
		svcEps{svcPort("ns", "web", "10.96.0.10", func(sp *proxy.ServicePort) { sp.AffinityTimeout = 10800 * time.Second }), eps("10.244.0.2", "10.244.1.2")},
		svcEps{svcPort("ns", "empty", "10.96.0.11", nil), nil}))
	got, err := r.b.TraceRules(context.Background(), netip.MustParseAddrPort("10.96.0.10:80"), "TCP")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Text != "TCP  10.96.0.10:80 rr persistent 10800" || got[0].Chain != "TCP 10.96.0.10:80" {
		t.Fatalf("trace %+v", got)
	}
	for i, ep := range []string{"10.244.0.2:8080", "10.244.1.2:8080"} {
		e := got[1+i]
		if e.Endpoint != ep || e.Probability != 0.5 || !strings.HasPrefix(strings.TrimSpace(e.Text), "-> "+ep) || !strings.Contains(e.Text, "Masq") {
			t.Errorf("entry %d: %+v", i+1, e)
		}
	}
	got, err = r.b.TraceRules(context.Background(), netip.MustParseAddrPort("10.96.0.11:80"), "TCP")
	if err != nil || len(got) != 1 {
		t.Errorf("no endpoints: %+v %v", got, err)
	}
	got, err = r.b.TraceRules(context.Background(), netip.MustParseAddrPort("10.96.0.10:81"), "TCP")
	if err != nil || len(got) != 0 {
		t.Errorf("no service: %+v %v", got, err)
	}
	if _, err := r.b.TraceRules(context.Background(), netip.MustParseAddrPort("10.96.0.10:80"), "ICMP"); err == nil {
		t.Error("ICMP traced")
	}
}
