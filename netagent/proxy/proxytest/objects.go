package proxytest

import (
	"github.com/skiff-dev/skiff/api"
)

// Service returns a ClusterIP Service ns/name at clusterIP with ports
// (protocol TCP when unset, targetPort = port). Tests change its fields
// for other types and policies.
func Service(ns, name, clusterIP string, ports ...api.ServicePort) *api.Service {
	svc := &api.Service{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name},
		Spec: api.ServiceSpec{
			Type:      api.ServiceTypeClusterIP,
			ClusterIP: clusterIP,
			Ports:     ports,
		},
	}
	if clusterIP != "" && clusterIP != api.ClusterIPNone {
		svc.Spec.ClusterIPs = []string{clusterIP}
	}
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Protocol == "" {
			svc.Spec.Ports[i].Protocol = api.ProtocolTCP
		}
	}
	return svc
}

// TCP is a Service port.
func TCP(name string, port int32) api.ServicePort {
	return api.ServicePort{Name: name, Port: port, Protocol: api.ProtocolTCP}
}

// UDP is a Service port.
func UDP(name string, port int32) api.ServicePort {
	return api.ServicePort{Name: name, Port: port, Protocol: api.ProtocolUDP}
}

// EP is one endpoint of a slice.
type EP struct {
	IP   string
	Node string
	// NotReady: ready=false. Terminating: terminating=true. Serving, when
	// set, overrides serving (else it follows ready).
	NotReady    bool
	Terminating bool
	Serving     *bool
}

// SlicePort is one port of a slice.
func SlicePort(name string, port int32, proto api.Protocol) api.EndpointPort {
	n, p, pr := name, port, proto
	return api.EndpointPort{Name: &n, Port: &p, Protocol: &pr}
}

// Slice returns the EndpointSlice name of Service ns/svc with ports and
// endpoints.
func Slice(ns, svc, name string, ports []api.EndpointPort, eps ...EP) *api.EndpointSlice {
	sl := &api.EndpointSlice{
		TypeMeta: api.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: api.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{api.LabelServiceName: svc}},
		AddressType: api.AddressTypeIPv4,
		Ports:       ports,
	}
	for _, e := range eps {
		ready := !e.NotReady
		term := e.Terminating
		ep := api.Endpoint{Addresses: []string{e.IP}, Conditions: api.EndpointConditions{Ready: &ready, Terminating: &term}}
		if e.Serving != nil {
			s := *e.Serving
			ep.Conditions.Serving = &s
		}
		if e.Node != "" {
			n := e.Node
			ep.NodeName = &n
		}
		sl.Endpoints = append(sl.Endpoints, ep)
	}
	return sl
}
