package nftables

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/skiff-dev/skiff/netagent/proxy"
)

const (
	// endpointShards is the number of endpoint maps. Every endpoint group
	// (a Service port's Cluster or Local endpoints) lives in one of them.
	// One map for all would make the kernel check every element against
	// every rule bound to the map (10k rules × 30k elements: 5.3 s to load
	// 10k Services); one map per Service makes every set lookup by name
	// walk a list of 10k sets (5.7 s). 64 maps: 1.07 s (README.md).
	endpointShards = 64
	// slotShift: a group's endpoints are keys slot<<slotShift + i.
	slotShift = 12
	// maxGroupEndpoints is the most endpoints one group can hold.
	maxGroupEndpoints = 1 << slotShift
)

// globalConfig is what every fragment of a table depends on; when it
// changes the table is rebuilt by a full sync.
type globalConfig struct {
	family      Family
	clusterCIDR netip.Prefix // invalid when not of this family
	serviceCIDR netip.Prefix
	nodeIPs     []netip.Addr
}

func newGlobalConfig(f Family, st *proxy.State) globalConfig {
	g := globalConfig{family: f}
	if st.ClusterCIDR.IsValid() && f.has(st.ClusterCIDR.Addr()) {
		g.clusterCIDR = unmapPrefix(st.ClusterCIDR)
	}
	if st.ServiceCIDR.IsValid() && f.has(st.ServiceCIDR.Addr()) {
		g.serviceCIDR = unmapPrefix(st.ServiceCIDR)
	}
	for _, ip := range st.NodeIPs {
		if f.has(ip) {
			g.nodeIPs = append(g.nodeIPs, ip.Unmap())
		}
	}
	return g
}

func (g globalConfig) equal(o globalConfig) bool {
	return g.family == o.family && g.clusterCIDR == o.clusterCIDR && g.serviceCIDR == o.serviceCIDR &&
		slices.Equal(g.nodeIPs, o.nodeIPs)
}

func unmapPrefix(p netip.Prefix) netip.Prefix {
	if p.Addr().Is4In6() {
		return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96).Masked()
	}
	return p.Masked()
}

// Shared sets, per family.
func sharedSets(f Family) []*Set {
	addr := f.addrType()
	vm := []DataType{TypeVerdict}
	sets := []*Set{
		{Name: serviceIPsMap, Key: []DataType{addr, TypeInetProto, TypeInetService}, Value: vm},
		{Name: serviceNodePortsMap, Key: []DataType{TypeInetProto, TypeInetService}, Value: vm},
		{Name: noEndpointServicesMap, Key: []DataType{addr, TypeInetProto, TypeInetService}, Value: vm},
		{Name: noEndpointNodePortsMap, Key: []DataType{TypeInetProto, TypeInetService}, Value: vm},
		{Name: firewallIPsMap, Key: []DataType{addr, TypeInetProto, TypeInetService}, Value: vm},
		{Name: hairpinSet, Key: []DataType{addr, addr}},
	}
	for i := 0; i < endpointShards; i++ {
		sets = append(sets, endpointMap(f, i))
	}
	return sets
}

func endpointMap(f Family, shard int) *Set {
	return &Set{Name: endpointMapName(shard), Key: []DataType{TypeInteger}, Value: []DataType{f.addrType(), TypeInetService}}
}

var (
	dispatchFields = []KeyField{FieldDaddr, FieldL4Proto, FieldDport}
	nodePortFields = []KeyField{FieldL4Proto, FieldDport}
)

