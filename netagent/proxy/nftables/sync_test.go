package nftables

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
)

func opKinds(tx *Transaction) []string {
	var out []string
	for _, op := range tx.Ops {
		s := op.opString(tx.Family, tx.Table)
		f := strings.Fields(s)
		kind := f[0] + " " + f[1]
		name := ""
		if f[1] != "table" {
			name = f[4]
		}
		out = append(out, strings.TrimSpace(kind+" "+name))
	}
	return out
}

func lastTx(t *testing.T, f *Fake) *Transaction {
	t.Helper()
	if len(f.Transactions) == 0 {
		t.Fatal("no transaction")
	}
	return f.Transactions[len(f.Transactions)-1]
}

// TestFullSyncRuleset checks the rules of one Service port as a full sync
// writes them.
func TestFullSyncRuleset(t *testing.T) {
	web := spn("web", "http", "TCP")
	base := servicePortChainNameBase(web, ProtoTCP)
	p, f := newFakeProxier(t)
	st := newState()
	addSvc(st, web, "10.96.0.10", 80, nodePort(30080), lbIP("192.168.50.1", "192.168.7.0/24"), extLocal)
	st.Endpoints[web] = eps("10.244.0.2:8080", "10.244.1.2:8080")
	mustSync(t, p, st, nil)

	want := map[string][]string{
		"services": {
			"ip daddr . meta l4proto . th dport vmap @service-ips",
			"fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports",
		},
		"service-" + base: {
			"ip daddr 10.96.0.10 tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade",
			"meta l4proto tcp dnat ip addr . port to numgen random mod 2 offset 0 map @endpoints-0",
		},
		"local-" + base: {
			"meta l4proto tcp dnat ip addr . port to numgen random mod 1 offset 4096 map @endpoints-1",
		},
		"external-" + base: {
			"ip saddr 10.244.0.0/16 goto service-" + base,
			"fib saddr type local jump mark-for-masquerade",
			"fib saddr type local goto service-" + base,
			"goto local-" + base,
		},
		"firewall-" + base:  {"ip saddr 192.168.7.0/24 return", "drop"},
		"cluster-ips-check": {"ip daddr 10.96.0.0/16 goto reject-chain"},
	}
	for chain, rules := range want {
		if got := f.Chain(IPv4, TableName, chain); !slices.Equal(got, rules) {
			t.Errorf("chain %s:\n got  %q\n want %q", chain, got, rules)
		}
	}
	wantElems := map[string][]string{
		serviceIPsMap:       {"10.96.0.10 . tcp . 80 : goto service-" + base, "192.168.50.1 . tcp . 80 : goto external-" + base},
		serviceNodePortsMap: {"tcp . 30080 : goto external-" + base},
		firewallIPsMap:      {"192.168.50.1 . tcp . 80 : goto firewall-" + base},
		"endpoints-0":       {"0 : 10.244.0.2 . 8080", "1 : 10.244.1.2 . 8080"},
		"endpoints-1":       {"4096 : 10.244.0.2 . 8080"},
		hairpinSet:          {"10.244.0.2 . 10.244.0.2", "10.244.1.2 . 10.244.1.2"},
	}
	for set, es := range wantElems {
		if got := f.Elements(IPv4, TableName, set); !slices.Equal(got, sorted(es...)) {
			t.Errorf("set %s:\n got  %q\n want %q", set, got, sorted(es...))
		}
	}
	if !strings.Contains(web.String(), "/") || !isServiceObjectName("service-"+base) || isServiceObjectName(servicesChain) {
		t.Error("per-Service names must hold a '/' and fixed names none")
	}
}

