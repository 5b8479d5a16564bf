package api

import (
	"net/netip"
)

// Defaulting fills the fields Kubernetes fills when a client leaves them
// out. Every function is idempotent: defaulting a defaulted object changes
// nothing. Defaults never depend on other objects or on server flags; the
// API server allocates ClusterIPs and NodePorts separately.

func ptrTo[T any](v T) *T { return &v }

// DefaultNamespace sets status.phase Active and, on a namespace that is not
// being deleted and has none, spec.finalizers ["kubernetes"] (so that the
// finalizer the namespace controller removes is never put back).
func DefaultNamespace(ns *Namespace) {
	if ns.Spec.Finalizers == nil && ns.DeletionTimestamp == nil {
		ns.Spec.Finalizers = []string{FinalizerKubernetes}
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = NamespaceActive
	}
}

// DefaultNode sets status.allocatable to status.capacity when unset.
func DefaultNode(n *Node) {
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = make(ResourceList, len(n.Status.Capacity))
		for k, v := range n.Status.Capacity {
			n.Status.Allocatable[k] = v
		}
	}
	if n.Spec.PodCIDR != "" && len(n.Spec.PodCIDRs) == 0 {
		n.Spec.PodCIDRs = []string{n.Spec.PodCIDR}
	}
	if n.Spec.PodCIDR == "" && len(n.Spec.PodCIDRs) > 0 {
		n.Spec.PodCIDR = n.Spec.PodCIDRs[0]
	}
}

// DefaultPod defaults the pod spec (DefaultPodSpec).
func DefaultPod(p *Pod) { DefaultPodSpec(&p.Spec) }

// DefaultPodTemplateSpec defaults a template's pod spec.
func DefaultPodTemplateSpec(t *PodTemplateSpec) { DefaultPodSpec(&t.Spec) }

// DefaultPodSpec sets restartPolicy Always, dnsPolicy ClusterFirst,
// terminationGracePeriodSeconds 30, schedulerName default-scheduler, an
// empty securityContext, and the container defaults (DefaultContainer).
// With hostNetwork, container ports get hostPort = containerPort.
func DefaultPodSpec(s *PodSpec) {
	if s.RestartPolicy == "" {
		s.RestartPolicy = RestartPolicyAlways
	}
	if s.DNSPolicy == "" {
		s.DNSPolicy = DNSClusterFirst
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = ptrTo[int64](30)
	}
	if s.SchedulerName == "" {
		s.SchedulerName = DefaultSchedulerName
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &PodSecurityContext{}
	}
	// serviceAccount is the deprecated alias of serviceAccountName.
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = s.DeprecatedServiceAccount
	}
	s.DeprecatedServiceAccount = s.ServiceAccountName
	for i := range s.InitContainers {
		DefaultContainer(&s.InitContainers[i], s.HostNetwork)
	}
	for i := range s.Containers {
		DefaultContainer(&s.Containers[i], s.HostNetwork)
	}
	for i := range s.Volumes {
		v := &s.Volumes[i]
		if v.HostPath != nil && v.HostPath.Type == nil {
			v.HostPath.Type = ptrTo("")
		}
		if v.ConfigMap != nil && v.ConfigMap.DefaultMode == nil {
			v.ConfigMap.DefaultMode = ptrTo[int32](0o644)
		}
		if v.Secret != nil && v.Secret.DefaultMode == nil {
			v.Secret.DefaultMode = ptrTo[int32](0o644)
		}
		if d := v.DownwardAPI; d != nil {
			if d.DefaultMode == nil {
				d.DefaultMode = ptrTo[int32](0o644)
			}
			defaultDownwardAPIFiles(d.Items)
		}
		if p := v.Projected; p != nil {
			if p.DefaultMode == nil {
				p.DefaultMode = ptrTo[int32](0o644)
			}
			for j := range p.Sources {
				src := &p.Sources[j]
				if src.DownwardAPI != nil {
					defaultDownwardAPIFiles(src.DownwardAPI.Items)
				}
				if t := src.ServiceAccountToken; t != nil && t.ExpirationSeconds == nil {
					t.ExpirationSeconds = ptrTo[int64](3600)
				}
			}
		}
	}
}

