package nftables

import (
	"github.com/skiff-dev/skiff/netagent/proxy"
)

// The proxy core hands every endpoint of a Service port to the backend with
// its Ready/Serving/Terminating conditions; choosing among them is done here,
// as kube-proxy's CategorizeEndpoints (pkg/proxy/topology.go) does, minus
// topology hints.

func externallyAccessible(sp *proxy.ServicePort) bool {
	return sp.NodePort != 0 || len(sp.LoadBalancerIPs) > 0 || len(sp.ExternalIPs) > 0
}

// usesClusterEndpoints: some traffic uses the Cluster policy.
func usesClusterEndpoints(sp *proxy.ServicePort) bool {
	return !sp.InternalPolicyLocal || (externallyAccessible(sp) && !sp.ExternalPolicyLocal)
}

// usesLocalEndpoints: some traffic uses the Local policy.
func usesLocalEndpoints(sp *proxy.ServicePort) bool {
	return sp.InternalPolicyLocal || (externallyAccessible(sp) && sp.ExternalPolicyLocal)
}

// categorizeEndpoints returns the endpoints for the Cluster policy (ready
// ones, or, when none is ready anywhere, the serving and terminating ones),
// for the Local policy (local ready ones, else local serving+terminating),
// and whether the Service has any usable endpoint anywhere.
func categorizeEndpoints(eps []proxy.Endpoint, sp *proxy.ServicePort) (cluster, local []proxy.Endpoint, hasAny bool) {
	if usesClusterEndpoints(sp) {
		cluster = filterEndpoints(eps, func(ep proxy.Endpoint) bool { return ep.Ready })
		if len(cluster) == 0 {
			cluster = filterEndpoints(eps, func(ep proxy.Endpoint) bool { return ep.Serving && ep.Terminating })
		}
		hasAny = len(cluster) > 0
	}
	if !usesLocalEndpoints(sp) {
		return cluster, nil, hasAny
	}
	var localReady, localServingTerminating bool
	for _, ep := range eps {
		switch {
		case ep.Ready:
			hasAny = true
			localReady = localReady || ep.IsLocal
		case ep.Serving && ep.Terminating:
			hasAny = true
			localServingTerminating = localServingTerminating || ep.IsLocal
		}
	}
	switch {
	case localReady:
		local = filterEndpoints(eps, func(ep proxy.Endpoint) bool { return ep.IsLocal && ep.Ready })
	case localServingTerminating:
		local = filterEndpoints(eps, func(ep proxy.Endpoint) bool { return ep.IsLocal && ep.Serving && ep.Terminating })
	}
	return cluster, local, hasAny
}

func filterEndpoints(eps []proxy.Endpoint, keep func(proxy.Endpoint) bool) []proxy.Endpoint {
	var out []proxy.Endpoint
	for _, ep := range eps {
		if keep(ep) {
			out = append(out, ep)
		}
	}
	return out
}