// TestPartialSyncTransactions checks what a partial sync sends for common
// changes: an endpoint change touches only map elements (no rule, no jump:
// no whole-table validation in the kernel).
func TestPartialSyncTransactions(t *testing.T) {
	web := spn("web", "http", "TCP")
	other := spn("other", "", "TCP")
	base := servicePortChainNameBase(web, ProtoTCP)
	// Slots go in name order: default/other gets slot 0, default/web 1.
	const webMap = "endpoints-1"
	cases := []struct {
		name   string
		change func(st *proxy.State)
		want   []string
	}{
		{
			name: "an endpoint replaced: two elements of the endpoint map and the hairpin set",
			change: func(st *proxy.State) {
				st.Endpoints[web] = eps("10.244.0.2:8080", "10.244.1.9:8080", "10.244.2.2:8080")
			},
			want: []string{"delete element " + webMap, "delete element hairpin",
				"add element " + webMap, "add element hairpin"},
		},
		{
			name: "scale 3 -> 5: the service chain's rule (new modulus) and new elements",
			change: func(st *proxy.State) {
				st.Endpoints[web] = eps("10.244.0.2:8080", "10.244.1.2:8080", "10.244.2.2:8080", "10.244.3.2:8080", "10.244.4.2:8080")
			},
			want: []string{"flush chain service-" + base, "add rule service-" + base, "add rule service-" + base,
				"add element " + webMap, "add element hairpin"},
		},
		{
			name:   "last endpoint gone: the ClusterIP moves to the no-endpoint map",
			change: func(st *proxy.State) { st.Endpoints[web] = nil },
			want: []string{"flush chain service-" + base, "delete element " + webMap, "delete element hairpin",
				"delete element service-ips", "add element no-endpoint-services", "delete chain service-" + base},
		},
		{
			name:   "service deleted",
			change: func(st *proxy.State) { delete(st.Services, web); delete(st.Endpoints, web) },
			want: []string{"flush chain service-" + base, "delete element " + webMap, "delete element hairpin",
				"delete element service-ips", "delete chain service-" + base},
		},
		{
			name:   "nothing changed",
			change: func(st *proxy.State) {},
			want:   nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, f := newFakeProxier(t)
			st := newState()
			addSvc(st, web, "10.96.0.10", 80)
			st.Endpoints[web] = eps("10.244.0.2:8080", "10.244.1.2:8080", "10.244.2.2:8080")
			addSvc(st, other, "10.96.0.11", 80)
			st.Endpoints[other] = eps("10.244.5.5:80")
			mustSync(t, p, st, nil)
			n := len(f.Transactions)
			tc.change(st)
			mustSync(t, p, st, []proxy.ServicePortName{web})
			var got []string
			if len(f.Transactions) > n {
				got = opKinds(lastTx(t, f))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ops:\n got  %q\n want %q\n%s", got, tc.want, lastTx(t, f))
			}
			checkSameAsFull(t, f, st)
		})
	}
}

// checkSameAsFull compares the fake's table with what a fresh full sync of
// st writes: same chains, same sets, same element counts, and the same
// outcome for a packet to every Service address from a pod, the node and
// outside.
func checkSameAsFull(t *testing.T, got *Fake, st *proxy.State) {
	t.Helper()
	fresh, want := newFakeProxier(t)
	mustSync(t, fresh, st, nil)
	for _, fam := range []Family{IPv4, IPv6} {
		gc, gs, gerr := got.List(context.Background(), fam, TableName)
		wc, ws, werr := want.List(context.Background(), fam, TableName)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%s table: partial %v, full %v", fam, gerr, werr)
		}
		if !slices.Equal(gc, wc) {
			t.Errorf("%s chains differ:\n partial %q\n full    %q", fam, gc, wc)
		}
		if len(gs) != len(ws) {
			t.Errorf("%s sets: partial %d, full %d", fam, len(gs), len(ws))
		}
		for _, s := range ws {
			if s.Name == hairpinSet || !strings.HasPrefix(s.Name, endpointMapPrefix) {
				if g, w := got.Elements(fam, TableName, s.Name), want.Elements(fam, TableName, s.Name); !slices.Equal(g, w) {
					t.Errorf("%s set %s:\n partial %q\n full    %q", fam, s.Name, g, w)
				}
			}
		}
	}
	for _, name := range slices.SortedFunc(maps.Keys(st.Services), proxy.ServicePortName.Compare) {
		sp := st.Services[name]
		proto, _ := ParseProto(sp.Protocol)
		var probes []Packet
		for _, ip := range append(append(slices.Clone(sp.ClusterIPs), sp.LoadBalancerIPs...), sp.ExternalIPs...) {
			for _, src := range []string{"10.244.0.5", "192.168.7.7"} {
				if ip.Is6() {
					src = "fd00:244::5"
				}
				probes = append(probes, Packet{Src: netip.MustParseAddr(src), Dst: ip, Proto: proto, Dport: uint16(sp.Port)})
			}
		}
		if sp.NodePort > 0 {
			probes = append(probes, Packet{Src: netip.MustParseAddr("192.168.7.7"), Dst: nodeIP, Proto: proto, Dport: uint16(sp.NodePort)},
				Packet{Src: nodeIP, Dst: nodeIP, Proto: proto, Dport: uint16(sp.NodePort), FromNode: true})
		}
		for _, pk := range probes {
			if g, w := outcomes(t, got, pk), outcomes(t, want, pk); !slices.Equal(g, w) {
				t.Errorf("%s %+v:\n partial %q\n full    %q", name, pk, g, w)
			}
		}
	}
}

