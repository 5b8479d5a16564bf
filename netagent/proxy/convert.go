package proxy

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// AnnotationTriggerTime is the EndpointSlice annotation holding the time of
// the change (pod or Service) that caused the slice's last update; the
// network programming latency is measured from it.
const AnnotationTriggerTime = "endpoints.kubernetes.io/last-change-trigger-time"

// ServicePortsFor converts svc into the ports the proxy programs. Headless
// and ExternalName Services give none. skipped describes the ports that
// are not proxied and why (unsupported protocol, bad field), for the log.
func ServicePortsFor(svc *api.Service) (ports []*ServicePort, skipped []string) {
	spec := &svc.Spec
	if spec.Type == api.ServiceTypeExternalName {
		return nil, nil
	}
	var vips []netip.Addr
	ips := spec.ClusterIPs
	if len(ips) == 0 && spec.ClusterIP != "" {
		ips = []string{spec.ClusterIP}
	}
	for _, s := range ips {
		if s == api.ClusterIPNone || s == "" {
			return nil, nil // headless
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("clusterIP %q: %v", s, err))
			continue
		}
		vips = append(vips, a.Unmap())
	}
	if len(vips) == 0 {
		return nil, skipped
	}
	externalIPs, bad := parseAddrs(spec.ExternalIPs)
	skipped = append(skipped, bad...)
	var lbIPs []netip.Addr
	if spec.Type == api.ServiceTypeLoadBalancer {
		for _, ing := range svc.Status.LoadBalancer.Ingress {
			if ing.IP == "" {
				continue
			}
			// ipMode Proxy: the load balancer sends traffic to the
			// nodes' addresses, not to the VIP; kube-proxy installs no VIP
			// rule for it.
			if ing.IPMode != nil && *ing.IPMode == "Proxy" {
				continue
			}
			a, err := netip.ParseAddr(ing.IP)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("load balancer IP %q: %v", ing.IP, err))
				continue
			}
			lbIPs = append(lbIPs, a.Unmap())
		}
	}
	var ranges []netip.Prefix
	if len(lbIPs) > 0 {
		for _, s := range spec.LoadBalancerSourceRanges {
			p, err := netip.ParsePrefix(strings.TrimSpace(s))
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("loadBalancerSourceRange %q: %v", s, err))
				continue
			}
			ranges = append(ranges, p.Masked())
		}
	}
	var affinity time.Duration
	if spec.SessionAffinity == api.ServiceAffinityClientIP {
		secs := api.DefaultClientIPServiceAffinitySeconds
		if c := spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
			secs = *c.ClientIP.TimeoutSeconds
		}
		affinity = time.Duration(secs) * time.Second
	}
	internalLocal := spec.InternalTrafficPolicy != nil && *spec.InternalTrafficPolicy == api.ServiceTrafficPolicyLocal
	nodePorts := spec.Type == api.ServiceTypeNodePort || spec.Type == api.ServiceTypeLoadBalancer
	for _, p := range spec.Ports {
		proto := p.Protocol
		if proto == "" {
			proto = api.ProtocolTCP
		}
		name := ServicePortName{Namespace: svc.Namespace, Name: svc.Name, Port: p.Name, Protocol: string(proto)}
		if proto != api.ProtocolTCP && proto != api.ProtocolUDP {
			skipped = append(skipped, fmt.Sprintf("port %s: protocol %s is not supported", name, proto))
			continue
		}
		sp := &ServicePort{
			Name:                     name,
			ClusterIPs:               vips,
			Port:                     p.Port,
			Protocol:                 string(proto),
			ExternalIPs:              externalIPs,
			LoadBalancerIPs:          lbIPs,
			LoadBalancerSourceRanges: ranges,
			InternalPolicyLocal:      internalLocal,
			AffinityTimeout:          affinity,
		}
		if nodePorts {
			sp.NodePort = p.NodePort
		}
		if sp.ExternallyAccessible() && spec.ExternalTrafficPolicy == api.ServiceTrafficPolicyLocal {
			sp.ExternalPolicyLocal = true
			sp.HealthCheckNodePort = spec.HealthCheckNodePort
		}
		ports = append(ports, sp)
	}
	return ports, skipped
}