// baseChains are the fixed chains of a table, with their rules.
func baseChains(g globalConfig) []*Chain {
	f := g.family
	ctNew := MatchCtNew{}
	notLoopback := MatchAddr{Not: true, Prefix: f.loopback()}
	base := func(name, typ, hook string, prio int32, rules ...Rule) *Chain {
		return &Chain{Name: name, Base: &BaseChain{Type: typ, Hook: hook, Priority: prio}, Rules: rules}
	}
	regular := func(name string, rules ...Rule) *Chain { return &Chain{Name: name, Rules: rules} }

	var clusterIPsCheck []Rule
	if g.serviceCIDR.IsValid() {
		// Anything still addressed to the service CIDR after DNAT matched
		// no Service port: answer at once instead of letting it leave.
		clusterIPsCheck = append(clusterIPsCheck, R(MatchAddr{Prefix: g.serviceCIDR}, Goto(rejectChain)))
	}
	return []*Chain{
		// Rejects happen in prerouting (allowed since Linux 5.9), before
		// the routing decision: a packet for a service IP that is
		// forwarded back out of the pod bridge makes the kernel send an
		// ICMP redirect first, which uses up the per-host ICMP rate limit
		// so that the reject's "port unreachable" is never sent (the
		// client hangs); the redirect would also teach the pod that the
		// service IP is on-link.
		base("filter-prerouting", "filter", "prerouting", prioFilterPreDNAT,
			R(ctNew, Jump(firewallCheckChain))),
		// After DNAT: what still goes to a service address was not
		// DNATed (no endpoint, or none for its traffic policy).
		base("filter-prerouting-post-dnat", "filter", "prerouting", prioFilterPostDNAT,
			R(ctNew, Jump(serviceEndpointsCheck)),
			R(ctNew, Jump(clusterIPsCheckChain))),
		base("filter-input", "filter", "input", prioFilterPreDNAT,
			R(ctNew, Jump(nodePortEndpointsCheck))),
		base("filter-output", "filter", "output", prioFilterPreDNAT,
			R(ctNew, Jump(firewallCheckChain))),
		base("filter-output-post-dnat", "filter", "output", prioFilterPostDNAT,
			R(ctNew, Jump(serviceEndpointsCheck)),
			R(ctNew, Jump(clusterIPsCheckChain))),
		base("nat-prerouting", "nat", "prerouting", prioDNAT, R(Jump(servicesChain))),
		base("nat-output", "nat", "output", prioDNAT, R(Jump(servicesChain))),
		base("nat-postrouting", "nat", "postrouting", prioSNAT, R(Jump(masqueradingChain))),

		regular(firewallCheckChain, R(VMap{Fields: dispatchFields, Map: firewallIPsMap})),
		regular(serviceEndpointsCheck, R(VMap{Fields: dispatchFields, Map: noEndpointServicesMap})),
		regular(nodePortEndpointsCheck,
			R(MatchFibLocal{}, notLoopback, VMap{Fields: nodePortFields, Map: noEndpointNodePortsMap})),
		regular(clusterIPsCheckChain, clusterIPsCheck...),
		regular(rejectChain, R(Reject{})),
		regular(servicesChain,
			R(VMap{Fields: dispatchFields, Map: serviceIPsMap}),
			R(MatchFibLocal{}, notLoopback, VMap{Fields: nodePortFields, Map: serviceNodePortsMap})),
		regular(markMasqChain, R(SetMark{Bits: MasqueradeMark})),
		regular(masqueradingChain,
			// hairpin: a pod that reached itself through a Service.
			R(MatchCtDNAT{}, MatchSet{Fields: []KeyField{FieldSaddr, FieldDaddr}, Set: hairpinSet}, SetMark{Bits: MasqueradeMark}),
			R(MatchMarkClear{Bits: MasqueradeMark}, Return()),
			R(SetMark{Bits: MasqueradeMark, Xor: true}),
			R(Masquerade{})),
	}
}

// fragment is everything one Service port puts into one family's table.
type fragment struct {
	chains []*Chain             // owned chains
	sets   []*Set               // owned sets (affinity maps)
	elems  map[string][]Element // elements in shared sets, by set name
	groups map[string]*group    // endpoint groups by policy ("cluster", "local")
	addrs  map[netip.Addr]bool  // endpoint addresses (hairpin set)
	setOf  map[string]*Set      // shared set specs by name, for elems
}

// group is one endpoint group: its slot in the endpoint maps (when it has
// one: groups with session affinity use endpoint chains instead) and its
// endpoints in key order.
type group struct {
	hasSlot   bool
	slot      uint32
	endpoints []netip.AddrPort
}

func (g *group) shard() int      { return int(g.slot % endpointShards) }
func (g *group) offset() uint32  { return g.slot << slotShift }
func (g *group) mapName() string { return endpointMapName(g.shard()) }

func (g *group) elements(f Family) []Element {
	out := make([]Element, len(g.endpoints))
	for i, ep := range g.endpoints {
		out[i] = Element{Key: []Val{IntVal(g.offset() + uint32(i))}, Value: []Val{AddrVal(ep.Addr()), PortVal(ep.Port())}}
	}
	return out
}

// slotAlloc hands out endpoint-group slots.
type slotAlloc struct {
	next uint32
	free []uint32
}