// defaultDownwardAPIFiles sets a fieldRef's apiVersion v1, as Kubernetes
// defaults every ObjectFieldSelector.
func defaultDownwardAPIFiles(items []DownwardAPIVolumeFile) {
	for i := range items {
		if f := items[i].FieldRef; f != nil && f.APIVersion == "" {
			f.APIVersion = "v1"
		}
	}
}

// DefaultContainer sets imagePullPolicy IfNotPresent, terminationMessage
// path and policy, port protocol TCP (and hostPort with hostNetwork), the
// downward API's fieldRef apiVersion v1, requests from limits, and the
// probe defaults (DefaultProbe).
//
// Unlike Kubernetes, which pulls ":latest" and untagged images Always,
// Skiff defaults every image to IfNotPresent: its nodes often run locally
// built images that no registry serves.
func DefaultContainer(c *Container, hostNetwork bool) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = PullIfNotPresent
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = "/dev/termination-log"
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = "File"
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = ProtocolTCP
		}
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil && vf.FieldRef.APIVersion == "" {
			vf.FieldRef.APIVersion = "v1"
		}
	}
	if c.Resources.Limits != nil {
		for name, q := range c.Resources.Limits {
			if _, ok := c.Resources.Requests[name]; ok {
				continue
			}
			if c.Resources.Requests == nil {
				c.Resources.Requests = ResourceList{}
			}
			c.Resources.Requests[name] = q
		}
	}
	for _, p := range []*Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p != nil {
			DefaultProbe(p)
		}
	}
	if c.Lifecycle != nil {
		for _, h := range []*LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil && h.HTTPGet != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

// DefaultProbe sets timeoutSeconds 1, periodSeconds 10, successThreshold
// 1, failureThreshold 3, and httpGet path "/" and scheme HTTP.
func DefaultProbe(p *Probe) {
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if p.HTTPGet != nil {
		defaultHTTPGet(p.HTTPGet)
	}
}

func defaultHTTPGet(h *HTTPGetAction) {
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = URISchemeHTTP
	}
}

// IsHeadlessService reports whether the Service's clusterIP is "None".
func IsHeadlessService(s *Service) bool {
	return s.Spec.ClusterIP == ClusterIPNone || (len(s.Spec.ClusterIPs) > 0 && s.Spec.ClusterIPs[0] == ClusterIPNone)
}

// ExternallyAccessible reports whether the Service is reachable from
// outside the cluster: NodePort, LoadBalancer, or ClusterIP with externalIPs.
func ExternallyAccessible(s *Service) bool {
	return s.Spec.Type == ServiceTypeLoadBalancer || s.Spec.Type == ServiceTypeNodePort ||
		(s.Spec.Type == ServiceTypeClusterIP && len(s.Spec.ExternalIPs) > 0)
}

// NeedsHealthCheck reports whether the Service needs a healthCheckNodePort:
// a LoadBalancer with externalTrafficPolicy Local.
func NeedsHealthCheck(s *Service) bool {
	return s.Spec.Type == ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == ServiceTrafficPolicyLocal
}

// NeedsClusterIP reports whether the Service gets a ClusterIP (every type
// but ExternalName).
func NeedsClusterIP(s *Service) bool { return s.Spec.Type != ServiceTypeExternalName }

