package source

import (
	"net/netip"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/dns"
)

// ServiceFrom converts a Service to the Store's slim form.
func ServiceFrom(s *api.Service) dns.Service {
	out := dns.Service{
		Namespace:       s.Namespace,
		Name:            s.Name,
		Type:            s.Spec.Type,
		PublishNotReady: s.Spec.PublishNotReadyAddresses,
	}
	if out.Type == "" {
		out.Type = dns.TypeClusterIP
	}
	switch {
	case out.Type == dns.TypeExternalName:
		out.ExternalName = s.Spec.ExternalName
	case api.IsHeadlessService(s):
		out.Headless = true
	default:
		ips := s.Spec.ClusterIPs
		if len(ips) == 0 && s.Spec.ClusterIP != "" {
			ips = []string{s.Spec.ClusterIP}
		}
		for _, ip := range ips {
			if a, err := netip.ParseAddr(ip); err == nil {
				out.ClusterIPs = append(out.ClusterIPs, a)
			}
		}
	}
	for _, p := range s.Spec.Ports {
		if p.Port < 1 || p.Port > 65535 {
			continue
		}
		out.Ports = append(out.Ports, dns.Port{Name: p.Name, Protocol: protocol(string(p.Protocol)), Port: uint16(p.Port)})
	}
	return out
}

// EndpointSliceFrom converts an EndpointSlice to the Store's slim form. It
// reports false for a slice without the kubernetes.io/service-name label,
// which belongs to no Service.
func EndpointSliceFrom(es *api.EndpointSlice) (dns.EndpointSlice, bool) {
	svc := es.Labels[api.LabelServiceName]
	if svc == "" {
		return dns.EndpointSlice{}, false
	}
	out := dns.EndpointSlice{Namespace: es.Namespace, Name: es.Name, Service: svc}
	for _, p := range es.Ports {
		if p.Port == nil || *p.Port < 1 || *p.Port > 65535 {
			continue // "all ports": nothing a SRV record could name
		}
		ep := dns.EndpointPort{Port: uint16(*p.Port), Protocol: "TCP"}
		if p.Name != nil {
			ep.Name = *p.Name
		}
		if p.Protocol != nil {
			ep.Protocol = protocol(string(*p.Protocol))
		}
		out.Ports = append(out.Ports, ep)
	}
	out.Endpoints = make([]dns.Endpoint, 0, len(es.Endpoints))
	for _, e := range es.Endpoints {
		var d dns.Endpoint
		for _, s := range e.Addresses {
			if a, err := netip.ParseAddr(s); err == nil {
				d.Addresses = append(d.Addresses, a)
			}
		}
		if len(d.Addresses) == 0 {
			continue // an FQDN endpoint, or garbage: no record to make
		}
		if e.Hostname != nil {
			d.Hostname = *e.Hostname
		}
		if e.NodeName != nil {
			d.NodeName = *e.NodeName
		}
		if r := e.TargetRef; r != nil && (r.Kind == "" || r.Kind == "Pod") {
			d.TargetPodName = r.Name
		}
		// The API's rules for unset conditions: ready unset is ready,
		// serving unset follows ready, terminating unset is false.
		c := e.Conditions
		d.Ready = c.Ready == nil || *c.Ready
		d.Serving = d.Ready
		if c.Serving != nil {
			d.Serving = *c.Serving
		}
		d.Terminating = c.Terminating != nil && *c.Terminating
		out.Endpoints = append(out.Endpoints, d)
	}
	return out, true
}

// PodFrom converts a Pod to the Store's slim form. It reports false for a
// pod that holds no address DNS should answer for: no IP yet, being
// deleted, or finished (Succeeded, Failed).
func PodFrom(p *api.Pod) (dns.Pod, bool) {
	if p.DeletionTimestamp != nil || p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed {
		return dns.Pod{}, false
	}
	out := dns.Pod{Namespace: p.Namespace, Name: p.Name}
	ips := make([]string, 0, len(p.Status.PodIPs)+1)
	for _, ip := range p.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	if len(ips) == 0 && p.Status.PodIP != "" {
		ips = append(ips, p.Status.PodIP)
	}
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err == nil {
			out.IPs = append(out.IPs, a)
		}
	}
	if len(out.IPs) == 0 {
		return dns.Pod{}, false
	}
	return out, true
}

// protocol maps an empty protocol to TCP, the API's default.
func protocol(p string) string {
	if p == "" {
		return "TCP"
	}
	return p
}
