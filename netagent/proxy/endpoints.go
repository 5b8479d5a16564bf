package proxy

import "net/netip"

// String is "ip:port", as kube-proxy prints an endpoint (and hashes it into
// the KUBE-SEP chain name).
func (e Endpoint) String() string {
	return netip.AddrPortFrom(e.IP, uint16(e.Port)).String()
}

// AddrPort is the endpoint as an address and port.
func (e Endpoint) AddrPort() netip.AddrPort { return netip.AddrPortFrom(e.IP, uint16(e.Port)) }

// ExternallyAccessible reports whether the port is reachable from outside
// the cluster: a NodePort, an external IP or a load balancer IP.
func (sp *ServicePort) ExternallyAccessible() bool {
	return sp.NodePort != 0 || len(sp.ExternalIPs) > 0 || len(sp.LoadBalancerIPs) > 0
}

// UsesClusterEndpoints reports whether some traffic to the port is sent to
// endpoints on any node: ClusterIP traffic with internalTrafficPolicy
// Cluster, or any external traffic (even with externalTrafficPolicy Local,
// traffic from this node and its pods to an external address is
// "short-circuited" to the cluster endpoints, as kube-proxy does).
func (sp *ServicePort) UsesClusterEndpoints() bool {
	return !sp.InternalPolicyLocal || sp.ExternallyAccessible()
}

// UsesLocalEndpoints reports whether some traffic to the port is sent only
// to this node's endpoints.
func (sp *ServicePort) UsesLocalEndpoints() bool {
	return sp.InternalPolicyLocal || (sp.ExternalPolicyLocal && sp.ExternallyAccessible())
}

// PortString is the Service port's name as kube-proxy prints it:
// "ns/name:port", or "ns/name" for an unnamed port. Chain names hash it.
func (n ServicePortName) PortString() string {
	if n.Port == "" {
		return n.Namespace + "/" + n.Name
	}
	return n.Namespace + "/" + n.Name + ":" + n.Port
}

// Categorized is the outcome of CategorizeEndpoints.
type Categorized struct {
	// Cluster: endpoints for "Cluster" traffic policy (nil when the port
	// uses no cluster endpoints).
	Cluster []Endpoint
	// Local: this node's endpoints for "Local" traffic policy (nil when the
	// port uses no local endpoints).
	Local []Endpoint
	// Reachable: every endpoint some traffic may be sent to (the union of
	// Cluster and Local, in the input order).
	Reachable []Endpoint
	// HasAny: the port has a usable endpoint somewhere in the cluster. When
	// false, traffic to the port is rejected.
	HasAny bool
}

// CategorizeEndpoints applies kube-proxy's endpoint selection to eps, the
// endpoints of sp from State.Endpoints:
//
//   - Cluster endpoints are the ready ones; if no endpoint is ready, those
//     that are serving and terminating (graceful termination).
//   - Local endpoints are this node's ready ones; if none of this node's is
//     ready, this node's serving and terminating ones.
//   - HasAny is true when some endpoint anywhere is ready, or serving and
//     terminating; with Local policies a node may have none of its own while
//     HasAny is true: then traffic needing a local endpoint is dropped, not
//     rejected.
//
// Topology hints are not used.
func CategorizeEndpoints(sp *ServicePort, eps []Endpoint) Categorized {
	var c Categorized
	if sp.UsesClusterEndpoints() {
		c.Cluster = filterEndpoints(eps, func(e Endpoint) bool { return e.Ready })
		if len(c.Cluster) == 0 {
			c.Cluster = filterEndpoints(eps, func(e Endpoint) bool { return e.Serving && e.Terminating })
		}
		c.HasAny = len(c.Cluster) > 0
	}
	if !sp.UsesLocalEndpoints() {
		c.Reachable = c.Cluster
		return c
	}
	var localReady, localServingTerminating bool
	for _, e := range eps {
		switch {
		case e.Ready:
			c.HasAny = true
			localReady = localReady || e.IsLocal
		case e.Serving && e.Terminating:
			c.HasAny = true
			localServingTerminating = localServingTerminating || e.IsLocal
		}
	}
	switch {
	case localReady:
		c.Local = filterEndpoints(eps, func(e Endpoint) bool { return e.IsLocal && e.Ready })
	case localServingTerminating:
		c.Local = filterEndpoints(eps, func(e Endpoint) bool { return e.IsLocal && e.Serving && e.Terminating })
	}
	if !sp.UsesClusterEndpoints() {
		c.Reachable = c.Local
		return c
	}
	if len(c.Local) == 0 {
		c.Reachable = c.Cluster
		return c
	}
	in := make(map[netip.AddrPort]bool, len(c.Cluster)+len(c.Local))
	for _, e := range c.Cluster {
		in[e.AddrPort()] = true
	}
	for _, e := range c.Local {
		in[e.AddrPort()] = true
	}
	c.Reachable = filterEndpoints(eps, func(e Endpoint) bool { return in[e.AddrPort()] })
	return c
}

func filterEndpoints(eps []Endpoint, keep func(Endpoint) bool) []Endpoint {
	var out []Endpoint
	for _, e := range eps {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}
