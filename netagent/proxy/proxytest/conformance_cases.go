package proxytest

import (
	"fmt"
	"net/netip"

	"github.com/skiff-dev/skiff/api"
)

// The Services of the Conformance table: one port "http" (80 -> 8080),
// NodePort 30080, load balancer IP LBIP, external IP ExternalIP.
var (
	VIP        = netip.MustParseAddr("10.96.0.10")
	LBIP       = netip.MustParseAddr("192.168.99.10")
	ExternalIP = netip.MustParseAddr("192.168.99.20")
)

const (
	confNodePort = 30080
	confPort     = 80
	confTarget   = 8080
	otherNode    = "node-b"
)

// The endpoints of the Conformance table: two on this node, two on
// another node.
var (
	Local1  = netip.AddrPortFrom(netip.MustParseAddr("10.244.0.2"), confTarget)
	Local2  = netip.AddrPortFrom(netip.MustParseAddr("10.244.0.3"), confTarget)
	Remote1 = netip.AddrPortFrom(netip.MustParseAddr("10.244.1.2"), confTarget)
	Remote2 = netip.AddrPortFrom(netip.MustParseAddr("10.244.1.3"), confTarget)
)

// Backend names, as proxy.Backend.Name returns them.
const (
	ModeIPTables = "iptables"
	ModeNFTables = "nftables"
	ModeIPVS     = "ipvs"
)

// Why the ipvs mode differs (netagent/proxy/ipvs/README.md lists both).
const (
	whyIPVSEmpty = "IPVS answers a connection to a virtual server without real servers with port unreachable " +
		"(ip_vs_leave); the ipvs mode has no rule to drop it"
	whyIPVSNoShortCircuit = "IPVS has one real-server list per virtual server, whatever the source: pods and " +
		"the node reaching an externalTrafficPolicy Local address get the local endpoints, not masqueraded " +
		"(no short-circuit to the cluster endpoints)"
)

// endpoint makes a slice endpoint for ap: on this node when in PodCIDR.
func endpoint(ap netip.AddrPort) EP {
	node := otherNode
	if PodCIDR.Contains(ap.Addr()) {
		node = NodeName
	}
	return EP{IP: ap.Addr().String(), Node: node}
}

func terminating(e EP, serving bool) EP {
	e.NotReady, e.Terminating, e.Serving = true, true, &serving
	return e
}

func confSlice(eps ...EP) *api.EndpointSlice {
	return Slice("conf", "web", "web-1", []api.EndpointPort{SlicePort("http", confTarget, api.ProtocolTCP)}, eps...)
}

func ready(aps ...netip.AddrPort) *api.EndpointSlice {
	eps := make([]EP, len(aps))
	for i, ap := range aps {
		eps[i] = endpoint(ap)
	}
	return confSlice(eps...)
}

// confService is Service conf/web: ClusterIP VIP, port http 80 -> 8080;
// mod makes it a NodePort or LoadBalancer and sets policies.
func confService(mod func(*api.Service)) *api.Service {
	p := TCP("http", confPort)
	p.TargetPort = api.IntOrString{IntVal: confTarget}
	svc := Service("conf", "web", VIP.String(), p)
	if mod != nil {
		mod(svc)
	}
	return svc
}

// loadBalancer makes svc a LoadBalancer with NodePort 30080, ingress
// LBIP and external IP ExternalIP.
func loadBalancer(svc *api.Service) {
	svc.Spec.Type = api.ServiceTypeLoadBalancer
	svc.Spec.Ports[0].NodePort = confNodePort
	svc.Spec.ExternalIPs = []string{ExternalIP.String()}
	svc.Status.LoadBalancer.Ingress = []api.LoadBalancerIngress{{IP: LBIP.String()}}
}

func to(from Source, dst netip.Addr, port uint16) Packet {
	return Packet{From: from, Dst: netip.AddrPortFrom(dst, port), Proto: "TCP"}
}

func toVIP(from Source) Packet      { return to(from, VIP, confPort) }
func toNodePort(from Source) Packet { return to(from, NodeIP, confNodePort) }

// serve is the outcome of traffic a policy sends to eps: one of them, or
// a drop when the policy has none (the Service has endpoints elsewhere).
func serve(masq bool, eps []netip.AddrPort) []Result {
	if len(eps) == 0 {
		return Dropped
	}
	return DNAT(masq, eps...)
}

