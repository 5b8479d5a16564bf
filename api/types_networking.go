package api

// ---- Ingress, IngressClass and NetworkPolicy (networking.k8s.io/v1) ----
//
// Served by resources_networking.go, validated by validation_networking.go.
// Skiff stores them; it runs no ingress controller and does not enforce
// NetworkPolicies (docs/api.md).

// Ingress path types.
const (
	PathTypeExact                  = "Exact"
	PathTypePrefix                 = "Prefix"
	PathTypeImplementationSpecific = "ImplementationSpecific"
)

// Ingress routes HTTP(S) by host and path to Services.
type Ingress struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       IngressSpec   `json:"spec,omitempty"`
	Status     IngressStatus `json:"status,omitempty"`
}

// IngressSpec is an Ingress's class, default backend, TLS and rules.
type IngressSpec struct {
	IngressClassName *string         `json:"ingressClassName,omitempty"`
	DefaultBackend   *IngressBackend `json:"defaultBackend,omitempty"`
	TLS              []IngressTLS    `json:"tls,omitempty"`
	Rules            []IngressRule   `json:"rules,omitempty"`
}

// IngressTLS names the hosts a TLS Secret covers.
type IngressTLS struct {
	Hosts      []string `json:"hosts,omitempty"`
	SecretName string   `json:"secretName,omitempty"`
}

// IngressRule maps a host's paths to backends.
type IngressRule struct {
	Host string                `json:"host,omitempty"`
	HTTP *HTTPIngressRuleValue `json:"http,omitempty"`
}

// HTTPIngressRuleValue is a rule's paths.
type HTTPIngressRuleValue struct {
	Paths []HTTPIngressPath `json:"paths"`
}

// HTTPIngressPath is one path and its backend.
type HTTPIngressPath struct {
	Path     string         `json:"path,omitempty"`
	PathType *string        `json:"pathType"`
	Backend  IngressBackend `json:"backend"`
}

// IngressBackend is a Service port or another resource.
type IngressBackend struct {
	Service  *IngressServiceBackend     `json:"service,omitempty"`
	Resource *TypedLocalObjectReference `json:"resource,omitempty"`
}

// IngressServiceBackend is a Service and one of its ports.
type IngressServiceBackend struct {
	Name string             `json:"name"`
	Port ServiceBackendPort `json:"port,omitempty"`
}

// ServiceBackendPort is a Service port by name or number.
type ServiceBackendPort struct {
	Name   string `json:"name,omitempty"`
	Number int32  `json:"number,omitempty"`
}

// IngressStatus is where the Ingress is reachable.
type IngressStatus struct {
	LoadBalancer IngressLoadBalancerStatus `json:"loadBalancer,omitempty"`
}

// IngressLoadBalancerStatus lists the Ingress's addresses.
type IngressLoadBalancerStatus struct {
	Ingress []IngressLoadBalancerIngress `json:"ingress,omitempty"`
}

// IngressLoadBalancerIngress is one address.
type IngressLoadBalancerIngress struct {
	IP       string              `json:"ip,omitempty"`
	Hostname string              `json:"hostname,omitempty"`
	Ports    []IngressPortStatus `json:"ports,omitempty"`
}

// IngressPortStatus is one port's state: the same shape as a Service's
// PortStatus, so both statuses share validateLoadBalancerPoint.
type IngressPortStatus = PortStatus

// IngressClass names the controller that implements Ingresses of a class.
type IngressClass struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       IngressClassSpec `json:"spec,omitempty"`
}

// IngressClassSpec is the controller and its parameters.
type IngressClassSpec struct {
	Controller string                           `json:"controller,omitempty"`
	Parameters *IngressClassParametersReference `json:"parameters,omitempty"`
}

// IngressClass parameter scopes.
const (
	IngressClassParametersScopeCluster   = "Cluster"
	IngressClassParametersScopeNamespace = "Namespace"
)

// IngressClassParametersReference names the controller's configuration.
type IngressClassParametersReference struct {
	APIGroup  *string `json:"apiGroup,omitempty"`
	Kind      string  `json:"kind"`
	Name      string  `json:"name"`
	Scope     *string `json:"scope,omitempty"`
	Namespace *string `json:"namespace,omitempty"`
}

// AnnotationIsDefaultIngressClass marks the class of Ingresses that name none.
const AnnotationIsDefaultIngressClass = "ingressclass.kubernetes.io/is-default-class"

// NetworkPolicy policy types.
const (
	PolicyTypeIngress = "Ingress"
	PolicyTypeEgress  = "Egress"
)

// NetworkPolicy says which traffic the selected pods may send and receive.
type NetworkPolicy struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       NetworkPolicySpec `json:"spec,omitempty"`
}

// NetworkPolicySpec is the pods, the directions and the allowed traffic.
type NetworkPolicySpec struct {
	PodSelector LabelSelector              `json:"podSelector"`
	Ingress     []NetworkPolicyIngressRule `json:"ingress,omitempty"`
	Egress      []NetworkPolicyEgressRule  `json:"egress,omitempty"`
	PolicyTypes []string                   `json:"policyTypes,omitempty"`
}

// NetworkPolicyIngressRule allows traffic from peers to ports.
type NetworkPolicyIngressRule struct {
	Ports []NetworkPolicyPort `json:"ports,omitempty"`
	From  []NetworkPolicyPeer `json:"from,omitempty"`
}

// NetworkPolicyEgressRule allows traffic to peers on ports.
type NetworkPolicyEgressRule struct {
	Ports []NetworkPolicyPort `json:"ports,omitempty"`
	To    []NetworkPolicyPeer `json:"to,omitempty"`
}

// NetworkPolicyPort is a protocol and a port or port range.
type NetworkPolicyPort struct {
	Protocol *Protocol    `json:"protocol,omitempty"`
	Port     *IntOrString `json:"port,omitempty"`
	EndPort  *int32       `json:"endPort,omitempty"`
}

// NetworkPolicyPeer is pods (by pod and namespace labels) or an IP block.
type NetworkPolicyPeer struct {
	PodSelector       *LabelSelector `json:"podSelector,omitempty"`
	NamespaceSelector *LabelSelector `json:"namespaceSelector,omitempty"`
	IPBlock           *IPBlock       `json:"ipBlock,omitempty"`
}

// IPBlock is a CIDR less some of its parts.
type IPBlock struct {
	CIDR   string   `json:"cidr"`
	Except []string `json:"except,omitempty"`
}
