package dns

import "net/netip"

// The slim objects below are what the Store keeps: only the fields DNS
// answers need, converted from the API objects by the caller (the watch-cache
// wiring). Every field added here costs memory once per object in the cluster,
// so add one only when an answer depends on it.

// Service types, as in the Kubernetes Service spec.
const (
	TypeClusterIP    = "ClusterIP"
	TypeNodePort     = "NodePort"
	TypeLoadBalancer = "LoadBalancer"
	TypeExternalName = "ExternalName"
)

// Service is the slim form of a Service.
type Service struct {
	Namespace string
	Name      string
	// Type is one of TypeClusterIP, TypeNodePort, TypeLoadBalancer,
	// TypeExternalName. An empty Type means TypeClusterIP.
	Type string
	// ClusterIPs are the Service's virtual IPs (one per family); empty for a
	// headless Service and for an ExternalName Service.
	ClusterIPs []netip.Addr
	// Headless is set for clusterIP: None. Its name then resolves to the
	// ready endpoints' addresses.
	Headless bool
	// ExternalName is the CNAME target of an ExternalName Service.
	ExternalName string
	// Ports are the Service's ports; named ones get SRV records.
	Ports []Port
	// PublishNotReady (spec.publishNotReadyAddresses) makes every endpoint
	// of a headless Service count as ready for DNS.
	PublishNotReady bool
}

// Port is one Service port.
type Port struct {
	Name     string
	Protocol string // "TCP", "UDP" or "SCTP"; empty means "TCP"
	Port     uint16
}

// EndpointSlice is the slim form of an EndpointSlice: a group of endpoints of
// one Service sharing one list of ports. A Service may have many slices
// (the controller keeps at most 100 endpoints in each, and one slice per
// address family).
type EndpointSlice struct {
	Namespace string
	Name      string
	// Service is the owning Service's name (label kubernetes.io/service-name).
	Service   string
	Ports     []EndpointPort
	Endpoints []Endpoint
}

// EndpointPort is one port of an EndpointSlice (the Service's target port).
type EndpointPort struct {
	Name     string
	Protocol string // "TCP", "UDP" or "SCTP"; empty means "TCP"
	Port     uint16
}

// Endpoint is one endpoint (usually one pod) of an EndpointSlice.
type Endpoint struct {
	// Addresses are the endpoint's IPs; the Kubernetes API allows several
	// but consumers use each as a separate address of one family.
	Addresses []netip.Addr
	// Hostname names the endpoint under its Service
	// (<hostname>.<svc>.<ns>.svc.<domain>); set for StatefulSet pods.
	Hostname    string
	Ready       bool
	Serving     bool
	Terminating bool
	NodeName    string
	// TargetPodName is the pod behind the endpoint, if any.
	TargetPodName string
}

// Pod is the slim form of a Pod: enough to answer
// <a-b-c-d>.<ns>.pod.<domain> only for IPs that a pod in that namespace has.
type Pod struct {
	Namespace string
	Name      string
	IPs       []netip.Addr
}