// ipvsServe is serve for the ipvs mode: an empty virtual server rejects.
func ipvsServe(masq bool, eps []netip.AddrPort) []Result {
	if len(eps) == 0 {
		return Rejected
	}
	return DNAT(masq, eps...)
}

func onlyLocal(eps []netip.AddrPort) []netip.AddrPort {
	var out []netip.AddrPort
	for _, e := range eps {
		if PodCIDR.Contains(e.Addr()) {
			out = append(out, e)
		}
	}
	return out
}

// except is a one-backend exception.
func except(backend string, want []Result, why string) map[string]Exception {
	return map[string]Exception{backend: {Want: want, Why: why}}
}

// Cases is the conformance table: what kube-proxy does with a packet,
// whatever the mode. Every backend's tests run it on their fake kernel
// (Conformance).
func Cases() []Case {
	all := []netip.AddrPort{Local1, Local2, Remote1}
	cases := []Case{
		{
			Name:     "ClusterIP",
			Services: []*api.Service{confService(nil)},
			Slices:   []*api.EndpointSlice{ready(all...)},
			Steps: []Step{
				{Name: "from a pod: every endpoint, not masqueraded", Packet: toVIP(LocalPod), Want: DNAT(false, all...)},
				{Name: "from the node: masqueraded", Packet: toVIP(ThisNode), Want: DNAT(true, all...)},
				{Name: "from outside the cluster CIDR (a host routing the service CIDR here): masqueraded",
					Packet: toVIP(External), Want: DNAT(true, all...)},
				{Name: "another port of the ClusterIP: reject", Packet: to(LocalPod, VIP, 81), Want: Rejected},
				{Name: "another protocol: reject", Packet: Packet{From: LocalPod, Dst: netip.AddrPortFrom(VIP, confPort), Proto: "UDP"}, Want: Rejected},
				{Name: "an unallocated service IP: reject", Packet: to(LocalPod, netip.MustParseAddr("10.96.7.7"), confPort), Want: Rejected},
				{Name: "an unallocated service IP from the node: reject", Packet: to(ThisNode, netip.MustParseAddr("10.96.7.7"), confPort), Want: Rejected},
				{Name: "outside the service CIDR: untouched", Packet: to(LocalPod, netip.MustParseAddr("10.97.0.1"), confPort), Want: Untouched},
			},
		},
		{
			Name:     "UDP ClusterIP",
			Services: []*api.Service{Service("conf", "dns", "10.96.0.53", UDP("dns", 53))},
			Slices: []*api.EndpointSlice{Slice("conf", "dns", "dns-1", []api.EndpointPort{SlicePort("dns", 5353, api.ProtocolUDP)},
				endpoint(Local1), endpoint(Remote1))},
			Steps: []Step{
				{Name: "from a pod", Packet: Packet{From: LocalPod, Dst: netip.MustParseAddrPort("10.96.0.53:53"), Proto: "UDP"},
					Want: DNAT(false, netip.MustParseAddrPort("10.244.0.2:5353"), netip.MustParseAddrPort("10.244.1.2:5353"))},
				{Name: "TCP to the UDP port: reject", Packet: to(LocalPod, netip.MustParseAddr("10.96.0.53"), 53), Want: Rejected},
			},
		},
		{
			Name:     "hairpin: a pod reaching itself through the Service is masqueraded",
			Services: []*api.Service{confService(nil)},
			Slices:   []*api.EndpointSlice{ready(Local1, Remote1)},
			Steps: []Step{
				{Name: "from endpoint " + Local1.Addr().String(), Packet: toVIP(Source{Name: "an endpoint pod", IP: Local1.Addr()}),
					Want: []Result{{Verdict: VerdictDNAT, Endpoint: Local1, Masquerade: true}, {Verdict: VerdictDNAT, Endpoint: Remote1}}},
			},
		},
		{
			Name:     "no endpoints: reject",
			Services: []*api.Service{confService(loadBalancer)},
			Slices:   []*api.EndpointSlice{confSlice()},
			Steps: []Step{
				{Name: "ClusterIP from a pod", Packet: toVIP(LocalPod), Want: Rejected},
				{Name: "ClusterIP from the node", Packet: toVIP(ThisNode), Want: Rejected},
				{Name: "NodePort from outside", Packet: toNodePort(External), Want: Rejected},
				{Name: "load balancer IP", Packet: to(External, LBIP, confPort), Want: Rejected},
				{Name: "external IP", Packet: to(External, ExternalIP, confPort), Want: Rejected},
			},
		},
		{
			Name:     "not ready and not serving endpoints: none to use, reject",
			Services: []*api.Service{confService(nil)},
			Slices:   []*api.EndpointSlice{confSlice(terminating(endpoint(Local1), false), EP{IP: Remote1.Addr().String(), Node: otherNode, NotReady: true})},
			Steps:    []Step{{Name: "ClusterIP from a pod", Packet: toVIP(LocalPod), Want: Rejected}},
		},
		{
			Name:     "terminating endpoints only: the serving ones are used",
			Services: []*api.Service{confService(nil)},
			Slices:   []*api.EndpointSlice{confSlice(terminating(endpoint(Local1), true), terminating(endpoint(Remote1), true), terminating(endpoint(Remote2), false))},
			Steps:    []Step{{Name: "ClusterIP from a pod", Packet: toVIP(LocalPod), Want: DNAT(false, Local1, Remote1)}},
		},
		{
			Name:     "ready endpoints win over serving terminating ones",
			Services: []*api.Service{confService(nil)},
			Slices:   []*api.EndpointSlice{confSlice(terminating(endpoint(Local1), true), endpoint(Remote1))},
			Steps:    []Step{{Name: "ClusterIP from a pod", Packet: toVIP(LocalPod), Want: DNAT(false, Remote1)}},
		},
		{
			Name: "externalTrafficPolicy Local falls back to this node's serving terminating endpoints",
			Services: []*api.Service{confService(func(svc *api.Service) {
				loadBalancer(svc)
				svc.Spec.ExternalTrafficPolicy = api.ServiceTrafficPolicyLocal
			})},
			Slices: []*api.EndpointSlice{confSlice(terminating(endpoint(Local1), true), endpoint(Remote1))},
			Steps: []Step{
				{Name: "NodePort from outside: the local terminating endpoint, client IP kept", Packet: toNodePort(External), Want: DNAT(false, Local1)},
				{Name: "ClusterIP: the ready endpoint", Packet: toVIP(LocalPod), Want: DNAT(false, Remote1)},
				{Name: "NodePort from a pod: short-circuited to the cluster endpoints", Packet: toNodePort(LocalPod), Want: DNAT(false, Remote1),
					Except: except(ModeIPVS, DNAT(false, Local1), whyIPVSNoShortCircuit)},
			},
		},
		{
			Name: "loadBalancerSourceRanges",
			Services: []*api.Service{confService(func(svc *api.Service) {
				loadBalancer(svc)
				svc.Spec.LoadBalancerSourceRanges = []string{"192.168.77.0/24"}
			})},
			Slices: []*api.EndpointSlice{ready(Local1, Remote1)},
			Steps: []Step{
				{Name: "load balancer IP from an allowed source", Packet: to(External, LBIP, confPort), Want: DNAT(true, Local1, Remote1)},
				{Name: "load balancer IP from another source: drop", Packet: to(OutOfRanges, LBIP, confPort), Want: Dropped},
				{Name: "the NodePort is not filtered", Packet: toNodePort(OutOfRanges), Want: DNAT(true, Local1, Remote1)},
				{Name: "the external IP is not filtered", Packet: to(OutOfRanges, ExternalIP, confPort), Want: DNAT(true, Local1, Remote1)},
				{Name: "the ClusterIP is not filtered", Packet: toVIP(LocalPod), Want: DNAT(false, Local1, Remote1)},
			},
		},
		{
			Name: "sessionAffinity ClientIP",
			Services: []*api.Service{confService(func(svc *api.Service) {
				svc.Spec.SessionAffinity = api.ServiceAffinityClientIP
			})},
			Slices: []*api.EndpointSlice{ready(all...)},
			Steps: []Step{
				{Name: "a new client may reach any endpoint", Packet: toVIP(LocalPod), Want: DNAT(false, all...), Connect: true},
				{Name: "its next connection goes to the same one", Packet: toVIP(LocalPod), Sticky: true},
				{Name: "another client is not bound by it", Packet: toVIP(LocalPod2), Want: DNAT(false, all...)},
			},
		},
	}
	return append(cases, policyCases()...)
}

