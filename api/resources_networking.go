package api

// The networking.k8s.io/v1 kinds users' manifests carry beside their
// Services: Ingress, IngressClass and NetworkPolicy (types_networking.go,
// validation_networking.go). The API stores and validates them; what
// acts on them on a node is described in docs/api.md.

func ingresses() *ResourceInfo {
	return build[Ingress, *Ingress, IngressList](ResourceInfo{
		Group: "networking.k8s.io", Version: "v1", Resource: "ingresses", Singular: "ingress", Kind: "Ingress", ListKind: "IngressList",
		Namespaced: true, ShortNames: []string{"ing"}, Subresources: []string{"status"},
	}, kindFuncs[*Ingress]{
		defaults:     DefaultIngress,
		create:       ValidateIngress,
		update:       ValidateIngressUpdate,
		statusUpdate: ValidateIngressStatusUpdate,
		resetStatus:  func(o *Ingress) { o.Status = IngressStatus{} },
		keepStatus:   func(o, p *Ingress) { o.Status = p.Status },
		keepSpec:     func(o, p *Ingress) { o.Spec = p.Spec },
		specChanged:  func(o, p *Ingress) bool { return !semanticEqual(o.Spec, p.Spec) },
	})
}

func ingressClasses() *ResourceInfo {
	return build[IngressClass, *IngressClass, IngressClassList](ResourceInfo{
		Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses", Singular: "ingressclass", Kind: "IngressClass", ListKind: "IngressClassList",
	}, kindFuncs[*IngressClass]{
		defaults:    DefaultIngressClass,
		create:      ValidateIngressClass,
		update:      ValidateIngressClassUpdate,
		specChanged: func(o, p *IngressClass) bool { return !semanticEqual(o.Spec, p.Spec) },
	})
}

func networkPolicies() *ResourceInfo {
	return build[NetworkPolicy, *NetworkPolicy, NetworkPolicyList](ResourceInfo{
		Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies", Singular: "networkpolicy", Kind: "NetworkPolicy", ListKind: "NetworkPolicyList",
		Namespaced: true, ShortNames: []string{"netpol"},
	}, kindFuncs[*NetworkPolicy]{
		defaults:    DefaultNetworkPolicy,
		create:      ValidateNetworkPolicy,
		update:      ValidateNetworkPolicyUpdate,
		specChanged: func(o, p *NetworkPolicy) bool { return !semanticEqual(o.Spec, p.Spec) },
	})
}
