package iptables

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/netagent/proxy"
)

// Chains of kube-proxy's layout that Skiff writes.
const (
	chainServices         = "KUBE-SERVICES"          // nat and filter
	chainExternalServices = "KUBE-EXTERNAL-SERVICES" // filter
	chainNodePorts        = "KUBE-NODEPORTS"         // nat and filter
	chainPostrouting      = "KUBE-POSTROUTING"       // nat
	chainMarkMasq         = "KUBE-MARK-MASQ"         // nat
	chainForward          = "KUBE-FORWARD"           // filter
	chainFirewall         = "KUBE-PROXY-FIREWALL"    // filter
	chainHint             = "KUBE-IPTABLES-HINT"     // mangle, empty

	// masqMark is the packet mark of traffic to masquerade (bit 14, as
	// kube-proxy's default --iptables-masquerade-bit).
	masqMark = "0x4000"
)

// Per-service chain prefixes.
const (
	prefixSVC = "KUBE-SVC-" // Cluster policy: dispatch to all usable endpoints
	prefixSVL = "KUBE-SVL-" // Local policy: dispatch to this node's endpoints
	prefixEXT = "KUBE-EXT-" // external traffic (NodePort, LB, external IPs)
	prefixFW  = "KUBE-FW-"  // loadBalancerSourceRanges
	prefixSEP = "KUBE-SEP-" // one endpoint: DNAT
)

// portProtoHash is kube-proxy's chain-name hash: sha256 of the service port
// name ("ns/name:port") and the lower-case protocol, base32, the first 16
// characters. With a 9-character prefix the name stays within iptables'
// 28-character limit; 16 base32 characters are 80 bits, so collisions are
// not a practical concern.
func portProtoHash(name, proto string) string {
	h := sha256.Sum256([]byte(name + proto))
	return base32.StdEncoding.EncodeToString(h[:])[:16]
}

func svcChainName(name, proto string) string { return prefixSVC + portProtoHash(name, proto) }
func svlChainName(name, proto string) string { return prefixSVL + portProtoHash(name, proto) }
func extChainName(name, proto string) string { return prefixEXT + portProtoHash(name, proto) }
func fwChainName(name, proto string) string  { return prefixFW + portProtoHash(name, proto) }

// sepChainName is kube-proxy's endpoint chain name: the hash of the service
// port name, the protocol and the endpoint ("ip:port").
func sepChainName(name, proto, endpoint string) string {
	h := sha256.Sum256([]byte(name + proto + endpoint))
	return prefixSEP + base32.StdEncoding.EncodeToString(h[:])[:16]
}

// isServiceChain reports whether chain is a per-service chain of this
// layout (the chains a full sync may delete).
func isServiceChain(chain string) bool {
	for _, p := range []string{prefixSVC, prefixSVL, prefixEXT, prefixFW, prefixSEP} {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}

// rule is one iptables rule: its chain and its arguments after
// "-A chain", as the restore input gets them.
type rule struct {
	chain string
	args  []string
}

// target is the rule's -j argument ("" without one).
func (r rule) target() string {
	for i := 0; i+1 < len(r.args); i++ {
		if r.args[i] == "-j" {
			return r.args[i+1]
		}
	}
	return ""
}

// spec renders the arguments; a --comment value with spaces or quotes is
// double-quoted.
func (r rule) spec() string {
	var b strings.Builder
	for i, a := range r.args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i > 0 && r.args[i-1] == "--comment" && strings.ContainsAny(a, " \t\"'\\") {
			b.WriteString(strconv.Quote(a))
			continue
		}
		b.WriteString(a)
	}
	return b.String()
}

// chainRules is one per-service nat chain and its rules.
type chainRules struct {
	name  string
	rules []rule
}

// serviceRules is everything one Service port contributes.
type serviceRules struct {
	// chains: the nat chains it owns, rewritten as a whole.
	chains []chainRules
	// shared: its rules in nat KUBE-SERVICES and KUBE-NODEPORTS.
	shared []rule
	// filter: its rules in the filter table.
	filter []rule
}