// policyCases: externalTrafficPolicy × internalTrafficPolicy, with
// endpoints on this node only, on other nodes only, and both, on a
// LoadBalancer Service (NodePort, load balancer IP, external IP).
//
// kube-proxy's rules: a Cluster policy uses every ready endpoint, a Local
// one this node's only, and drops what it cannot serve (the Service has
// endpoints, just not here). External traffic with the Cluster policy is
// masqueraded; with Local it keeps the client IP. Pods and the node
// reaching an external address are not external traffic: they are
// short-circuited to the cluster endpoints (UsesClusterEndpoints), the
// node masqueraded.
func policyCases() []Case {
	sets := []struct {
		name string
		eps  []netip.AddrPort
	}{
		{"endpoints on this node only", []netip.AddrPort{Local1, Local2}},
		{"endpoints on other nodes only", []netip.AddrPort{Remote1, Remote2}},
		{"endpoints here and on another node", []netip.AddrPort{Local1, Remote1}},
	}
	var out []Case
	for _, etp := range []string{api.ServiceTrafficPolicyCluster, api.ServiceTrafficPolicyLocal} {
		for _, itp := range []string{api.ServiceTrafficPolicyCluster, api.ServiceTrafficPolicyLocal} {
			for _, set := range sets {
				all, local := set.eps, onlyLocal(set.eps)
				internal, external := all, all
				if itp == api.ServiceTrafficPolicyLocal {
					internal = local
				}
				extLocal := etp == api.ServiceTrafficPolicyLocal
				if extLocal {
					external = local
				}
				var internalExc map[string]Exception
				if len(internal) == 0 {
					internalExc = except(ModeIPVS, Rejected, whyIPVSEmpty)
				}
				var externalExc map[string]Exception
				if len(external) == 0 {
					externalExc = except(ModeIPVS, Rejected, whyIPVSEmpty)
				}
				// Pods and the node reaching an external address.
				fromPod, fromNode := DNAT(!extLocal, all...), DNAT(true, all...)
				var shortExc map[string]Exception
				if extLocal {
					shortExc = except(ModeIPVS, ipvsServe(false, local), whyIPVSNoShortCircuit)
				}
				itpCopy := itp
				svc := confService(func(svc *api.Service) {
					loadBalancer(svc)
					svc.Spec.ExternalTrafficPolicy = etp
					svc.Spec.InternalTrafficPolicy = &itpCopy
				})
				out = append(out, Case{
					Name:     fmt.Sprintf("externalTrafficPolicy %s, internalTrafficPolicy %s, %s", etp, itp, set.name),
					Services: []*api.Service{svc},
					Slices:   []*api.EndpointSlice{ready(all...)},
					Steps: []Step{
						{Name: "ClusterIP from a pod", Packet: toVIP(LocalPod), Want: serve(false, internal), Except: internalExc},
						{Name: "ClusterIP from the node: masqueraded", Packet: toVIP(ThisNode), Want: serve(true, internal), Except: internalExc},
						{Name: "NodePort from outside", Packet: toNodePort(External), Want: serve(!extLocal, external), Except: externalExc},
						{Name: "load balancer IP from outside", Packet: to(External, LBIP, confPort), Want: serve(!extLocal, external), Except: externalExc},
						{Name: "external IP from outside", Packet: to(External, ExternalIP, confPort), Want: serve(!extLocal, external), Except: externalExc},
						{Name: "NodePort from a pod", Packet: toNodePort(LocalPod), Want: fromPod, Except: shortExc},
						{Name: "NodePort from a pod on another node", Packet: toNodePort(RemotePod), Want: fromPod, Except: shortExc},
						{Name: "load balancer IP from a pod", Packet: to(LocalPod, LBIP, confPort), Want: fromPod, Except: shortExc},
						{Name: "NodePort from the node", Packet: toNodePort(ThisNode), Want: fromNode, Except: shortExc},
					},
				})
			}
		}
	}
	return out
}