func (a *slotAlloc) get() uint32 {
	if n := len(a.free); n > 0 {
		s := a.free[n-1]
		a.free = a.free[:n-1]
		return s
	}
	s := a.next
	a.next++
	return s
}

func (a *slotAlloc) put(s uint32) { a.free = append(a.free, s) }

// builder computes fragments for one family.
type builder struct {
	g      globalConfig
	shared map[string]*Set
	slots  *slotAlloc
	// allocated records slots handed out while building (to give back if
	// the transaction fails).
	allocated []uint32
}

func newBuilder(g globalConfig, slots *slotAlloc) *builder {
	b := &builder{g: g, shared: map[string]*Set{}, slots: slots}
	for _, s := range sharedSets(g.family) {
		b.shared[s.Name] = s
	}
	return b
}

// fragment builds a Service port's fragment, reusing the slots and endpoint
// order of old (nil for a new one). It returns nil when the port has no
// rules in this family (headless, another family, unsupported protocol).
func (b *builder) fragment(sp *proxy.ServicePort, allEps []proxy.Endpoint, old *fragment) *fragment {
	f := b.g.family
	proto, ok := ParseProto(sp.Protocol)
	if !ok || sp.Port <= 0 || sp.Port > 65535 {
		return nil
	}
	var clusterIP netip.Addr
	for _, ip := range sp.ClusterIPs {
		if ip.IsValid() && f.has(ip) {
			clusterIP = ip.Unmap()
			break
		}
	}
	if !clusterIP.IsValid() {
		return nil
	}
	var eps []proxy.Endpoint
	for _, ep := range allEps {
		if ep.IP.IsValid() && f.has(ep.IP) && ep.Port > 0 && ep.Port <= 65535 {
			eps = append(eps, ep)
		}
	}
	fr := &fragment{elems: map[string][]Element{}, groups: map[string]*group{}, addrs: map[netip.Addr]bool{}, setOf: b.shared}
	port := uint16(sp.Port)
	addElem := func(set string, e Element) { fr.elems[set] = append(fr.elems[set], e) }
	svcKey := func(ip netip.Addr) []Val { return []Val{AddrVal(ip), ProtoVal(proto), PortVal(port)} }

	cat := proxy.CategorizeEndpoints(sp, eps)
	clusterEps, localEps, hasAny := cat.Cluster, cat.Local, cat.HasAny
	base := servicePortChainNameBase(sp.Name, proto)
	clusterChain := clusterChainPrefix + base
	localChain := localChainPrefix + base
	extChain := externalChainPrefix + base
	fwChain := firewallChainPrefix + base

	usesClusterChain := len(clusterEps) > 0
	usesLocalChain := len(localEps) > 0

	internalChain, hasInternal := clusterChain, hasAny
	if sp.InternalPolicyLocal {
		internalChain = localChain
		hasInternal = hasAny && len(localEps) > 0
	}
	externalPolicyChain, hasExternal := clusterChain, hasAny
	if sp.ExternalPolicyLocal {
		externalPolicyChain = localChain
		hasExternal = hasAny && len(localEps) > 0
	}
	usesExtChain := hasAny && sp.ExternallyAccessible()

	// Verdicts for traffic that cannot be served: reject when the Service
	// has no endpoint at all, drop when only the Local policy has none.
	internalNoEP, externalNoEP := Goto(rejectChain), Goto(rejectChain)
	if hasAny {
		internalNoEP, externalNoEP = Drop(), Drop()
	}

	if hasInternal {
		addElem(serviceIPsMap, Element{Key: svcKey(clusterIP), Verdict: Goto(internalChain)})
	} else {
		addElem(noEndpointServicesMap, Element{Key: svcKey(clusterIP), Verdict: internalNoEP})
	}

	var externalIPs, lbIPs []netip.Addr
	for _, ip := range sp.ExternalIPs {
		if ip.IsValid() && f.has(ip) {
			externalIPs = append(externalIPs, ip.Unmap())
		}
	}
	for _, ip := range sp.LoadBalancerIPs {
		if ip.IsValid() && f.has(ip) {
			lbIPs = append(lbIPs, ip.Unmap())
		}
	}
	for _, ip := range externalIPs {
		if hasAny {
			addElem(serviceIPsMap, Element{Key: svcKey(ip), Verdict: Goto(extChain)})
		}
		if !hasExternal {
			addElem(noEndpointServicesMap, Element{Key: svcKey(ip), Verdict: externalNoEP})
		}
	}

	var sourceRanges []netip.Prefix
	for _, p := range sp.LoadBalancerSourceRanges {
		if p.IsValid() && f.has(p.Addr()) {
			sourceRanges = append(sourceRanges, unmapPrefix(p))
		}
	}
	if len(lbIPs) > 0 && len(sp.LoadBalancerSourceRanges) > 0 {
		// loadBalancerSourceRanges: only the listed sources (and, when a
		// range holds a node IP, the LB IPs themselves: traffic from the
		// node to its own LB IP comes back with the LB IP as source).
		fw := &Chain{Name: fwChain}
		allowFromNode := false
		for _, p := range sourceRanges {
			fw.Rules = append(fw.Rules, R(MatchAddr{Src: true, Prefix: p}, Return()))
			for _, n := range b.g.nodeIPs {
				if p.Contains(n) {
					allowFromNode = true
				}
			}
		}
		if allowFromNode {
			for _, ip := range lbIPs {
				fw.Rules = append(fw.Rules, R(MatchAddr{Src: true, Prefix: netip.PrefixFrom(ip, ip.BitLen())}, Return()))
			}
		}
		fw.Rules = append(fw.Rules, R(Drop()))
		fr.chains = append(fr.chains, fw)
		for _, ip := range lbIPs {
			addElem(firewallIPsMap, Element{Key: svcKey(ip), Verdict: Goto(fwChain)})
		}
	}
	for _, ip := range lbIPs {
		if hasAny {
			addElem(serviceIPsMap, Element{Key: svcKey(ip), Verdict: Goto(extChain)})
		}
		if !hasExternal {
			addElem(noEndpointServicesMap, Element{Key: svcKey(ip), Verdict: externalNoEP})
		}
	}
	if sp.NodePort > 0 && sp.NodePort <= 65535 {
		npKey := []Val{ProtoVal(proto), PortVal(uint16(sp.NodePort))}
		if hasAny {
			// NodePorts are not subject to loadBalancerSourceRanges (as
			// in kube-proxy).
			addElem(serviceNodePortsMap, Element{Key: npKey, Verdict: Goto(extChain)})
		}
		if !hasExternal {
			addElem(noEndpointNodePortsMap, Element{Key: npKey, Verdict: externalNoEP})
		}
	}

	// External traffic (NodePort, LB, external IPs).
	if usesExtChain {
		ext := &Chain{Name: extChain}
		if !sp.ExternalPolicyLocal {
			// Endpoints may be on other nodes: masquerade so that replies
			// come back through this node.
			ext.Rules = append(ext.Rules, R(Jump(markMasqChain)))
		} else {
			// Pods and the node itself reaching an external address are
			// not subject to the Local policy (as if they went out to the
			// load balancer and back).
			if usesClusterChain && b.g.clusterCIDR.IsValid() {
				ext.Rules = append(ext.Rules, R(MatchAddr{Src: true, Prefix: b.g.clusterCIDR}, Goto(clusterChain)))
			}
			// The node's own traffic has a local source address (an LB IP
			// may be local): masquerade it.
			ext.Rules = append(ext.Rules, R(MatchFibLocal{Src: true}, Jump(markMasqChain)))
			if usesClusterChain {
				ext.Rules = append(ext.Rules, R(MatchFibLocal{Src: true}, Goto(clusterChain)))
			}
		}
		if hasExternal {
			ext.Rules = append(ext.Rules, R(Goto(externalPolicyChain)))
		}
		fr.chains = append(fr.chains, ext)
	}

	// Policy chains: one endpoint group each.
	masqRule := func(chain string) []Rule {
		// Traffic to the ClusterIP from outside the cluster CIDR (the node
		// itself, or a host routing the service CIDR to this node) is
		// masqueraded.
		if chain != internalChain || !hasInternal || !b.g.clusterCIDR.IsValid() {
			return nil
		}
		return []Rule{R(MatchAddr{Prefix: netip.PrefixFrom(clusterIP, clusterIP.BitLen())}, MatchDport{Proto: proto, Port: port},
			MatchAddr{Src: true, Not: true, Prefix: b.g.clusterCIDR}, Jump(markMasqChain))}
	}
	endpointChains := map[netip.AddrPort]bool{}
	policy := func(key, chain string, eps []proxy.Endpoint) {
		var oldGroup *group
		if old != nil {
			oldGroup = old.groups[key]
		}
		affinity := sp.AffinityTimeout > 0
		g := b.group(eps, oldGroup, !affinity)
		fr.groups[key] = g
		for _, ep := range g.endpoints {
			fr.addrs[ep.Addr()] = true
		}
		c := &Chain{Name: chain, Rules: masqRule(chain)}
		n := uint32(len(g.endpoints))
		if !affinity {
			fr.elems[g.mapName()] = append(fr.elems[g.mapName()], g.elements(f)...)
			c.Rules = append(c.Rules, R(DNATRandom{Proto: proto, Map: g.mapName(), Mod: n, Offset: g.offset()}))
			fr.chains = append(fr.chains, c)
			return
		}
		// Session affinity, as kube-proxy does it: one chain and one
		// dynamic set of client addresses per endpoint. A client in an
		// endpoint's set goes back to it; others pick one at random, and
		// the endpoint's chain records them.
		timeout := max(sp.AffinityTimeout.Truncate(1e9), 1e9)
		epChain := func(ep netip.AddrPort) string {
			return endpointChainPrefix + servicePortEndpointChainNameBase(sp.Name, proto, ep)
		}
		affSet := func(ep netip.AddrPort) string {
			return affinitySetPrefix + servicePortEndpointChainNameBase(sp.Name, proto, ep)
		}
		for _, ep := range g.endpoints {
			if !endpointChains[ep] {
				endpointChains[ep] = true
				set := &Set{Name: affSet(ep), Key: []DataType{f.addrType()}, Timeout: timeout}
				fr.sets = append(fr.sets, set)
				fr.chains = append(fr.chains, &Chain{Name: epChain(ep), Rules: []Rule{
					R(UpdateSaddr{Set: set.Name}),
					R(DNATTo{Proto: proto, Endpoint: ep}),
				}})
			}
			c.Rules = append(c.Rules, R(MatchSet{Fields: []KeyField{FieldSaddr}, Set: affSet(ep)}, Goto(epChain(ep))))
		}
		for i, ep := range g.endpoints {
			if uint32(i) < n-1 {
				c.Rules = append(c.Rules, R(MatchNumgen{Mod: n - uint32(i), Value: 0}, Goto(epChain(ep))))
			} else {
				c.Rules = append(c.Rules, R(Goto(epChain(ep))))
			}
		}
		fr.chains = append(fr.chains, c)
	}
	if usesClusterChain {
		policy("cluster", clusterChain, clusterEps)
	}
	if usesLocalChain {
		policy("local", localChain, localEps)
	}
	for name := range fr.elems {
		slices.SortFunc(fr.elems[name], func(a, b Element) int { return cmp.Compare(a.KeyString(), b.KeyString()) })
	}
	return fr
}