// TestPartialSyncRandom applies random changes with partial syncs and
// checks after each that the table is what a full sync writes.
func TestPartialSyncRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p, f := newFakeProxier(t)
	st := newState()
	names := []proxy.ServicePortName{}
	for i := range 12 {
		proto := "TCP"
		if i%4 == 3 {
			proto = "UDP"
		}
		names = append(names, spn(fmt.Sprintf("svc%d", i), "p", proto))
	}
	randomize := func(n proxy.ServicePortName, i int) {
		if rng.IntN(6) == 0 {
			delete(st.Services, n)
			delete(st.Endpoints, n)
			return
		}
		var mods []func(*proxy.ServicePort)
		if rng.IntN(2) == 0 {
			mods = append(mods, nodePort(int32(30000+i)))
		}
		if rng.IntN(3) == 0 {
			mods = append(mods, lbIP(fmt.Sprintf("192.168.50.%d", i+1), "192.168.7.0/24"))
		}
		if rng.IntN(3) == 0 {
			mods = append(mods, extLocal)
		}
		if rng.IntN(4) == 0 {
			mods = append(mods, intLocal)
		}
		if rng.IntN(3) == 0 {
			mods = append(mods, affinity(time.Duration(1+rng.IntN(2))*time.Hour))
		}
		addSvc(st, n, fmt.Sprintf("10.96.1.%d", i+1), 80, mods...)
		var e []string
		for range rng.IntN(5) {
			e = append(e, fmt.Sprintf("10.244.%d.%d:8080", rng.IntN(3), 2+rng.IntN(4)))
		}
		st.Endpoints[n] = eps(e...)
	}
	for i, n := range names {
		randomize(n, i)
	}
	mustSync(t, p, st, nil)
	for round := range 60 {
		var changed []proxy.ServicePortName
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(names))
			randomize(names[i], i)
			changed = append(changed, names[i])
		}
		if err := p.Sync(context.Background(), st, changed); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		checkSameAsFull(t, f, st)
		if t.Failed() {
			t.Fatalf("round %d: partial sync of %v diverged from a full sync", round, changed)
		}
	}
}

// TestFailedSyncForcesFull: after a failed transaction the next sync is
// full, even when asked for a partial one; nothing half-applied remains.
func TestFailedSyncForcesFull(t *testing.T) {
	web := spn("web", "http", "TCP")
	p, f := newFakeProxier(t)
	st := newState()
	addSvc(st, web, "10.96.0.10", 80)
	st.Endpoints[web] = eps("10.244.0.2:8080")
	mustSync(t, p, st, nil)
	st.Endpoints[web] = eps("10.244.0.3:8080")
	f.FailNext = errors.New("injected")
	if err := p.Sync(context.Background(), st, []proxy.ServicePortName{web}); err == nil {
		t.Fatal("Sync succeeded through an injected failure")
	}
	if got := f.Elements(IPv4, TableName, "endpoints-0"); !slices.Equal(got, []string{"0 : 10.244.0.2 . 8080"}) {
		t.Fatalf("failed sync changed the table: %q", got)
	}
	mustSync(t, p, st, []proxy.ServicePortName{web})
	kinds := opKinds(lastTx(t, f))
	if kinds[0] != "add table" || !slices.Contains(kinds, "flush chain services") {
		t.Fatalf("sync after a failure was not full: %q", kinds)
	}
	checkSameAsFull(t, f, st)
}

