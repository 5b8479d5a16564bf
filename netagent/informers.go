package netagent

import (
	"github.com/skiff-dev/skiff/client"
)

// agentInformers are the shared informers the agent's features read (the
// pod workers, the node DNS, pod routes, the service proxy, trace). Every
// one is registered by registerInformers, before the agent's one Start:
// client.SharedInformers runs an informer handed out after a Start only at
// the next Start, and there is none, so a feature taking its informer late
// would wait forever unless another feature happened to register the same
// one first. Features take their informers from here and register none.
type agentInformers struct {
	set *client.SharedInformers
	// nodePods are the pods bound to this node (spec.nodeName): the pod
	// workers.
	nodePods *client.Informer
	// pods are every pod: the node DNS (pod names, PTR).
	pods *client.Informer
	// services and slices: the node DNS, the service proxy
	// (ProxyParams.Services and EndpointSlices) and trace.
	services, slices *client.Informer
	// nodes: pod routes; nil in mode none.
	nodes *client.Informer
}

// registerInformers registers, on set, every informer the agent's features
// read (see agentInformers); set is started after it.
func (a *Agent) registerInformers(set *client.SharedInformers) *agentInformers {
	opts := func(name string) client.InformerOptions {
		return client.InformerOptions{Logger: a.log.With("informer", name)}
	}
	nodePods := opts("node-pods")
	nodePods.FieldSelector = "spec.nodeName=" + a.cfg.NodeName
	inf := &agentInformers{
		set:      set,
		nodePods: set.For(a.res.pods, nodePods),
		pods:     set.For(a.res.pods, opts("pods")),
		services: set.For(a.res.services, opts("services")),
		slices:   set.For(a.res.slices, opts("endpointslices")),
	}
	if a.cfg.PodRoutes != PodRoutesNone {
		inf.nodes = set.For(a.res.nodes, opts("nodes"))
	}
	return inf
}
