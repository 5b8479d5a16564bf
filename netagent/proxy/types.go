package proxy

import (
	"context"
	"net/netip"
	"strings"
	"time"
)

// ServicePortName names one port of one Service.
type ServicePortName struct {
	Namespace, Name string
	Port            string // the Service port's name ("" when unnamed)
	Protocol        string // TCP or UDP
}

// String is ns/name:port/proto, as kube-proxy prints it.
func (n ServicePortName) String() string {
	return n.Namespace + "/" + n.Name + ":" + n.Port + "/" + n.Protocol
}

// Compare orders names by String, for deterministic syncs.
func (n ServicePortName) Compare(o ServicePortName) int {
	return strings.Compare(n.String(), o.String())
}

// ServicePort is what the backends need of one Service port.
type ServicePort struct {
	Name       ServicePortName
	ClusterIPs []netip.Addr // empty for headless: no rules
	Port       int32
	Protocol   string
	NodePort   int32 // 0 when none
	// ExternalIPs and LoadBalancerIPs (status.loadBalancer.ingress[].ip).
	ExternalIPs              []netip.Addr
	LoadBalancerIPs          []netip.Addr
	LoadBalancerSourceRanges []netip.Prefix
	// ExternalPolicyLocal: externalTrafficPolicy Local (only local
	// endpoints for external traffic; the client IP is kept).
	ExternalPolicyLocal bool
	// InternalPolicyLocal: internalTrafficPolicy Local.
	InternalPolicyLocal bool
	HealthCheckNodePort int32
	// AffinityTimeout > 0 means sessionAffinity ClientIP with that timeout.
	AffinityTimeout time.Duration
}

// Endpoint is one backend of a Service port.
type Endpoint struct {
	IP          netip.Addr
	Port        int32
	NodeName    string
	Ready       bool
	Serving     bool
	Terminating bool
	IsLocal     bool // on this node
}

// State is everything a backend programs, as of one moment.
type State struct {
	Services  map[ServicePortName]*ServicePort
	Endpoints map[ServicePortName][]Endpoint
	// NodeName and NodeIPs: this node (NodePorts answer on every node IP).
	NodeName string
	NodeIPs  []netip.Addr
	// ClusterCIDR: traffic from outside it is masqueraded.
	ClusterCIDR netip.Prefix
	ServiceCIDR netip.Prefix
}

// Backend programs one proxy mode. Sync gets the whole State; changed
// lists the Service ports that changed since the last successful sync,
// or is nil for a full sync. A backend that cannot do a partial sync
// treats every call as full.
type Backend interface {
	Name() string
	Sync(ctx context.Context, st *State, changed []ServicePortName) error
	// Cleanup removes everything the backend ever programmed.
	Cleanup(ctx context.Context) error
}
