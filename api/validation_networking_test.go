package api

import (
	"slices"
	"testing"
)

func validIngress() *Ingress {
	return &Ingress{
		ObjectMeta: ObjectMeta{Name: "web", Namespace: "default"},
		Spec: IngressSpec{
			IngressClassName: ptrTo("nginx"),
			TLS:              []IngressTLS{{Hosts: []string{"example.com"}, SecretName: "example-tls"}},
			Rules: []IngressRule{{Host: "example.com", HTTP: &HTTPIngressRuleValue{Paths: []HTTPIngressPath{
				{Path: "/", PathType: ptrTo(PathTypePrefix), Backend: IngressBackend{Service: &IngressServiceBackend{Name: "web", Port: ServiceBackendPort{Number: 80}}}},
				{Path: "/api", PathType: ptrTo(PathTypeExact), Backend: IngressBackend{Service: &IngressServiceBackend{Name: "api", Port: ServiceBackendPort{Name: "http"}}}},
			}}}},
		},
	}
}

func validIngressClass() *IngressClass {
	return &IngressClass{ObjectMeta: ObjectMeta{Name: "nginx"}, Spec: IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}
}

func validNetworkPolicy() *NetworkPolicy {
	tcp := ProtocolTCP
	return &NetworkPolicy{
		ObjectMeta: ObjectMeta{Name: "db", Namespace: "default"},
		Spec: NetworkPolicySpec{
			PodSelector: LabelSelector{MatchLabels: map[string]string{"role": "db"}},
			Ingress: []NetworkPolicyIngressRule{{
				Ports: []NetworkPolicyPort{{Protocol: &tcp, Port: ptrTo(FromInt32(6379))}},
				From: []NetworkPolicyPeer{
					{IPBlock: &IPBlock{CIDR: "172.17.0.0/16", Except: []string{"172.17.1.0/24"}}},
					{NamespaceSelector: &LabelSelector{MatchLabels: map[string]string{"project": "p"}}, PodSelector: &LabelSelector{}},
				},
			}},
			PolicyTypes: []string{PolicyTypeIngress},
		},
	}
}

func TestValidateIngress(t *testing.T) {
	path0 := func(i *Ingress) *HTTPIngressPath { return &i.Spec.Rules[0].HTTP.Paths[0] }
	tests := []struct {
		name   string
		mutate func(*Ingress)
		want   []string
	}{
		{name: "valid", mutate: func(*Ingress) {}},
		{name: "valid default backend only", mutate: func(i *Ingress) {
			i.Spec.Rules, i.Spec.DefaultBackend = nil, &IngressBackend{Service: &IngressServiceBackend{Name: "web", Port: ServiceBackendPort{Number: 80}}}
		}},
		{name: "valid wildcard host, no host, implementation specific", mutate: func(i *Ingress) {
			i.Spec.Rules[0].Host = "*.example.com"
			i.Spec.Rules = append(i.Spec.Rules, IngressRule{HTTP: &HTTPIngressRuleValue{Paths: []HTTPIngressPath{{PathType: ptrTo(PathTypeImplementationSpecific),
				Backend: IngressBackend{Resource: &TypedLocalObjectReference{APIGroup: ptrTo("k8s.example.com"), Kind: "StorageBucket", Name: "static"}}}}}})
		}},
		{name: "nothing", mutate: func(i *Ingress) { i.Spec.Rules = nil }, want: []string{"FieldValueInvalid spec"}},
		{name: "ip host", mutate: func(i *Ingress) { i.Spec.Rules[0].Host = "10.0.0.1" }, want: []string{"FieldValueInvalid spec.rules[0].host"}},
		{name: "upper-case host", mutate: func(i *Ingress) { i.Spec.Rules[0].Host = "REPLACEME" }, want: []string{"FieldValueInvalid spec.rules[0].host"}},
		{name: "bad wildcard", mutate: func(i *Ingress) { i.Spec.Rules[0].Host = "a.*.com" }, want: []string{"FieldValueInvalid spec.rules[0].host"}},
		{name: "no paths", mutate: func(i *Ingress) { i.Spec.Rules[0].HTTP.Paths = nil }, want: []string{"FieldValueRequired spec.rules[0].http.paths"}},
		{name: "no pathType", mutate: func(i *Ingress) { path0(i).PathType = nil }, want: []string{"FieldValueRequired spec.rules[0].http.paths[0].pathType"}},
		{name: "bad pathType", mutate: func(i *Ingress) { path0(i).PathType = ptrTo("Regex") }, want: []string{"FieldValueNotSupported spec.rules[0].http.paths[0].pathType"}},
		{name: "relative path", mutate: func(i *Ingress) { path0(i).Path = "api" }, want: []string{"FieldValueInvalid spec.rules[0].http.paths[0].path"}},
		{name: "path with //", mutate: func(i *Ingress) { path0(i).Path = "/a//b" }, want: []string{"FieldValueInvalid spec.rules[0].http.paths[0].path"}},
		{name: "both backends", mutate: func(i *Ingress) {
			path0(i).Backend.Resource = &TypedLocalObjectReference{Kind: "K", Name: "n"}
		}, want: []string{"FieldValueInvalid spec.rules[0].http.paths[0].backend"}},
		{name: "no backend", mutate: func(i *Ingress) { path0(i).Backend = IngressBackend{} }, want: []string{"FieldValueInvalid spec.rules[0].http.paths[0].backend"}},
		{name: "port name and number", mutate: func(i *Ingress) { path0(i).Backend.Service.Port.Name = "http" },
			want: []string{"FieldValueInvalid spec.rules[0].http.paths[0].backend.service.port"}},
		{name: "no port", mutate: func(i *Ingress) { path0(i).Backend.Service.Port = ServiceBackendPort{} },
			want: []string{"FieldValueRequired spec.rules[0].http.paths[0].backend.service.port"}},
		{name: "bad service name", mutate: func(i *Ingress) { path0(i).Backend.Service.Name = "1web" },
			want: []string{"FieldValueInvalid spec.rules[0].http.paths[0].backend.service.name"}},
		{name: "bad class", mutate: func(i *Ingress) { i.Spec.IngressClassName = ptrTo("NGINX") }, want: []string{"FieldValueInvalid spec.ingressClassName"}},
		{name: "bad tls host and secret", mutate: func(i *Ingress) { i.Spec.TLS[0].Hosts[0], i.Spec.TLS[0].SecretName = "REPLACEME", "A_B" },
			want: []string{"FieldValueInvalid spec.tls[0].hosts[0]", "FieldValueInvalid spec.tls[0].secretName"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := validIngress()
			tt.mutate(i)
			checkErrs(t, ValidateIngress(i), tt.want...)
		})
	}
	st := validIngress()
	st.Status.LoadBalancer.Ingress = []IngressLoadBalancerIngress{{IP: "nope"}, {Hostname: "10.0.0.1"}}
	checkErrs(t, ValidateIngressStatusUpdate(st, validIngress()),
		"FieldValueInvalid status.loadBalancer.ingress[0].ip", "FieldValueInvalid status.loadBalancer.ingress[1].hostname")
}