// group orders a group's endpoints, keeping every endpoint that stays at the
// index it had (so that a change rewrites as few map elements as possible),
// and reuses the old group's slot.
func (b *builder) group(eps []proxy.Endpoint, old *group, needSlot bool) *group {
	want := make([]netip.AddrPort, 0, len(eps))
	seen := map[netip.AddrPort]bool{}
	for _, ep := range eps {
		ap := netip.AddrPortFrom(ep.IP.Unmap(), uint16(ep.Port))
		if !seen[ap] {
			seen[ap] = true
			want = append(want, ap)
		}
	}
	slices.SortFunc(want, func(a, b netip.AddrPort) int { return a.Compare(b) })
	if len(want) > maxGroupEndpoints {
		want = want[:maxGroupEndpoints]
		seen = map[netip.AddrPort]bool{}
		for _, ap := range want {
			seen[ap] = true
		}
	}
	g := &group{endpoints: make([]netip.AddrPort, len(want)), hasSlot: needSlot}
	switch {
	case !needSlot:
	case old != nil && old.hasSlot:
		g.slot = old.slot
	default:
		g.slot = b.slots.get()
		b.allocated = append(b.allocated, g.slot)
	}
	placed := map[netip.AddrPort]bool{}
	filled := make([]bool, len(want))
	if old != nil {
		for i, ap := range old.endpoints {
			if i < len(want) && seen[ap] {
				g.endpoints[i] = ap
				filled[i] = true
				placed[ap] = true
			}
		}
	}
	next := 0
	for _, ap := range want {
		if placed[ap] {
			continue
		}
		for filled[next] {
			next++
		}
		g.endpoints[next] = ap
		filled[next] = true
	}
	return g
}