// TestFullSyncOverExistingTable: a restarted agent's first sync replaces
// the table in one transaction (no delete first), removes stale objects and
// keeps affinity sets of endpoints that stay.
func TestFullSyncOverExistingTable(t *testing.T) {
	web := spn("web", "http", "TCP")
	gone := spn("gone", "", "TCP")
	p1, f := newFakeProxier(t)
	st := newState()
	addSvc(st, web, "10.96.0.10", 80, affinity(time.Hour))
	st.Endpoints[web] = eps("10.244.0.2:8080", "10.244.1.2:8080")
	addSvc(st, gone, "10.96.0.11", 80, nodePort(30001))
	st.Endpoints[gone] = eps("10.244.0.9:80")
	mustSync(t, p1, st, nil)
	// A client gets affinity.
	if _, err := f.Trace(IPv4, pkt("10.244.0.5", "10.96.0.10", ProtoTCP, 80), TraceConfig{Pick: func(uint32) uint32 { return 0 }}); err != nil {
		t.Fatal(err)
	}
	affSet := affinitySetPrefix + servicePortEndpointChainNameBase(web, ProtoTCP, netip.MustParseAddrPort("10.244.0.2:8080"))
	if got := f.Elements(IPv4, TableName, affSet); len(got) != 1 {
		t.Fatalf("affinity not recorded: %q", got)
	}

	delete(st.Services, gone)
	delete(st.Endpoints, gone)
	p2, err := New(Config{Kernel: f, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	mustSync(t, p2, st, []proxy.ServicePortName{web}) // first sync is full anyway
	tx := lastTx(t, f)
	for _, op := range tx.Ops {
		if _, ok := op.(DeleteTable); ok {
			t.Fatal("full sync deleted the table")
		}
	}
	if got := f.Elements(IPv4, TableName, affSet); len(got) != 1 {
		t.Fatalf("affinity lost over a full sync: %q", got)
	}
	// Stale objects of the deleted Service are gone: same chains and sets
	// as a fresh full sync.
	fresh, want := newFakeProxier(t)
	mustSync(t, fresh, st, nil)
	gc, gs, _ := f.List(context.Background(), IPv4, TableName)
	wc, ws, _ := want.List(context.Background(), IPv4, TableName)
	if !slices.Equal(gc, wc) || len(gs) != len(ws) {
		t.Errorf("after restart:\n chains %q\n want   %q\n sets %d want %d", gc, wc, len(gs), len(ws))
	}
	if got := f.Elements(IPv4, TableName, serviceNodePortsMap); len(got) != 0 {
		t.Errorf("stale NodePort: %q", got)
	}
}

func TestAffinityTimeoutChange(t *testing.T) {
	web := spn("web", "http", "TCP")
	p, f := newFakeProxier(t)
	st := newState()
	addSvc(st, web, "10.96.0.10", 80, affinity(time.Hour))
	st.Endpoints[web] = eps("10.244.0.2:8080")
	mustSync(t, p, st, nil)
	st.Services[web].AffinityTimeout = 2 * time.Hour
	mustSync(t, p, st, []proxy.ServicePortName{web})
	_, sets, err := f.List(context.Background(), IPv4, TableName)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range sets {
		if strings.HasPrefix(s.Name, affinitySetPrefix) {
			found = true
			if s.Set.Timeout != 2*time.Hour {
				t.Errorf("%s timeout %v, want 2h", s.Name, s.Set.Timeout)
			}
		}
	}
	if !found {
		t.Fatal("no affinity set")
	}
	// And over a full sync with a fresh proxier (timeout read back).
	st.Services[web].AffinityTimeout = 3 * time.Hour
	p2, _ := New(Config{Kernel: f, Logger: quietLog()})
	mustSync(t, p2, st, nil)
	checkSameAsFull(t, f, st)
}

func TestCleanupAndIPv6(t *testing.T) {
	web := spn("web", "http", "TCP")
	p, f := newFakeProxier(t)
	st := newState()
	st.ClusterCIDR = netip.MustParsePrefix("fd00:244::/48") // the v4 table then has no masquerade rule for ClusterIPs
	st.ServiceCIDR = netip.MustParsePrefix("fd00:96::/112")
	st.NodeIPs = []netip.Addr{nodeIP, netip.MustParseAddr("fd00:1::10")}
	sp := addSvc(st, web, "fd00:96::10", 80, nodePort(30080))
	sp.ClusterIPs = append(sp.ClusterIPs, netip.MustParseAddr("10.96.0.10"))
	st.Endpoints[web] = append(eps("10.244.0.2:8080"), proxy.Endpoint{IP: netip.MustParseAddr("fd00:244::2"), Port: 8080, Ready: true})
	mustSync(t, p, st, nil)
	if !f.HasTable(IPv6, TableName) || !f.HasTable(IPv4, TableName) {
		t.Fatal("dual-stack Service: want both tables")
	}
	got := outcomes(t, f, pkt("fd00:244::5", "fd00:96::10", ProtoTCP, 80))
	if want := []string{"accept dnat [fd00:244::2]:8080"}; !slices.Equal(got, want) {
		t.Errorf("v6 ClusterIP: got %q want %q\n%s", got, want, f.Dump(IPv6, TableName))
	}
	got = outcomes(t, f, pkt("fd00:244::5", "fd00:96::99", ProtoTCP, 80))
	if want := []string{"reject"}; !slices.Equal(got, want) {
		t.Errorf("v6 unallocated service IP: got %q want %q", got, want)
	}
	got = outcomes(t, f, pkt("10.244.0.5", "10.96.0.10", ProtoTCP, 80))
	if want := []string{"accept dnat 10.244.0.2:8080"}; !slices.Equal(got, want) {
		t.Errorf("v4 ClusterIP: got %q want %q", got, want)
	}
	// The v6 address goes: the ip6 table goes with it.
	sp.ClusterIPs = sp.ClusterIPs[1:]
	mustSync(t, p, st, []proxy.ServicePortName{web})
	if f.HasTable(IPv6, TableName) {
		t.Error("ip6 table kept without IPv6 Services")
	}
	if err := p.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.HasTable(IPv4, TableName) || f.HasTable(IPv6, TableName) {
		t.Error("Cleanup left a table")
	}
	if err := p.Cleanup(context.Background()); err != nil {
		t.Fatalf("second Cleanup: %v", err)
	}
}

func TestFakeRejects(t *testing.T) {
	chain := func(name string, rules ...Rule) Op { return AddChain{Chain: &Chain{Name: name, Rules: rules}} }
	vm := &Set{Name: "vm", Key: []DataType{TypeInetProto, TypeInetService}, Value: []DataType{TypeVerdict}}
	plain := &Set{Name: "s", Key: []DataType{TypeIPv4Addr}}
	nat := AddChain{Chain: &Chain{Name: "nat-prerouting", Base: &BaseChain{Type: "nat", Hook: "prerouting", Priority: -100}}}
	filter := AddChain{Chain: &Chain{Name: "filter-forward", Base: &BaseChain{Type: "filter", Hook: "forward", Priority: -110}}}
	key := []Val{ProtoVal(ProtoTCP), PortVal(80)}
	cases := []struct {
		name string
		ops  []Op
		want error
	}{
		{"op on a missing table", []Op{chain("a")}, ErrFakeNotFound},
		{"rule jumping to a missing chain", []Op{AddTable{}, chain("a"), AddRule{Chain: "a", Rule: R(Jump("b"))}}, ErrFakeNotFound},
		{"rule in a missing chain", []Op{AddTable{}, AddRule{Chain: "a", Rule: R(Drop())}}, ErrFakeNotFound},
		{"rule jumping to a base chain", []Op{AddTable{}, chain("a"), nat, AddRule{Chain: "a", Rule: R(Jump("nat-prerouting"))}}, ErrFakeInvalid},
		{"rule using a missing set", []Op{AddTable{}, chain("a"), AddRule{Chain: "a", Rule: R(VMap{Fields: nodePortFields, Map: "vm"})}}, ErrFakeNotFound},
		{"vmap on a plain set", []Op{AddTable{}, chain("a"), AddSet{Set: plain}, AddRule{Chain: "a", Rule: R(VMap{Fields: []KeyField{FieldDaddr}, Map: "s"})}}, ErrFakeInvalid},
		{"element for a missing set", []Op{AddTable{}, AddElements{Set: vm, Elements: []Element{{Key: key, Verdict: Drop()}}}}, ErrFakeNotFound},
		{"element pointing at a missing chain", []Op{AddTable{}, AddSet{Set: vm}, AddElements{Set: vm, Elements: []Element{{Key: key, Verdict: Goto("x")}}}}, ErrFakeNotFound},
		{"element of the wrong shape", []Op{AddTable{}, AddSet{Set: vm}, AddElements{Set: vm, Elements: []Element{{Key: []Val{PortVal(80)}, Verdict: Drop()}}}}, ErrFakeInvalid},
		{"duplicate key, other value", []Op{AddTable{}, AddSet{Set: vm}, AddElements{Set: vm, Elements: []Element{{Key: key, Verdict: Drop()}, {Key: key, Verdict: Return()}}}}, ErrFakeExists},
		{"deleting a missing element", []Op{AddTable{}, AddSet{Set: vm}, DeleteElements{Set: vm, Elements: []Element{{Key: key}}}}, ErrFakeNotFound},
		{"deleting a chain a map points at", []Op{AddTable{}, chain("a"), AddSet{Set: vm}, AddElements{Set: vm, Elements: []Element{{Key: key, Verdict: Goto("a")}}}, DeleteChain{Name: "a"}}, ErrFakeBusy},
		{"deleting a chain with rules", []Op{AddTable{}, chain("a"), AddRule{Chain: "a", Rule: R(Drop())}, DeleteChain{Name: "a"}}, ErrFakeBusy},
		{"deleting a set in use", []Op{AddTable{}, chain("a"), AddSet{Set: plain}, AddRule{Chain: "a", Rule: R(MatchSet{Fields: []KeyField{FieldSaddr}, Set: "s"}, Drop())}, DeleteSet{Set: plain}}, ErrFakeBusy},
		{"a set redefined", []Op{AddTable{}, AddSet{Set: plain}, AddSet{Set: &Set{Name: "s", Key: []DataType{TypeIPv6Addr}}}}, ErrFakeExists},
		{"a jump loop", []Op{AddTable{}, filter, chain("a"), chain("b"), AddRule{Chain: "a", Rule: R(Jump("b"))}, AddRule{Chain: "b", Rule: R(Jump("a"))}, AddRule{Chain: "filter-forward", Rule: R(Jump("a"))}}, ErrFakeLoop},
		{"dnat reached from a filter chain", []Op{AddTable{}, filter, chain("a"), AddSet{Set: endpointMap(IPv4, 0)}, AddRule{Chain: "a", Rule: R(DNATRandom{Proto: ProtoTCP, Map: "endpoints-0", Mod: 1})}, AddRule{Chain: "filter-forward", Rule: R(Jump("a"))}}, ErrFakeHook},
		{"reject reached from postrouting", []Op{AddTable{}, AddChain{Chain: &Chain{Name: "pr", Base: &BaseChain{Type: "filter", Hook: "postrouting", Priority: 0}}}, chain("a"), AddRule{Chain: "a", Rule: R(Reject{})}, AddRule{Chain: "pr", Rule: R(Goto("a"))}}, ErrFakeHook},
		{"verdict not last", []Op{AddTable{}, chain("a"), AddRule{Chain: "a", Rule: R(Drop(), MatchCtNew{})}}, ErrFakeInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFake()
			err := f.Run(context.Background(), &Transaction{Family: IPv4, Table: TableName, Ops: tc.ops})
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if f.HasTable(IPv4, TableName) {
				t.Fatal("a failed transaction left a table behind")
			}
		})
	}
}

func TestHashAndTruncate(t *testing.T) {
	long := strings.Repeat("x", 63)
	n := proxy.ServicePortName{Namespace: long, Name: long, Port: long, Protocol: "TCP"}
	ep := netip.MustParseAddrPort("[fd00:1234:5678:9abc:def0:1234:5678:9abc]:65535")
	for _, name := range []string{servicePortChainNameBase(n, ProtoTCP), servicePortEndpointChainNameBase(n, ProtoSCTP, ep)} {
		if len(name) > chainNameBaseLengthMax || !isServiceObjectName(name) {
			t.Errorf("%q: length %d", name, len(name))
		}
		if strings.Contains(name, ":") {
			t.Errorf("%q holds a colon", name)
		}
	}
	a := servicePortChainNameBase(spn("web", "http", "TCP"), ProtoTCP)
	if a != servicePortChainNameBase(spn("web", "http", "TCP"), ProtoTCP) || a == servicePortChainNameBase(spn("web", "http", "UDP"), ProtoUDP) {
		t.Error("names must be stable and differ by protocol")
	}
	if !strings.HasSuffix(a, "-default/web/tcp/http") || len(a) != 8+len("-default/web/tcp/http") {
		t.Errorf("name %q", a)
	}
}