func TestValidateIngressClass(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*IngressClass)
		want   []string
	}{
		{name: "valid", mutate: func(*IngressClass) {}},
		{name: "valid namespaced parameters", mutate: func(c *IngressClass) {
			c.Spec.Parameters = &IngressClassParametersReference{Kind: "Config", Name: "c", Scope: ptrTo("Namespace"), Namespace: ptrTo("ingress")}
		}},
		{name: "no controller", mutate: func(c *IngressClass) { c.Spec.Controller = "" }, want: []string{"FieldValueRequired spec.controller"}},
		{name: "controller not a domain path", mutate: func(c *IngressClass) { c.Spec.Controller = "nginx" }, want: []string{"FieldValueInvalid spec.controller"}},
		{name: "parameters without kind, name, scope", mutate: func(c *IngressClass) { c.Spec.Parameters = &IngressClassParametersReference{} },
			want: []string{"FieldValueRequired spec.parameters.kind", "FieldValueRequired spec.parameters.name", "FieldValueRequired spec.parameters.scope"}},
		{name: "cluster scope with a namespace", mutate: func(c *IngressClass) {
			c.Spec.Parameters = &IngressClassParametersReference{Kind: "Config", Name: "c", Scope: ptrTo("Cluster"), Namespace: ptrTo("x")}
		}, want: []string{"FieldValueForbidden spec.parameters.namespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validIngressClass()
			tt.mutate(c)
			checkErrs(t, ValidateIngressClass(c), tt.want...)
		})
	}
	upd := validIngressClass()
	upd.Spec.Controller = "example.com/other"
	checkErrs(t, ValidateIngressClassUpdate(upd, validIngressClass()), "FieldValueInvalid spec.controller")
}

