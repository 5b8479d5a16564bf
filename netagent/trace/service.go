package trace

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// Match is the Service port a destination belongs to.
type Match struct {
	Service *api.Service
	Port    api.ServicePort
	Trace   api.TraceService
	// Via says how the destination matched: "clusterIP", "externalIP",
	// "loadBalancerIP" or "nodePort".
	Via string
}

// MatchService finds the Service port that dst:port (protocol) hits:
// a ClusterIP, an external IP, a LoadBalancer ingress IP with the Service
// port, or one of nodeIPs (or loopback) with a NodePort. The warnings
// explain a near miss (the address is a Service's but not the port, a
// headless Service, …). host is the name the URL gave (to spot an
// ExternalName Service), "" when the URL gave an address.
func MatchService(services []*api.Service, dst netip.Addr, port int32, protocol string, nodeIPs []netip.Addr, host string) (*Match, []string) {
	var warns []string
	local := dst.IsLoopback() || slices.Contains(nodeIPs, dst)
	ds := dst.String()
	for _, s := range sorted(services) {
		ips := append([]string{}, s.Spec.ClusterIPs...)
		if len(ips) == 0 && s.Spec.ClusterIP != "" {
			ips = []string{s.Spec.ClusterIP}
		}
		var via string
		switch {
		case slices.Contains(ips, ds):
			via = "clusterIP"
		case slices.Contains(s.Spec.ExternalIPs, ds):
			via = "externalIP"
		case s.Spec.Type == api.ServiceTypeLoadBalancer && lbHas(s, ds):
			via = "loadBalancerIP"
		}
		for _, p := range s.Spec.Ports {
			proto := string(p.Protocol)
			if proto == "" {
				proto = "TCP"
			}
			if proto != protocol {
				continue
			}
			hit := via != "" && p.Port == port
			v := via
			if !hit && local && p.NodePort != 0 && p.NodePort == port {
				hit, v = true, "nodePort"
			}
			if hit {
				return &Match{Service: s, Port: p, Via: v, Trace: api.TraceService{
					Namespace: s.Namespace, Name: s.Name, Type: cmp.Or(s.Spec.Type, api.ServiceTypeClusterIP),
					IP: ds, Port: port, PortName: p.Name, TargetPort: targetPort(p),
				}}, nil
			}
		}
		if via != "" {
			var ports []string
			for _, p := range s.Spec.Ports {
				ports = append(ports, fmt.Sprintf("%d/%s", p.Port, cmp.Or(string(p.Protocol), "TCP")))
			}
			warns = append(warns, fmt.Sprintf("Service %s/%s has the address %s but no %s port %d (its ports: %s): the connection is refused or dropped",
				s.Namespace, s.Name, ds, protocol, port, strings.Join(ports, ", ")))
		}
	}
	if len(warns) == 0 {
		warns = append(warns, fmt.Sprintf("%s:%d is no Service's address and port: the packet is routed as is, no proxy rule rewrites it", ds, port))
	}
	return nil, warns
}

// Headless explains why a name led to a pod address instead of a
// ClusterIP: it finds the headless Service whose endpoints hold dst.
func Headless(services []*api.Service, slices_ []*api.EndpointSlice, dst netip.Addr) (*api.TraceService, string) {
	ds := dst.String()
	for _, sl := range slices_ {
		for _, ep := range sl.Endpoints {
			if !slices.Contains(ep.Addresses, ds) {
				continue
			}
			name := sl.Labels[api.LabelServiceName]
			for _, s := range services {
				if s.Namespace == sl.Namespace && s.Name == name && s.Spec.ClusterIP == "None" {
					return &api.TraceService{Namespace: s.Namespace, Name: s.Name, Type: cmp.Or(s.Spec.Type, api.ServiceTypeClusterIP), IP: ds, Headless: true},
						fmt.Sprintf("Service %s/%s is headless (clusterIP: None): DNS answers the pods' addresses and the client connects to the pod %s directly, with no proxy rule and no load balancing", s.Namespace, s.Name, ds)
				}
			}
		}
	}
	return nil, ""
}

// ExternalName finds an ExternalName Service named by a candidate.
func ExternalName(services []*api.Service, dnsName string, domain string) (*api.Service, string) {
	name := strings.TrimSuffix(dnsName, ".")
	for _, s := range services {
		if s.Spec.Type != api.ServiceTypeExternalName {
			continue
		}
		if name == s.Name+"."+s.Namespace+".svc."+domain {
			return s, fmt.Sprintf("Service %s/%s is of type ExternalName: DNS answers a CNAME to %s and no proxy rule is involved", s.Namespace, s.Name, s.Spec.ExternalName)
		}
	}
	return nil, ""
}