func parseAddrs(ss []string) (out []netip.Addr, bad []string) {
	for _, s := range ss {
		a, err := netip.ParseAddr(s)
		if err != nil {
			bad = append(bad, fmt.Sprintf("address %q: %v", s, err))
			continue
		}
		out = append(out, a.Unmap())
	}
	return out, bad
}

// EndpointsFor gathers the endpoints of each of ports from the Service's
// slices. A slice port matches a Service port by name and protocol. Only
// the first address of an endpoint is used (as kube-proxy does); FQDN
// slices are ignored. An endpoint that appears twice (during a move between
// slices) is kept once, with its best conditions. The result is sorted by
// address and port, so that equal inputs give equal State.
func EndpointsFor(ports []*ServicePort, epSlices []*api.EndpointSlice, nodeName string) map[ServicePortName][]Endpoint {
	out := make(map[ServicePortName][]Endpoint, len(ports))
	for _, sp := range ports {
		var eps []Endpoint
		seen := map[netip.AddrPort]int{}
		for _, sl := range epSlices {
			if sl.AddressType == api.AddressTypeFQDN {
				continue
			}
			for _, port := range sl.Ports {
				if !slicePortMatches(port, sp.Name) || port.Port == nil {
					continue
				}
				for i := range sl.Endpoints {
					e, ok := convertEndpoint(&sl.Endpoints[i], *port.Port, nodeName)
					if !ok {
						continue
					}
					if j, dup := seen[e.AddrPort()]; dup {
						if score(e) > score(eps[j]) {
							eps[j] = e
						}
						continue
					}
					seen[e.AddrPort()] = len(eps)
					eps = append(eps, e)
				}
			}
		}
		slices.SortFunc(eps, func(a, b Endpoint) int {
			if c := a.IP.Compare(b.IP); c != 0 {
				return c
			}
			return cmp.Compare(a.Port, b.Port)
		})
		out[sp.Name] = eps
	}
	return out
}

func slicePortMatches(p api.EndpointPort, name ServicePortName) bool {
	pname := ""
	if p.Name != nil {
		pname = *p.Name
	}
	proto := string(api.ProtocolTCP)
	if p.Protocol != nil {
		proto = string(*p.Protocol)
	}
	return pname == name.Port && proto == name.Protocol
}

// convertEndpoint applies the EndpointSlice defaults: ready unset means
// ready, serving unset means ready's value, terminating unset means false.
func convertEndpoint(ep *api.Endpoint, port int32, nodeName string) (Endpoint, bool) {
	if len(ep.Addresses) == 0 || port <= 0 || port > 65535 {
		return Endpoint{}, false
	}
	ip, err := netip.ParseAddr(ep.Addresses[0])
	if err != nil {
		return Endpoint{}, false
	}
	c := ep.Conditions
	ready := c.Ready == nil || *c.Ready
	serving := ready
	if c.Serving != nil {
		serving = *c.Serving
	}
	terminating := c.Terminating != nil && *c.Terminating
	e := Endpoint{IP: ip.Unmap(), Port: port, Ready: ready, Serving: serving, Terminating: terminating}
	if ep.NodeName != nil {
		e.NodeName = *ep.NodeName
		e.IsLocal = nodeName != "" && e.NodeName == nodeName
	}
	return e, true
}

func score(e Endpoint) int {
	switch {
	case e.Ready:
		return 2
	case e.Serving:
		return 1
	}
	return 0
}

// sliceService is the namespace/name of the Service a slice belongs to, or
// "" when it has no kubernetes.io/service-name label.
func sliceService(sl *api.EndpointSlice) string {
	name := sl.Labels[api.LabelServiceName]
	if name == "" {
		return ""
	}
	return sl.Namespace + "/" + name
}

// triggerTime parses the slice's last-change-trigger-time annotation.
func triggerTime(sl *api.EndpointSlice) (time.Time, bool) {
	s := sl.Annotations[AnnotationTriggerTime]
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}