func TestValidateNetworkPolicy(t *testing.T) {
	port := func(n *NetworkPolicy) *NetworkPolicyPort { return &n.Spec.Ingress[0].Ports[0] }
	tests := []struct {
		name   string
		mutate func(*NetworkPolicy)
		want   []string
	}{
		{name: "valid", mutate: func(*NetworkPolicy) {}},
		{name: "valid deny all, named port, range", mutate: func(n *NetworkPolicy) {
			n.Spec.Ingress = append(n.Spec.Ingress, NetworkPolicyIngressRule{Ports: []NetworkPolicyPort{{Port: ptrTo(FromString("http"))}, {Port: ptrTo(FromInt32(8000)), EndPort: ptrTo[int32](9000)}}})
			n.Spec.Egress = []NetworkPolicyEgressRule{{}}
			n.Spec.PolicyTypes = []string{PolicyTypeIngress, PolicyTypeEgress}
		}},
		{name: "bad protocol", mutate: func(n *NetworkPolicy) { port(n).Protocol = ptrTo(Protocol("ICMP")) },
			want: []string{"FieldValueNotSupported spec.ingress[0].ports[0].protocol"}},
		{name: "port 0", mutate: func(n *NetworkPolicy) { port(n).Port = ptrTo(FromInt32(0)) }, want: []string{"FieldValueInvalid spec.ingress[0].ports[0].port"}},
		{name: "endPort below port", mutate: func(n *NetworkPolicy) { port(n).EndPort = ptrTo[int32](100) },
			want: []string{"FieldValueInvalid spec.ingress[0].ports[0].endPort"}},
		{name: "endPort with a named port", mutate: func(n *NetworkPolicy) { port(n).Port, port(n).EndPort = ptrTo(FromString("redis")), ptrTo[int32](7000) },
			want: []string{"FieldValueForbidden spec.ingress[0].ports[0].endPort"}},
		{name: "empty peer", mutate: func(n *NetworkPolicy) { n.Spec.Ingress[0].From[0] = NetworkPolicyPeer{} },
			want: []string{"FieldValueRequired spec.ingress[0].from[0]"}},
		{name: "ipBlock and selector", mutate: func(n *NetworkPolicy) { n.Spec.Ingress[0].From[0].PodSelector = &LabelSelector{} },
			want: []string{"FieldValueForbidden spec.ingress[0].from[0]"}},
		{name: "bad cidr", mutate: func(n *NetworkPolicy) { n.Spec.Ingress[0].From[0].IPBlock.CIDR = "172.17.0.0" },
			want: []string{"FieldValueInvalid spec.ingress[0].from[0].ipBlock.cidr"}},
		{name: "except outside cidr", mutate: func(n *NetworkPolicy) { n.Spec.Ingress[0].From[0].IPBlock.Except = []string{"10.0.0.0/24"} },
			want: []string{"FieldValueInvalid spec.ingress[0].from[0].ipBlock.except[0]"}},
		{name: "except equal to cidr", mutate: func(n *NetworkPolicy) { n.Spec.Ingress[0].From[0].IPBlock.Except = []string{"172.17.0.0/16"} },
			want: []string{"FieldValueInvalid spec.ingress[0].from[0].ipBlock.except[0]"}},
		{name: "bad policy type", mutate: func(n *NetworkPolicy) { n.Spec.PolicyTypes = []string{"Both"} },
			want: []string{"FieldValueNotSupported spec.policyTypes[0]"}},
		{name: "bad pod selector", mutate: func(n *NetworkPolicy) { n.Spec.PodSelector.MatchLabels = map[string]string{"a b": "c"} },
			want: []string{"FieldValueInvalid spec.podSelector.matchLabels"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := validNetworkPolicy()
			tt.mutate(n)
			checkErrs(t, ValidateNetworkPolicy(n), tt.want...)
		})
	}
}

func TestDefaultNetworkPolicy(t *testing.T) {
	n := validNetworkPolicy()
	n.Spec.PolicyTypes = nil
	n.Spec.Ingress[0].Ports[0].Protocol = nil
	DefaultNetworkPolicy(n)
	if !slices.Equal(n.Spec.PolicyTypes, []string{PolicyTypeIngress}) || *n.Spec.Ingress[0].Ports[0].Protocol != ProtocolTCP {
		t.Fatalf("defaults: %+v", n.Spec)
	}
	n.Spec.PolicyTypes = nil
	n.Spec.Egress = []NetworkPolicyEgressRule{{Ports: []NetworkPolicyPort{{}}}}
	DefaultNetworkPolicy(n)
	if !slices.Equal(n.Spec.PolicyTypes, []string{PolicyTypeIngress, PolicyTypeEgress}) || *n.Spec.Egress[0].Ports[0].Protocol != ProtocolTCP {
		t.Fatalf("defaults with egress: %+v", n.Spec)
	}
}

func TestDefaultIngressClass(t *testing.T) {
	c := validIngressClass()
	c.Spec.Parameters = &IngressClassParametersReference{Kind: "IngressParameters", Name: "lb"}
	DefaultIngressClass(c)
	if c.Spec.Parameters.Scope == nil || *c.Spec.Parameters.Scope != IngressClassParametersScopeCluster {
		t.Fatalf("scope %v, want Cluster", c.Spec.Parameters.Scope)
	}
	checkErrs(t, ValidateIngressClass(c))
	ns := IngressClassParametersScopeNamespace
	c.Spec.Parameters.Scope = &ns
	DefaultIngressClass(c)
	if *c.Spec.Parameters.Scope != ns {
		t.Fatalf("a set scope changed to %s", *c.Spec.Parameters.Scope)
	}
}