// NeedsNodePorts reports whether the Service's ports get NodePorts.
func NeedsNodePorts(s *Service) bool {
	switch s.Spec.Type {
	case ServiceTypeNodePort:
		return true
	case ServiceTypeLoadBalancer:
		return s.Spec.AllocateLoadBalancerNodePorts == nil || *s.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// DefaultService sets type ClusterIP, sessionAffinity None (dropping any
// sessionAffinityConfig) or, for ClientIP, a 10800 s timeout; port protocol
// TCP and targetPort = port; externalTrafficPolicy Cluster for externally
// accessible Services; internalTrafficPolicy Cluster;
// allocateLoadBalancerNodePorts true for LoadBalancers; clusterIP and
// clusterIPs[0] in sync; and, for every type but ExternalName,
// ipFamilyPolicy SingleStack and ipFamilies from the given clusterIPs, else
// [IPv4]. (The API server may set ipFamilies itself before defaulting when
// its service CIDR is IPv6.)
func DefaultService(s *Service) {
	spec := &s.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = ServiceAffinityNone
	}
	if spec.SessionAffinity == ServiceAffinityNone {
		spec.SessionAffinityConfig = nil
	}
	if spec.SessionAffinity == ServiceAffinityClientIP {
		c := spec.SessionAffinityConfig
		if c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			spec.SessionAffinityConfig = &SessionAffinityConfig{ClientIP: &ClientIPConfig{TimeoutSeconds: ptrTo(DefaultClientIPServiceAffinitySeconds)}}
		}
	}
	if spec.Type == "" {
		spec.Type = ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = ProtocolTCP
		}
		if p.TargetPort.IsZero() {
			p.TargetPort = FromInt32(p.Port)
		}
	}
	if ExternallyAccessible(s) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = ServiceTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil {
		switch spec.Type {
		case ServiceTypeClusterIP, ServiceTypeNodePort, ServiceTypeLoadBalancer:
			spec.InternalTrafficPolicy = ptrTo(ServiceTrafficPolicyCluster)
		}
	}
	if spec.Type == ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		spec.AllocateLoadBalancerNodePorts = ptrTo(true)
	}
	if spec.Type == ServiceTypeLoadBalancer {
		for i := range s.Status.LoadBalancer.Ingress {
			ing := &s.Status.LoadBalancer.Ingress[i]
			if ing.IP != "" && ing.IPMode == nil {
				ing.IPMode = ptrTo("VIP")
			}
		}
	}
	// clusterIP and clusterIPs[0] are the same field seen by old and new clients.
	if spec.ClusterIP != "" && len(spec.ClusterIPs) == 0 {
		spec.ClusterIPs = []string{spec.ClusterIP}
	}
	if spec.ClusterIP == "" && len(spec.ClusterIPs) > 0 {
		spec.ClusterIP = spec.ClusterIPs[0]
	}
	if spec.Type != ServiceTypeExternalName {
		if spec.IPFamilyPolicy == nil {
			spec.IPFamilyPolicy = ptrTo(IPFamilyPolicySingleStack)
		}
		if len(spec.IPFamilies) == 0 {
			for _, ip := range spec.ClusterIPs {
				if a, err := netip.ParseAddr(ip); err == nil {
					if a.Is4() {
						spec.IPFamilies = append(spec.IPFamilies, IPv4Protocol)
					} else {
						spec.IPFamilies = append(spec.IPFamilies, IPv6Protocol)
					}
				}
			}
			if len(spec.IPFamilies) == 0 {
				spec.IPFamilies = []string{IPv4Protocol}
			}
		}
	}
}

// DefaultEvent has nothing to default (Kubernetes defaults no Event
// field); it exists for symmetry.
func DefaultEvent(*Event) {}

