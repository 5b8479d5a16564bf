package api

// ---- EndpointSlice (discovery.k8s.io/v1) ----

// Address types of an EndpointSlice.
const (
	AddressTypeIPv4 = "IPv4"
	AddressTypeIPv6 = "IPv6"
	AddressTypeFQDN = "FQDN"
)

// Well-known EndpointSlice labels.
const (
	LabelServiceName = "kubernetes.io/service-name"
	LabelManagedBy   = "endpointslice.kubernetes.io/managed-by"
)

// EndpointSlice holds a subset of a Service's endpoints.
type EndpointSlice struct {
	TypeMeta    `json:",inline"`
	ObjectMeta  `json:"metadata,omitempty"`
	AddressType string         `json:"addressType"`
	Endpoints   []Endpoint     `json:"endpoints"`
	Ports       []EndpointPort `json:"ports"`
}

// Endpoint is one backend of a Service.
type Endpoint struct {
	Addresses  []string           `json:"addresses"`
	Conditions EndpointConditions `json:"conditions,omitempty"`
	Hostname   *string            `json:"hostname,omitempty"`
	TargetRef  *ObjectReference   `json:"targetRef,omitempty"`
	NodeName   *string            `json:"nodeName,omitempty"`
	Zone       *string            `json:"zone,omitempty"`
	Hints      *EndpointHints     `json:"hints,omitempty"`
}

// EndpointConditions are an endpoint's readiness; nil means unknown.
type EndpointConditions struct {
	Ready       *bool `json:"ready,omitempty"`
	Serving     *bool `json:"serving,omitempty"`
	Terminating *bool `json:"terminating,omitempty"`
}

// EndpointHints are topology hints (accepted, not acted on).
type EndpointHints struct {
	ForZones []ForZone `json:"forZones,omitempty"`
	ForNodes []ForNode `json:"forNodes,omitempty"`
}

// ForZone names a zone in hints.
type ForZone struct {
	Name string `json:"name"`
}

// ForNode names a node in hints.
type ForNode struct {
	Name string `json:"name"`
}

// EndpointPort is one port of every endpoint in the slice.
type EndpointPort struct {
	Name        *string   `json:"name,omitempty"`
	Protocol    *Protocol `json:"protocol,omitempty"`
	Port        *int32    `json:"port,omitempty"`
	AppProtocol *string   `json:"appProtocol,omitempty"`
}

// ---- ServiceCIDR and IPAddress (networking.k8s.io/v1) ----

// DefaultServiceCIDRName is the ServiceCIDR made from --service-cidr.
const DefaultServiceCIDRName = "kubernetes"

// ServiceCIDR is a range ClusterIPs are allocated from.
type ServiceCIDR struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       ServiceCIDRSpec   `json:"spec,omitempty"`
	Status     ServiceCIDRStatus `json:"status,omitempty"`
}

// ServiceCIDRSpec holds at most one CIDR per IP family.
type ServiceCIDRSpec struct {
	CIDRs []string `json:"cidrs,omitempty"`
}

// ServiceCIDRStatus holds the Ready condition.
type ServiceCIDRStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
}

// IPAddress records one allocated ClusterIP; its name is the IP.
type IPAddress struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       IPAddressSpec `json:"spec,omitempty"`
}

// IPAddressSpec points at the object holding the IP.
type IPAddressSpec struct {
	ParentRef *ParentReference `json:"parentRef,omitempty"`
}

// ParentReference names the owner of an IPAddress (a Service).
type ParentReference struct {
	Group     string `json:"group,omitempty"`
	Resource  string `json:"resource,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
}

// ---- Lease (coordination.k8s.io/v1) ----

// Lease is a lock held by one holder for a duration (leader election,
// node heartbeats).
type Lease struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       LeaseSpec `json:"spec,omitempty"`
}

// LeaseSpec is who holds the lease and until when.
type LeaseSpec struct {
	HolderIdentity       *string    `json:"holderIdentity,omitempty"`
	LeaseDurationSeconds *int32     `json:"leaseDurationSeconds,omitempty"`
	AcquireTime          *MicroTime `json:"acquireTime,omitempty"`
	RenewTime            *MicroTime `json:"renewTime,omitempty"`
	LeaseTransitions     *int32     `json:"leaseTransitions,omitempty"`
	Strategy             *string    `json:"strategy,omitempty"`
	PreferredHolder      *string    `json:"preferredHolder,omitempty"`
}