// generator turns Service ports into rules. It is not safe for concurrent
// use (the probability cache).
type generator struct {
	clusterCIDR netip.Prefix // invalid: no "from outside the cluster" masquerade
	nodeIPs     []netip.Addr
	probs       []string
}

// probability is 1/n printed with 10 decimals, as kube-proxy does
// ("0.3333333333"); cached, since formatting floats is not cheap.
func (g *generator) probability(n int) string {
	for len(g.probs) <= n {
		i := len(g.probs)
		if i == 0 {
			g.probs = append(g.probs, "")
			continue
		}
		g.probs = append(g.probs, fmt.Sprintf("%0.10f", 1.0/float64(i)))
	}
	return g.probs[n]
}

func v4(addrs []netip.Addr) []netip.Addr {
	var out []netip.Addr
	for _, a := range addrs {
		if a.Is4() {
			out = append(out, a)
		}
	}
	return out
}

// service generates kube-proxy's rules for one Service port (IPv4 only;
// a port without an IPv4 ClusterIP gives nothing).
func (g *generator) service(sp *proxy.ServicePort, allEps []proxy.Endpoint) serviceRules {
	var out serviceRules
	clusterIPs := v4(sp.ClusterIPs)
	if len(clusterIPs) == 0 {
		return out
	}
	var eps []proxy.Endpoint
	for _, e := range allEps {
		if e.IP.Is4() {
			eps = append(eps, e)
		}
	}
	externalIPs, lbIPs := v4(sp.ExternalIPs), v4(sp.LoadBalancerIPs)
	var ranges []netip.Prefix
	for _, p := range sp.LoadBalancerSourceRanges {
		if p.Addr().Is4() {
			ranges = append(ranges, p)
		}
	}
	// Work on a copy with only the IPv4 addresses, so that the policy
	// helpers see what is programmed here.
	spv4 := *sp
	spv4.ExternalIPs, spv4.LoadBalancerIPs = externalIPs, lbIPs
	sp = &spv4

	proto := strings.ToLower(sp.Protocol)
	name := sp.Name.PortString()
	port := strconv.Itoa(int(sp.Port))
	cat := proxy.CategorizeEndpoints(sp, eps)

	svcChain, svlChain := svcChainName(name, proto), svlChainName(name, proto)
	extChain, fwChain := extChainName(name, proto), fwChainName(name, proto)
	usesCluster := len(cat.Cluster) > 0 && sp.UsesClusterEndpoints()
	usesLocal := len(cat.Local) > 0 && sp.UsesLocalEndpoints()

	internalChain, hasInternal := svcChain, cat.HasAny
	if sp.InternalPolicyLocal {
		internalChain = svlChain
		hasInternal = hasInternal && len(cat.Local) > 0
	}
	externalPolicyChain, hasExternal := svcChain, cat.HasAny
	if sp.ExternalPolicyLocal {
		externalPolicyChain = svlChain
		hasExternal = hasExternal && len(cat.Local) > 0
	}
	usesExt := cat.HasAny && sp.ExternallyAccessible()
	usesFW := cat.HasAny && len(lbIPs) > 0 && len(ranges) > 0
	lbChain := extChain
	if usesFW {
		lbChain = fwChain
	}

	// What the filter table does with traffic that has no endpoint.
	var internalTarget, internalComment, externalTarget, externalComment string
	if !cat.HasAny {
		internalTarget, internalComment = "REJECT", name+" has no endpoints"
		externalTarget, externalComment = internalTarget, internalComment
	} else {
		if !hasInternal {
			internalTarget, internalComment = "DROP", name+" has no local endpoints"
		}
		if !hasExternal {
			externalTarget, externalComment = "DROP", name+" has no local endpoints"
		}
	}

	match := func(dst netip.Addr, dport string) []string {
		a := []string{"-m", proto, "-p", proto}
		if dst.IsValid() {
			a = append(a, "-d", dst.String())
		}
		return append(a, "--dport", dport)
	}
	with := func(parts ...[]string) []string {
		var a []string
		for _, p := range parts {
			a = append(a, p...)
		}
		return a
	}
	comment := func(c string) []string { return []string{"-m", "comment", "--comment", c} }
	jump := func(t string) []string { return []string{"-j", t} }

	// ClusterIPs.
	for _, vip := range clusterIPs {
		if hasInternal {
			out.shared = append(out.shared, rule{chainServices, with(comment(name+" cluster IP"), match(vip, port), jump(internalChain))})
		} else {
			out.filter = append(out.filter, rule{chainServices, with(comment(internalComment), match(vip, port), jump(internalTarget))})
		}
	}
	// External IPs.
	for _, ip := range externalIPs {
		if cat.HasAny {
			out.shared = append(out.shared, rule{chainServices, with(comment(name+" external IP"), match(ip, port), jump(extChain))})
		}
		if !hasExternal {
			out.filter = append(out.filter, rule{chainExternalServices, with(comment(externalComment), match(ip, port), jump(externalTarget))})
		}
	}
	// Load balancer IPs.
	for _, ip := range lbIPs {
		if cat.HasAny {
			out.shared = append(out.shared, rule{chainServices, with(comment(name+" loadbalancer IP"), match(ip, port), jump(lbChain))})
		}
		if usesFW {
			out.filter = append(out.filter, rule{chainFirewall, with(comment(name+" traffic not accepted by "+fwChain), match(ip, port), jump("DROP"))})
		}
	}
	if !hasExternal {
		for _, ip := range lbIPs {
			out.filter = append(out.filter, rule{chainExternalServices, with(comment(externalComment), match(ip, port), jump(externalTarget))})
		}
	}
	// NodePort.
	if sp.NodePort != 0 {
		np := strconv.Itoa(int(sp.NodePort))
		if cat.HasAny {
			out.shared = append(out.shared, rule{chainNodePorts, with(comment(name), match(netip.Addr{}, np), jump(extChain))})
		}
		if !hasExternal {
			out.filter = append(out.filter, rule{chainExternalServices, with(comment(externalComment),
				[]string{"-m", "addrtype", "--dst-type", "LOCAL"}, match(netip.Addr{}, np), jump(externalTarget))})
		}
	}
	// Health check node port: accept it whether or not there are local
	// endpoints (the server answers 503 then).
	if sp.HealthCheckNodePort != 0 {
		out.filter = append(out.filter, rule{chainNodePorts, with(comment(name+" health check node port"),
			[]string{"-m", "tcp", "-p", "tcp", "--dport", strconv.Itoa(int(sp.HealthCheckNodePort))}, jump("ACCEPT"))})
	}

	chains := map[string]*chainRules{}
	add := func(chain string, args []string) {
		c := chains[chain]
		if c == nil {
			c = &chainRules{name: chain}
			chains[chain] = c
		}
		c.rules = append(c.rules, rule{chain, args})
	}
	declare := func(chain string) {
		if chains[chain] == nil {
			chains[chain] = &chainRules{name: chain}
		}
	}

	// Internal traffic: masquerade what comes from outside the cluster
	// (a host routing the service CIDR to this node), then dispatch.
	if hasInternal && g.clusterCIDR.IsValid() {
		for _, vip := range clusterIPs {
			add(internalChain, with(comment(name+" cluster IP"), match(vip, port),
				[]string{"!", "-s", g.clusterCIDR.String()}, jump(chainMarkMasq)))
		}
	}
	// External traffic.
	if usesExt {
		declare(extChain)
		if !sp.ExternalPolicyLocal {
			add(extChain, with(comment("masquerade traffic for "+name+" external destinations"), jump(chainMarkMasq)))
		} else {
			// Pods and the node itself reaching an external address are
			// sent to the cluster endpoints ("short-circuit"), as if they
			// had gone out to the load balancer and back.
			if g.clusterCIDR.IsValid() {
				add(extChain, with(comment("pod traffic for "+name+" external destinations"),
					[]string{"-s", g.clusterCIDR.String()}, jump(svcChain)))
			}
			add(extChain, with(comment("masquerade LOCAL traffic for "+name+" external destinations"),
				[]string{"-m", "addrtype", "--src-type", "LOCAL"}, jump(chainMarkMasq)))
			add(extChain, with(comment("route LOCAL traffic for "+name+" external destinations"),
				[]string{"-m", "addrtype", "--src-type", "LOCAL"}, jump(svcChain)))
		}
		if hasExternal {
			add(extChain, jump(externalPolicyChain))
		}
	}
	// Load balancer source ranges.
	if usesFW {
		declare(fwChain)
		allowNode := false
		for _, r := range ranges {
			add(fwChain, with(comment(name+" loadbalancer IP"), []string{"-s", r.String()}, jump(extChain)))
			for _, n := range g.nodeIPs {
				if r.Contains(n) {
					allowNode = true
				}
			}
		}
		if allowNode {
			for _, ip := range lbIPs {
				add(fwChain, with(comment(name+" loadbalancer IP"), []string{"-s", ip.String()}, jump(extChain)))
			}
		}
		// Whatever reaches the end is not DNATed and is dropped by
		// KUBE-PROXY-FIREWALL in the filter table.
		add(fwChain, comment("other traffic to "+name+" will be dropped by KUBE-PROXY-FIREWALL"))
	}
	affinity := int(sp.AffinityTimeout.Seconds())
	dispatch := func(chain string, eps []proxy.Endpoint) {
		declare(chain)
		if affinity > 0 {
			for _, e := range eps {
				sep := sepChainName(name, proto, e.String())
				add(chain, with(comment(name+" -> "+e.String()),
					[]string{"-m", "recent", "--name", sep, "--rcheck", "--seconds", strconv.Itoa(affinity), "--reap"}, jump(sep)))
			}
		}
		n := len(eps)
		for i, e := range eps {
			a := comment(name + " -> " + e.String())
			if i < n-1 {
				a = append(a, "-m", "statistic", "--mode", "random", "--probability", g.probability(n-i))
			}
			add(chain, with(a, jump(sepChainName(name, proto, e.String()))))
		}
	}
	if usesCluster {
		dispatch(svcChain, cat.Cluster)
	}
	if usesLocal {
		dispatch(svlChain, cat.Local)
	}
	// Endpoint chains.
	var seps []string
	for _, e := range cat.Reachable {
		sep := sepChainName(name, proto, e.String())
		seps = append(seps, sep)
		add(sep, with(comment(name), []string{"-s", e.IP.String()}, jump(chainMarkMasq)))
		a := comment(name)
		if affinity > 0 {
			a = append(a, "-m", "recent", "--name", sep, "--set")
		}
		add(sep, with(a, []string{"-m", proto, "-p", proto, "-j", "DNAT", "--to-destination", e.String()}))
	}
	// A chain that is used but got no rule (e.g. the internal chain of a
	// port with only masquerade-free rules) still has to exist.
	for _, c := range []string{svcChain, svlChain, extChain, fwChain} {
		if cr := chains[c]; cr != nil {
			out.chains = append(out.chains, *cr)
		}
	}
	for _, s := range seps {
		out.chains = append(out.chains, *chains[s])
	}
	return out
}

// ChainNames are the per-service chain names of one Service port, as
// kube-proxy names them (for tools and tests; not every chain exists for
// every port).
type ChainNames struct {
	SVC, SVL, EXT, FW string
}

// ChainsOf returns the chain names of a Service port.
func ChainsOf(n proxy.ServicePortName) ChainNames {
	name, proto := n.PortString(), strings.ToLower(n.Protocol)
	return ChainNames{
		SVC: svcChainName(name, proto), SVL: svlChainName(name, proto),
		EXT: extChainName(name, proto), FW: fwChainName(name, proto),
	}
}

// EndpointChain returns the KUBE-SEP chain name of one endpoint
// ("ip:port") of a Service port.
func EndpointChain(n proxy.ServicePortName, endpoint string) string {
	return sepChainName(n.PortString(), strings.ToLower(n.Protocol), endpoint)
}