// DefaultDeployment sets replicas 1, strategy RollingUpdate with
// maxUnavailable and maxSurge 25%, revisionHistoryLimit 10,
// progressDeadlineSeconds 600, and the pod template defaults.
func DefaultDeployment(d *Deployment) {
	spec := &d.Spec
	if spec.Replicas == nil {
		spec.Replicas = ptrTo[int32](1)
	}
	if spec.Strategy.Type == "" {
		spec.Strategy.Type = RollingUpdateDeploymentStrategyType
	}
	if spec.Strategy.Type == RollingUpdateDeploymentStrategyType {
		if spec.Strategy.RollingUpdate == nil {
			spec.Strategy.RollingUpdate = &RollingUpdateDeployment{}
		}
		if spec.Strategy.RollingUpdate.MaxUnavailable == nil {
			spec.Strategy.RollingUpdate.MaxUnavailable = ptrTo(FromString("25%"))
		}
		if spec.Strategy.RollingUpdate.MaxSurge == nil {
			spec.Strategy.RollingUpdate.MaxSurge = ptrTo(FromString("25%"))
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptrTo[int32](10)
	}
	if spec.ProgressDeadlineSeconds == nil {
		spec.ProgressDeadlineSeconds = ptrTo[int32](600)
	}
	DefaultPodTemplateSpec(&spec.Template)
}

// DefaultStatefulSet sets replicas 1, podManagementPolicy OrderedReady,
// updateStrategy RollingUpdate with partition 0, revisionHistoryLimit 10,
// and the pod template defaults.
func DefaultStatefulSet(s *StatefulSet) {
	spec := &s.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = OrderedReadyPodManagement
	}
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = RollingUpdateStatefulSetStrategyType
		if spec.UpdateStrategy.RollingUpdate == nil {
			spec.UpdateStrategy.RollingUpdate = &RollingUpdateStatefulSetStrategy{}
		}
	}
	if spec.UpdateStrategy.Type == RollingUpdateStatefulSetStrategyType && spec.UpdateStrategy.RollingUpdate != nil &&
		spec.UpdateStrategy.RollingUpdate.Partition == nil {
		spec.UpdateStrategy.RollingUpdate.Partition = ptrTo[int32](0)
	}
	if spec.Replicas == nil {
		spec.Replicas = ptrTo[int32](1)
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptrTo[int32](10)
	}
	DefaultPodTemplateSpec(&spec.Template)
	defaultStatefulSetClaims(s)
}

// DefaultEndpointSlice sets every port's name to "" and protocol to TCP
// when unset.
func DefaultEndpointSlice(s *EndpointSlice) {
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Name == nil {
			p.Name = ptrTo("")
		}
		if p.Protocol == nil {
			p.Protocol = ptrTo(ProtocolTCP)
		}
	}
}

// DefaultServiceCIDR has nothing to default; it exists for symmetry.
func DefaultServiceCIDR(*ServiceCIDR) {}

// DefaultIPAddress has nothing to default; it exists for symmetry.
func DefaultIPAddress(*IPAddress) {}

// DefaultLease has nothing to default; it exists for symmetry.
func DefaultLease(*Lease) {}

// DefaultConfigMap has nothing to default; it exists for symmetry.
func DefaultConfigMap(*ConfigMap) {}

// DefaultSecret sets type Opaque and merges the write-only stringData into
// data (a stringData key replaces the same data key), then drops
// stringData, as Kubernetes' conversion of a v1 Secret does: validation
// sees only data, and stringData is never stored or returned.
func DefaultSecret(s *Secret) {
	if s.Type == "" {
		s.Type = SecretTypeOpaque
	}
	if len(s.StringData) > 0 && s.Data == nil {
		s.Data = make(map[string][]byte, len(s.StringData))
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

// DefaultServiceAccount has nothing to default; it exists for symmetry.
func DefaultServiceAccount(*ServiceAccount) {}

// DefaultPodServiceAccount names the "default" ServiceAccount in a new
// pod that names none (spec.serviceAccountName, or its deprecated alias
// spec.serviceAccount), as Kubernetes' ServiceAccount admission plugin
// does on pod create. It runs on create only (the pods resource's
// PrepareForCreate), never on update and never on pod templates, so a
// pod stored without a name keeps its spec.
func DefaultPodServiceAccount(p *Pod) {
	if p.Spec.ServiceAccountName == "" && p.Spec.DeprecatedServiceAccount == "" {
		p.Spec.ServiceAccountName = ServiceAccountDefault
	}
}

// DefaultEndpoints sets protocol TCP on every subset port without one, as
// Kubernetes' SetDefaults_EndpointPort does.
func DefaultEndpoints(e *Endpoints) {
	for i := range e.Subsets {
		for j := range e.Subsets[i].Ports {
			if e.Subsets[i].Ports[j].Protocol == "" {
				e.Subsets[i].Ports[j].Protocol = ProtocolTCP
			}
		}
	}
}
