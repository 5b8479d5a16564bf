package api

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api/field"
)

var (
	supportedServiceTypes         = []string{ServiceTypeClusterIP, ServiceTypeExternalName, ServiceTypeLoadBalancer, ServiceTypeNodePort}
	supportedSessionAffinities    = []string{ServiceAffinityClientIP, ServiceAffinityNone}
	supportedTrafficPolicies      = []string{ServiceTrafficPolicyCluster, ServiceTrafficPolicyLocal}
	supportedIPFamilies           = []string{IPv4Protocol, IPv6Protocol}
	supportedIPFamilyPolicies     = []string{IPFamilyPolicyPreferDualStack, IPFamilyPolicyRequireDualStack, IPFamilyPolicySingleStack}
	supportedLoadBalancerIPModes  = []string{"Proxy", "VIP"}
	supportedTrafficDistributions = []string{"PreferClose", "PreferSameNode", "PreferSameZone"}
)

// ValidateNonSpecialIP rejects IPs that can never be a Service's external
// IP or an endpoint: unspecified, loopback, link-local, link-local multicast.
func ValidateNonSpecialIP(s string, path *field.Path) field.ErrorList {
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return field.ErrorList{field.Invalid(path, s, "must be a valid IP address")}
	}
	switch {
	case ip.IsUnspecified():
		return field.ErrorList{field.Invalid(path, s, fmt.Sprintf("may not be unspecified (%v)", s))}
	case ip.IsLoopback():
		return field.ErrorList{field.Invalid(path, s, "may not be in the loopback range (127.0.0.0/8, ::1/128)")}
	case ip.IsLinkLocalUnicast():
		return field.ErrorList{field.Invalid(path, s, "may not be in the link-local range (169.254.0.0/16, fe80::/10)")}
	case ip.IsLinkLocalMulticast():
		return field.ErrorList{field.Invalid(path, s, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")}
	}
	return nil
}

// ValidateService checks a Service: its name is a DNS-1035 label, its
// ports, selector, type-dependent fields (headless NodePort/LoadBalancer,
// ExternalName), session affinity, clusterIP(s) and IP families, external
// IPs, source ranges, and traffic policies. NodePorts 0 and a missing
// healthCheckNodePort are accepted: the API server allocates them.
func ValidateService(s *Service) field.ErrorList {
	errs := ValidateObjectMeta(&s.ObjectMeta, true, NameIsDNS1035Label, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	headless := IsHeadlessService(s)

	if len(s.Spec.Ports) == 0 && !headless && s.Spec.Type != ServiceTypeExternalName {
		errs = append(errs, field.Required(spec.Child("ports"), ""))
	}
	switch s.Spec.Type {
	case ServiceTypeLoadBalancer:
		if headless {
			errs = append(errs, field.Invalid(spec.Child("clusterIPs").Index(0), ClusterIPNone, "may not be set to 'None' for LoadBalancer services"))
		}
	case ServiceTypeNodePort:
		if headless {
			errs = append(errs, field.Invalid(spec.Child("clusterIPs").Index(0), ClusterIPNone, "may not be set to 'None' for NodePort services"))
		}
	case ServiceTypeExternalName:
		if len(s.Spec.ClusterIPs) > 0 || s.Spec.ClusterIP != "" {
			errs = append(errs, field.Forbidden(spec.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(s.Spec.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if s.Spec.IPFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(spec.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		// The name may end in a dot to mark it fully qualified.
		cname := strings.TrimSuffix(s.Spec.ExternalName, ".")
		if cname == "" {
			errs = append(errs, field.Required(spec.Child("externalName"), ""))
		} else {
			errs = append(errs, ValidateDNS1123SubdomainField(cname, spec.Child("externalName"))...)
		}
	}

	names := map[string]bool{}
	for i := range s.Spec.Ports {
		errs = append(errs, validateServicePort(&s.Spec.Ports[i], len(s.Spec.Ports) > 1, names, spec.Child("ports").Index(i))...)
	}
	if s.Spec.Selector != nil {
		errs = append(errs, ValidateLabels(s.Spec.Selector, spec.Child("selector"))...)
	}

	switch {
	case s.Spec.SessionAffinity == "":
		errs = append(errs, field.Required(spec.Child("sessionAffinity"), ""))
	case !slices.Contains(supportedSessionAffinities, s.Spec.SessionAffinity):
		errs = append(errs, field.NotSupported(spec.Child("sessionAffinity"), s.Spec.SessionAffinity, supportedSessionAffinities))
	case s.Spec.SessionAffinity == ServiceAffinityClientIP:
		errs = append(errs, validateClientIPAffinityConfig(s.Spec.SessionAffinityConfig, spec.Child("sessionAffinityConfig"))...)
	case s.Spec.SessionAffinityConfig != nil:
		errs = append(errs, field.Forbidden(spec.Child("sessionAffinityConfig"), fmt.Sprintf("must not be set when session affinity is %s", ServiceAffinityNone)))
	}

	errs = append(errs, validateClusterIPsRelatedFields(s)...)

	for i, ip := range s.Spec.ExternalIPs {
		p := spec.Child("externalIPs").Index(i)
		if e := ValidateIP(p, ip); len(e) > 0 {
			errs = append(errs, e...)
		} else {
			errs = append(errs, ValidateNonSpecialIP(ip, p)...)
		}
	}

	switch {
	case s.Spec.Type == "":
		errs = append(errs, field.Required(spec.Child("type"), ""))
	case !slices.Contains(supportedServiceTypes, s.Spec.Type):
		errs = append(errs, field.NotSupported(spec.Child("type"), s.Spec.Type, supportedServiceTypes))
	}

	if s.Spec.Type == ServiceTypeClusterIP {
		for i := range s.Spec.Ports {
			if s.Spec.Ports[i].NodePort != 0 {
				errs = append(errs, field.Forbidden(spec.Child("ports").Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}

	// Duplicate NodePorts and ports, per protocol.
	type key struct {
		proto Protocol
		port  int32
	}
	nodePorts := map[key]bool{}
	ports := map[key]bool{}
	for i, p := range s.Spec.Ports {
		pp := spec.Child("ports").Index(i)
		if p.NodePort != 0 {
			k := key{p.Protocol, p.NodePort}
			if nodePorts[k] {
				errs = append(errs, field.Duplicate(pp.Child("nodePort"), p.NodePort))
			}
			nodePorts[k] = true
		}
		k := key{p.Protocol, p.Port}
		if ports[k] {
			errs = append(errs, field.Duplicate(pp, map[string]any{"port": p.Port, "protocol": p.Protocol}))
		}
		ports[k] = true
	}

	if len(s.Spec.LoadBalancerSourceRanges) > 0 {
		// Kubernetes spells this path with a capital L.
		p := spec.Child("LoadBalancerSourceRanges")
		if s.Spec.Type != ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		for i, r := range s.Spec.LoadBalancerSourceRanges {
			errs = append(errs, ValidateCIDR(p.Index(i), strings.TrimSpace(r))...)
		}
	}
	if s.Spec.LoadBalancerIP != "" {
		errs = append(errs, ValidateIP(spec.Child("loadBalancerIP"), s.Spec.LoadBalancerIP)...)
	}
	if s.Spec.AllocateLoadBalancerNodePorts != nil && s.Spec.Type != ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(spec.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if s.Spec.Type == ServiceTypeLoadBalancer && s.Spec.AllocateLoadBalancerNodePorts == nil {
		errs = append(errs, field.Required(spec.Child("allocateLoadBalancerNodePorts"), ""))
	}
	if s.Spec.LoadBalancerClass != nil {
		if s.Spec.Type != ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(spec.Child("loadBalancerClass"), "may only be used when `type` is 'LoadBalancer'"))
		} else {
			errs = append(errs, ValidateQualifiedNameField(*s.Spec.LoadBalancerClass, spec.Child("loadBalancerClass"))...)
		}
	}

	// externalTrafficPolicy and healthCheckNodePort.
	if !ExternallyAccessible(s) {
		if s.Spec.ExternalTrafficPolicy != "" {
			errs = append(errs, field.Invalid(spec.Child("externalTrafficPolicy"), s.Spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		}
	} else if s.Spec.ExternalTrafficPolicy == "" {
		errs = append(errs, field.Required(spec.Child("externalTrafficPolicy"), ""))
	} else if !slices.Contains(supportedTrafficPolicies, s.Spec.ExternalTrafficPolicy) {
		errs = append(errs, field.NotSupported(spec.Child("externalTrafficPolicy"), s.Spec.ExternalTrafficPolicy, supportedTrafficPolicies))
	}
	if s.Spec.HealthCheckNodePort != 0 {
		if !NeedsHealthCheck(s) {
			errs = append(errs, field.Invalid(spec.Child("healthCheckNodePort"), s.Spec.HealthCheckNodePort, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		} else {
			errs = append(errs, invalidEach(spec.Child("healthCheckNodePort"), s.Spec.HealthCheckNodePort, ValidatePortNum(int(s.Spec.HealthCheckNodePort)))...)
		}
	}

	// internalTrafficPolicy.
	if s.Spec.InternalTrafficPolicy == nil {
		switch s.Spec.Type {
		case ServiceTypeClusterIP, ServiceTypeNodePort, ServiceTypeLoadBalancer:
			errs = append(errs, field.Required(spec.Child("internalTrafficPolicy"), ""))
		}
	} else if !slices.Contains(supportedTrafficPolicies, *s.Spec.InternalTrafficPolicy) {
		errs = append(errs, field.NotSupported(spec.Child("internalTrafficPolicy"), *s.Spec.InternalTrafficPolicy, supportedTrafficPolicies))
	}
	if td := s.Spec.TrafficDistribution; td != nil && !slices.Contains(supportedTrafficDistributions, *td) {
		errs = append(errs, field.NotSupported(spec.Child("trafficDistribution"), *td, supportedTrafficDistributions))
	}
	return errs
}

func validateServicePort(p *ServicePort, requireName bool, names map[string]bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && p.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else if p.Name != "" {
		errs = append(errs, ValidateDNS1123LabelField(p.Name, path.Child("name"))...)
		if names[p.Name] {
			errs = append(errs, field.Duplicate(path.Child("name"), p.Name))
		} else {
			names[p.Name] = true
		}
	}
	errs = append(errs, invalidEach(path.Child("port"), p.Port, ValidatePortNum(int(p.Port)))...)
	errs = append(errs, ValidateProtocol(p.Protocol, path.Child("protocol"))...)
	errs = append(errs, ValidatePortNumOrName(p.TargetPort, path.Child("targetPort"))...)
	if p.NodePort != 0 {
		errs = append(errs, invalidEach(path.Child("nodePort"), p.NodePort, ValidateInRange(int(p.NodePort), 0, 65535))...)
	}
	if p.AppProtocol != nil {
		errs = append(errs, ValidateQualifiedNameField(*p.AppProtocol, path.Child("appProtocol"))...)
	}
	return errs
}

func validateClientIPAffinityConfig(c *SessionAffinityConfig, path *field.Path) field.ErrorList {
	when := fmt.Sprintf("when session affinity type is %s", ServiceAffinityClientIP)
	switch {
	case c == nil:
		return field.ErrorList{field.Required(path, when)}
	case c.ClientIP == nil:
		return field.ErrorList{field.Required(path.Child("clientIP"), when)}
	case c.ClientIP.TimeoutSeconds == nil:
		return field.ErrorList{field.Required(path.Child("clientIP", "timeoutSeconds"), when)}
	}
	if t := *c.ClientIP.TimeoutSeconds; t <= 0 || t > MaxClientIPServiceAffinitySeconds {
		return field.ErrorList{field.Invalid(path.Child("clientIP", "timeoutSeconds"), t,
			fmt.Sprintf("must be greater than 0 and less than %d", MaxClientIPServiceAffinitySeconds))}
	}
	return nil
}

func validateClusterIPsRelatedFields(s *Service) field.ErrorList {
	if s.Spec.Type == ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	spec := field.NewPath("spec")
	ipsPath := spec.Child("clusterIPs")
	famPath := spec.Child("ipFamilies")

	if s.Spec.ClusterIP != "" {
		if len(s.Spec.ClusterIPs) == 0 {
			errs = append(errs, field.Required(ipsPath, ""))
		} else if s.Spec.ClusterIPs[0] != s.Spec.ClusterIP {
			errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(s.Spec.ClusterIPs) != 0 {
		errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}

	seen := map[string]bool{}
	for i, f := range s.Spec.IPFamilies {
		if !slices.Contains(supportedIPFamilies, f) {
			errs = append(errs, field.NotSupported(famPath.Index(i), f, supportedIPFamilies))
		}
		if seen[f] {
			errs = append(errs, field.Duplicate(famPath.Index(i), f))
		}
		seen[f] = true
	}
	if len(s.Spec.IPFamilies) > 2 {
		errs = append(errs, field.Invalid(famPath, s.Spec.IPFamilies, "may only hold up to 2 values"))
	}
	if p := s.Spec.IPFamilyPolicy; p != nil && !slices.Contains(supportedIPFamilyPolicies, *p) {
		errs = append(errs, field.NotSupported(spec.Child("ipFamilyPolicy"), *p, supportedIPFamilyPolicies))
	}

	badIPs := false
	for i, ip := range s.Spec.ClusterIPs {
		if i == 0 && ip == ClusterIPNone {
			if len(s.Spec.ClusterIPs) > 1 {
				badIPs = true
				errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		if e := ValidateIP(ipsPath.Index(i), ip); len(e) > 0 {
			badIPs = true
			errs = append(errs, e...)
		}
	}
	if len(s.Spec.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "may only hold up to 2 values"))
	}
	if badIPs {
		return errs
	}
	if len(s.Spec.ClusterIPs) > 1 && !isDualStack(s.Spec.ClusterIPs) {
		errs = append(errs, field.Invalid(ipsPath, s.Spec.ClusterIPs, "may specify no more than one IP for each IP family"))
	}
	if !IsHeadlessService(s) {
		for i, ip := range s.Spec.ClusterIPs {
			if i >= len(s.Spec.IPFamilies) {
				break
			}
			v6 := IsIPv6(ip)
			if s.Spec.IPFamilies[i] == IPv4Protocol && v6 {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if s.Spec.IPFamilies[i] == IPv6Protocol && !v6 {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return errs
}

// ValidateServiceUpdate checks an update of a Service: the new Service must
// be valid; the clusterIPs and the primary IP family may not change
// (a secondary may be added or, with ipFamilyPolicy SingleStack, removed),
// except when the type changes to or from ExternalName; loadBalancerClass
// may not change on a LoadBalancer. Call PrepareServiceForUpdate first, so
// that a PUT that leaves out the allocated values keeps them.
func ValidateServiceUpdate(s, old *Service) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateClusterIPsUpdate(s, old)...)
	errs = append(errs, validateIPFamiliesUpdate(s, old)...)
	if old.Spec.Type == ServiceTypeLoadBalancer && s.Spec.Type == ServiceTypeLoadBalancer &&
		old.Spec.LoadBalancerClass != nil && !semanticEqual(s.Spec.LoadBalancerClass, old.Spec.LoadBalancerClass) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "loadBalancerClass"), s.Spec.LoadBalancerClass, "may not change once set"))
	}
	errs = append(errs, ValidateService(s)...)
	return dedupe(errs)
}

func validateClusterIPsUpdate(s, old *Service) field.ErrorList {
	if s.Spec.Type == ServiceTypeExternalName || old.Spec.Type == ServiceTypeExternalName {
		return nil
	}
	if IsHeadlessService(s) && IsHeadlessService(old) {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("spec", "clusterIPs")
	newIPs, oldIPs := s.Spec.ClusterIPs, old.Spec.ClusterIPs
	switch {
	case len(oldIPs) == len(newIPs):
		for i := range oldIPs {
			if oldIPs[i] != newIPs[i] {
				errs = append(errs, field.Invalid(p.Index(i), newIPs, "may not change once set"))
			}
		}
	case len(oldIPs) > len(newIPs):
		if len(newIPs) == 0 {
			errs = append(errs, field.Invalid(p.Index(0), newIPs, "primary clusterIP can not be unset"))
		} else if newIPs[0] != oldIPs[0] {
			errs = append(errs, field.Invalid(p.Index(0), newIPs, "may not change once set"))
		}
		if len(newIPs) == 1 && (s.Spec.IPFamilyPolicy == nil || *s.Spec.IPFamilyPolicy != IPFamilyPolicySingleStack) {
			errs = append(errs, field.Invalid(p.Index(0), newIPs, "`ipFamilyPolicy` must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(oldIPs) > 0 && newIPs[0] != oldIPs[0] {
			errs = append(errs, field.Invalid(p.Index(0), newIPs, "may not change once set"))
		}
	}
	return errs
}

func validateIPFamiliesUpdate(s, old *Service) field.ErrorList {
	if s.Spec.Type == ServiceTypeExternalName || old.Spec.Type == ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("spec", "ipFamilies")
	if len(old.Spec.IPFamilies) > 0 && len(s.Spec.IPFamilies) > 0 && old.Spec.IPFamilies[0] != s.Spec.IPFamilies[0] {
		errs = append(errs, field.Invalid(p.Index(0), s.Spec.IPFamilies, "may not change once set"))
	}
	if len(old.Spec.IPFamilies) == 2 && len(s.Spec.IPFamilies) == 2 && old.Spec.IPFamilies[1] != s.Spec.IPFamilies[1] {
		errs = append(errs, field.Invalid(p.Index(1), s.Spec.IPFamilies, "may not change once set"))
	}
	if len(old.Spec.IPFamilies) == 2 && len(s.Spec.IPFamilies) == 1 &&
		(s.Spec.IPFamilyPolicy == nil || *s.Spec.IPFamilyPolicy != IPFamilyPolicySingleStack) {
		errs = append(errs, field.Invalid(p, s.Spec.IPFamilies, "`ipFamilyPolicy` must be set to 'SingleStack' when releasing the secondary ipFamily"))
	}
	return errs
}

// ValidateServiceStatusUpdate checks a write to services/status: the
// load balancer ingress points.
func ValidateServiceStatusUpdate(s, old *Service) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	ing := field.NewPath("status", "loadBalancer", "ingress")
	if s.Spec.Type != ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) != 0 {
		return append(errs, field.Forbidden(ing, "may only be used when `spec.type` is 'LoadBalancer'"))
	}
	for i, in := range s.Status.LoadBalancer.Ingress {
		p := ing.Index(i)
		if in.IP != "" {
			errs = append(errs, ValidateIP(p.Child("ip"), in.IP)...)
		}
		switch {
		case in.IPMode == nil && in.IP != "":
			errs = append(errs, field.Required(p.Child("ipMode"), "must be specified when `ip` is set"))
		case in.IPMode != nil && in.IP == "":
			errs = append(errs, field.Forbidden(p.Child("ipMode"), "may not be specified when `ip` is not set"))
		case in.IPMode != nil && !slices.Contains(supportedLoadBalancerIPModes, *in.IPMode):
			errs = append(errs, field.NotSupported(p.Child("ipMode"), *in.IPMode, supportedLoadBalancerIPModes))
		}
		errs = append(errs, validateLoadBalancerPoint(in.Hostname, in.Ports, p)...)
	}
	return errs
}

// validateLoadBalancerPoint checks the hostname and ports of one load
// balancer ingress point, of a Service's or an Ingress's status (p is the
// point's path): a DNS name, never an IP address; valid ports and
// protocols.
func validateLoadBalancerPoint(hostname string, ports []PortStatus, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if hostname != "" {
		errs = append(errs, ValidateDNS1123SubdomainField(hostname, p.Child("hostname"))...)
		if _, err := netip.ParseAddr(hostname); err == nil {
			errs = append(errs, field.Invalid(p.Child("hostname"), hostname, "must be a DNS name, not an IP address"))
		}
	}
	for j, ps := range ports {
		pp := p.Child("ports").Index(j)
		errs = append(errs, invalidEach(pp.Child("port"), ps.Port, ValidatePortNum(int(ps.Port)))...)
		errs = append(errs, ValidateProtocol(ps.Protocol, pp.Child("protocol"))...)
	}
	return errs
}

// PrepareServiceForUpdate adjusts an updated Service against the stored
// one before defaulting and validation, as Kubernetes' service registry
// does: values the server allocated (clusterIP(s), IP families, NodePorts
// matched by port name, healthCheckNodePort) are kept when the update
// leaves them out; values that no longer apply after a type change, and
// that the user did not touch, are dropped (clusterIPs and families when
// moving to ExternalName, NodePorts when leaving NodePort/LoadBalancer,
// the load balancer's fields and status when leaving LoadBalancer).
func PrepareServiceForUpdate(s, old *Service) {
	// Patch allocated values.
	if NeedsClusterIP(old) && NeedsClusterIP(s) {
		if s.Spec.ClusterIP == "" {
			s.Spec.ClusterIP = old.Spec.ClusterIP
		}
		if len(s.Spec.ClusterIPs) == 0 && len(old.Spec.ClusterIPs) > 0 {
			s.Spec.ClusterIPs = slices.Clone(old.Spec.ClusterIPs)
		}
		if len(s.Spec.IPFamilies) == 0 && len(old.Spec.IPFamilies) > 0 {
			s.Spec.IPFamilies = slices.Clone(old.Spec.IPFamilies)
		}
		if s.Spec.IPFamilyPolicy == nil && old.Spec.IPFamilyPolicy != nil {
			s.Spec.IPFamilyPolicy = ptrTo(*old.Spec.IPFamilyPolicy)
		}
	}
	if NeedsNodePorts(old) && NeedsNodePorts(s) {
		usedOld := map[int32]bool{}
		for _, p := range old.Spec.Ports {
			if p.NodePort != 0 {
				usedOld[p.NodePort] = true
			}
		}
		used := map[int32]bool{}
		for _, p := range s.Spec.Ports {
			if usedOld[p.NodePort] {
				used[p.NodePort] = true
			}
		}
		byName := map[string]int32{}
		for _, p := range old.Spec.Ports {
			byName[p.Name] = p.NodePort
		}
		for i := range s.Spec.Ports {
			p := &s.Spec.Ports[i]
			if p.NodePort == 0 {
				if v := byName[p.Name]; !used[v] {
					p.NodePort = v
				}
			}
		}
	}
	if NeedsHealthCheck(old) && NeedsHealthCheck(s) && s.Spec.HealthCheckNodePort == 0 {
		s.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
	}

	// Drop fields that no longer apply, if the user left them as they were.
	if NeedsClusterIP(old) && !NeedsClusterIP(s) {
		if s.Spec.ClusterIP == old.Spec.ClusterIP && slices.Equal(s.Spec.ClusterIPs, old.Spec.ClusterIPs) {
			s.Spec.ClusterIP = ""
			s.Spec.ClusterIPs = nil
		}
		if slices.Equal(s.Spec.IPFamilies, old.Spec.IPFamilies) {
			s.Spec.IPFamilies = nil
		}
		if semanticEqual(s.Spec.IPFamilyPolicy, old.Spec.IPFamilyPolicy) {
			s.Spec.IPFamilyPolicy = nil
		}
	}
	if NeedsNodePorts(old) && !NeedsNodePorts(s) && sameNodePorts(s, old) {
		for i := range s.Spec.Ports {
			s.Spec.Ports[i].NodePort = 0
		}
	}
	if NeedsHealthCheck(old) && !NeedsHealthCheck(s) && s.Spec.HealthCheckNodePort == old.Spec.HealthCheckNodePort {
		s.Spec.HealthCheckNodePort = 0
	}
	if s.Spec.Type != ServiceTypeLoadBalancer {
		s.Spec.AllocateLoadBalancerNodePorts = nil
		if old.Spec.Type == ServiceTypeLoadBalancer && semanticEqual(s.Spec.LoadBalancerClass, old.Spec.LoadBalancerClass) {
			s.Spec.LoadBalancerClass = nil
		}
	}
	if ExternallyAccessible(old) && !ExternallyAccessible(s) && s.Spec.ExternalTrafficPolicy == old.Spec.ExternalTrafficPolicy {
		s.Spec.ExternalTrafficPolicy = ""
	}
	if old.Spec.Type == ServiceTypeLoadBalancer && s.Spec.Type != ServiceTypeLoadBalancer {
		s.Status.LoadBalancer = LoadBalancerStatus{}
	}
}

// sameNodePorts reports whether every NodePort of s was already in old,
// i.e. the user did not ask for NodePorts.
func sameNodePorts(s, old *Service) bool {
	had := map[int32]bool{}
	for _, p := range old.Spec.Ports {
		had[p.NodePort] = true
	}
	for _, p := range s.Spec.Ports {
		if p.NodePort != 0 && !had[p.NodePort] {
			return false
		}
	}
	return true
}