func lbHas(s *api.Service, ip string) bool {
	for _, in := range s.Status.LoadBalancer.Ingress {
		if in.IP == ip {
			return true
		}
	}
	return s.Spec.LoadBalancerIP == ip
}

func targetPort(p api.ServicePort) string {
	switch {
	case p.TargetPort.Type == api.String && p.TargetPort.StrVal != "":
		return p.TargetPort.StrVal
	case p.TargetPort.IntVal != 0:
		return fmt.Sprint(p.TargetPort.IntVal)
	}
	return fmt.Sprint(p.Port)
}

func sorted(svcs []*api.Service) []*api.Service {
	out := slices.Clone(svcs)
	slices.SortFunc(out, func(a, b *api.Service) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// Endpoints lists the endpoints of the Service port m from the slices of
// its Service (matched by the kubernetes.io/service-name label and the
// port name), sorted by address.
func Endpoints(m *Match, all []*api.EndpointSlice) []api.TraceEndpoint {
	var out []api.TraceEndpoint
	for _, sl := range all {
		if sl.Namespace != m.Service.Namespace || sl.Labels[api.LabelServiceName] != m.Service.Name {
			continue
		}
		var port int32
		found := false
		for _, p := range sl.Ports {
			name := ""
			if p.Name != nil {
				name = *p.Name
			}
			if name == m.Port.Name && p.Port != nil {
				port, found = *p.Port, true
			}
		}
		if !found {
			continue
		}
		for _, ep := range sl.Endpoints {
			c := ep.Conditions
			ready := c.Ready == nil || *c.Ready
			serving := ready
			if c.Serving != nil {
				serving = *c.Serving
			}
			term := c.Terminating != nil && *c.Terminating
			for _, a := range ep.Addresses {
				e := api.TraceEndpoint{IP: a, Port: port, Ready: ready, Serving: serving, Terminating: term}
				if ep.NodeName != nil {
					e.NodeName = *ep.NodeName
				}
				if ep.TargetRef != nil {
					e.Pod = ep.TargetRef.Name
				}
				out = append(out, e)
			}
		}
	}
	slices.SortFunc(out, func(a, b api.TraceEndpoint) int {
		x, _ := netip.ParseAddr(a.IP)
		y, _ := netip.ParseAddr(b.IP)
		return cmp.Or(x.Compare(y), cmp.Compare(a.Port, b.Port))
	})
	return slices.CompactFunc(out, func(a, b api.TraceEndpoint) bool { return a.IP == b.IP && a.Port == b.Port })
}

// Probabilities fills each endpoint's Probability from the rules of mode
// and returns, in words, what looks wrong (an endpoint the rules never
// pick, a rule to an address that is no endpoint).
func Probabilities(mode string, rules []api.TraceRule, eps []api.TraceEndpoint) []string {
	share := map[string]float64{}
	if mode == "iptables" {
		// Per chain, walk the rules that send to an endpoint: each is
		// reached only when none before it was taken. KUBE-SEP chains only
		// DNAT what their chooser sent them.
		remaining := map[string]float64{}
		for _, r := range rules {
			if r.Endpoint == "" || strings.HasPrefix(r.Chain, "KUBE-SEP-") {
				continue
			}
			left, ok := remaining[r.Chain]
			if !ok {
				left = 1
			}
			p := r.Probability
			if p == 0 {
				p = 1
			}
			share[r.Endpoint] += left * p
			remaining[r.Chain] = left * (1 - p)
		}
		if len(share) == 0 { // only DNAT rules (a single endpoint without chooser)
			for _, r := range rules {
				if r.Endpoint != "" {
					share[r.Endpoint] = 1
				}
			}
		}
	} else {
		for _, r := range rules {
			if r.Endpoint == "" {
				continue
			}
			p := r.Probability
			if p == 0 {
				p = 1
			}
			share[r.Endpoint] += p
		}
	}
	var warns []string
	known := map[string]bool{}
	for i := range eps {
		k := net.JoinHostPort(eps[i].IP, strconv.Itoa(int(eps[i].Port)))
		known[k] = true
		eps[i].Probability = round(share[k])
		if len(rules) > 0 && share[k] == 0 && eps[i].Ready {
			warns = append(warns, fmt.Sprintf("endpoint %s is ready but no rule on this node sends to it (the proxy has not synced yet?)", k))
		}
	}
	var extra []string
	for k := range share {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		warns = append(warns, fmt.Sprintf("a rule on this node sends to %s, which is no endpoint of the Service any more (stale rule)", k))
	}
	return warns
}

func round(p float64) float64 {
	const q = 1e6
	return float64(int64(p*q+0.5)) / q
}
