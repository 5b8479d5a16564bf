package ipvs

import (
	"net/netip"
	"slices"

	"github.com/skiff-dev/skiff/netagent/proxy"
)

// portPlan is what one Service port asks of the kernel.
type portPlan struct {
	name proxy.ServicePortName
	sp   *proxy.ServicePort
	// vs: the virtual servers, one per ClusterIP, external IP, load
	// balancer IP and (NodePort) node IP.
	vs []*vsSpec
	// bind: the addresses to hold on the interface (ClusterIPs, external
	// and load balancer IPs that are not node addresses).
	bind []netip.Addr
	// hasAny: some endpoint can take traffic (else: REJECT).
	hasAny bool
	// hairpin: this node's endpoint addresses that may be chosen (a pod
	// reaching itself through the Service is masqueraded; only a local pod
	// can).
	hairpin []netip.Addr
	// rules: the port's iptables rules.
	rules portRules
}

// planPort computes one Service port's virtual servers. Only IPv4 is
// programmed; unsupported protocols get nothing.
func planPort(st *proxy.State, sp *proxy.ServicePort, sched string) *portPlan {
	p := &portPlan{name: sp.Name, sp: sp}
	proto := protoNumber(sp.Protocol)
	if proto == 0 || proto == protoSCTP || len(sp.ClusterIPs) == 0 {
		return p
	}
	c := proxy.CategorizeEndpoints(sp, st.Endpoints[sp.Name])
	p.hasAny = c.HasAny
	internal, external := c.Cluster, c.Cluster
	if sp.InternalPolicyLocal {
		internal = c.Local
	}
	if sp.ExternalPolicyLocal {
		external = c.Local
	}
	var flags, timeout uint32
	if sp.AffinityTimeout > 0 {
		flags = FlagPersistent
		timeout = uint32(sp.AffinityTimeout.Seconds())
		if timeout == 0 {
			timeout = 1
		}
	}
	add := func(a netip.Addr, port int32, eps []proxy.Endpoint) {
		if !a.Is4() || port <= 0 || port > 65535 {
			return
		}
		v := &vsSpec{key: vsKey{proto: proto, addr: a, port: uint16(port)}, sched: sched, flags: flags, timeout: timeout,
			dests: make(map[netip.AddrPort]int, len(eps))}
		for _, e := range eps {
			if e.IP.Is4() && e.Port > 0 && e.Port <= 65535 {
				v.dests[e.AddrPort()] = 1
			}
		}
		p.vs = append(p.vs, v)
	}
	isNode := func(a netip.Addr) bool { return slices.Contains(st.NodeIPs, a) }
	for _, a := range sp.ClusterIPs {
		add(a, sp.Port, internal)
		if a.Is4() {
			p.bind = append(p.bind, a)
		}
	}
	for _, list := range [][]netip.Addr{sp.ExternalIPs, sp.LoadBalancerIPs} {
		for _, a := range list {
			add(a, sp.Port, external)
			if a.Is4() && !isNode(a) {
				p.bind = append(p.bind, a)
			}
		}
	}
	if sp.NodePort != 0 {
		for _, a := range st.NodeIPs {
			add(a, sp.NodePort, external)
		}
	}
	for _, e := range c.Reachable {
		if e.IP.Is4() && e.IsLocal {
			p.hairpin = append(p.hairpin, e.IP)
		}
	}
	p.rules = renderPort(st, p)
	return p
}
