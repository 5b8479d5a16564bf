package api

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api/field"
)

// Validation of networking.k8s.io/v1 Ingress, IngressClass and
// NetworkPolicy, after upstream's pkg/apis/networking/validation.

var (
	supportedPathTypes          = []string{PathTypeExact, PathTypeImplementationSpecific, PathTypePrefix}
	supportedPolicyType         = []string{PolicyTypeIngress, PolicyTypeEgress}
	supportedIngressClassScopes = []string{IngressClassParametersScopeCluster, IngressClassParametersScopeNamespace}
	// invalidPathSequences and invalidPathSuffixes are refused in Exact
	// and Prefix paths.
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
)

// DefaultIngress sets nothing: networking/v1 Ingress has no defaults.
func DefaultIngress(*Ingress) {}

// ValidateIngress checks a new Ingress.
func ValidateIngress(ing *Ingress) field.ErrorList {
	errs := ValidateObjectMeta(&ing.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateIngressSpec(&ing.Spec, field.NewPath("spec"))...)
}

// ValidateIngressUpdate checks an update of an Ingress.
func ValidateIngressUpdate(ing, old *Ingress) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&ing.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateIngressSpec(&ing.Spec, field.NewPath("spec"))...)
}

// ValidateIngressStatusUpdate checks a write to ingresses/status.
func ValidateIngressStatusUpdate(ing, old *Ingress) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&ing.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	for i, in := range ing.Status.LoadBalancer.Ingress {
		p := field.NewPath("status", "loadBalancer", "ingress").Index(i)
		if in.IP != "" {
			errs = append(errs, ValidateIP(p.Child("ip"), in.IP)...)
		}
		errs = append(errs, validateLoadBalancerPoint(in.Hostname, in.Ports, p)...)
	}
	return errs
}

func validateIngressSpec(s *IngressSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.Rules) == 0 && s.DefaultBackend == nil {
		errs = append(errs, field.Invalid(p, s, "either `defaultBackend` or `rules` must be specified"))
	}
	if s.DefaultBackend != nil {
		errs = append(errs, validateIngressBackend(s.DefaultBackend, p.Child("defaultBackend"))...)
	}
	for i, r := range s.Rules {
		rp := p.Child("rules").Index(i)
		if r.Host != "" {
			errs = append(errs, validateIngressHost(r.Host, rp.Child("host"))...)
		}
		if r.HTTP != nil {
			errs = append(errs, validateHTTPIngressRule(r.HTTP, rp.Child("http"))...)
		}
	}
	for i, t := range s.TLS {
		tp := p.Child("tls").Index(i)
		for j, h := range t.Hosts {
			errs = append(errs, validateIngressHost(h, tp.Child("hosts").Index(j))...)
		}
		if t.SecretName != "" {
			errs = append(errs, invalidEach(tp.Child("secretName"), t.SecretName, ValidateDNS1123Subdomain(t.SecretName))...)
		}
	}
	if s.IngressClassName != nil {
		errs = append(errs, invalidEach(p.Child("ingressClassName"), *s.IngressClassName, ValidateDNS1123Subdomain(*s.IngressClassName))...)
	}
	return errs
}

// validateIngressHost: a DNS name (a wildcard only as the whole first
// label), never an IP address.
func validateIngressHost(host string, p *field.Path) field.ErrorList {
	if _, err := netip.ParseAddr(host); err == nil {
		return field.ErrorList{field.Invalid(p, host, "must be a DNS name, not an IP address")}
	}
	if strings.Contains(host, "*") {
		rest, ok := strings.CutPrefix(host, "*.")
		if !ok || strings.Contains(rest, "*") {
			return field.ErrorList{field.Invalid(p, host, "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com')")}
		}
		return invalidEach(p, host, ValidateDNS1123Subdomain(rest))
	}
	return invalidEach(p, host, ValidateDNS1123Subdomain(host))
}

func validateHTTPIngressRule(h *HTTPIngressRuleValue, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(h.Paths) == 0 {
		errs = append(errs, field.Required(p.Child("paths"), ""))
	}
	for i, hp := range h.Paths {
		pp := p.Child("paths").Index(i)
		errs = append(errs, validateIngressPath(hp, pp)...)
		errs = append(errs, validateIngressBackend(&hp.Backend, pp.Child("backend"))...)
	}
	return errs
}

func validateIngressPath(hp HTTPIngressPath, p *field.Path) field.ErrorList {
	if hp.PathType == nil {
		return field.ErrorList{field.Required(p.Child("pathType"), "pathType must be specified")}
	}
	switch *hp.PathType {
	case PathTypeExact, PathTypePrefix:
		if !strings.HasPrefix(hp.Path, "/") {
			return field.ErrorList{field.Invalid(p.Child("path"), hp.Path, "must be an absolute path")}
		}
		for _, seq := range invalidPathSequences {
			if strings.Contains(hp.Path, seq) {
				return field.ErrorList{field.Invalid(p.Child("path"), hp.Path, fmt.Sprintf("must not contain '%s'", seq))}
			}
		}
		for _, suf := range invalidPathSuffixes {
			if strings.HasSuffix(hp.Path, suf) {
				return field.ErrorList{field.Invalid(p.Child("path"), hp.Path, fmt.Sprintf("cannot end with '%s'", suf))}
			}
		}
	case PathTypeImplementationSpecific:
		if hp.Path != "" && !strings.HasPrefix(hp.Path, "/") {
			return field.ErrorList{field.Invalid(p.Child("path"), hp.Path, "must be an absolute path")}
		}
	default:
		return field.ErrorList{field.NotSupported(p.Child("pathType"), *hp.PathType, supportedPathTypes)}
	}
	return nil
}

func validateIngressBackend(b *IngressBackend, p *field.Path) field.ErrorList {
	switch {
	case b.Service != nil && b.Resource != nil:
		return field.ErrorList{field.Invalid(p, "", "cannot set both resource and service backends")}
	case b.Service == nil && b.Resource == nil:
		return field.ErrorList{field.Invalid(p, "", "resource or service backend is required")}
	case b.Resource != nil:
		var errs field.ErrorList
		if b.Resource.Kind == "" {
			errs = append(errs, field.Required(p.Child("resource", "kind"), ""))
		}
		if b.Resource.Name == "" {
			errs = append(errs, field.Required(p.Child("resource", "name"), ""))
		}
		return errs
	}
	sp := p.Child("service")
	errs := invalidEach(sp.Child("name"), b.Service.Name, NameIsDNS1035Label(b.Service.Name, false))
	port := b.Service.Port
	pp := sp.Child("port")
	switch {
	case port.Name != "" && port.Number != 0:
		errs = append(errs, field.Invalid(pp, port.Name, "cannot set both port name & port number"))
	case port.Name != "":
		errs = append(errs, invalidEach(pp.Child("name"), port.Name, ValidatePortName(port.Name))...)
	case port.Number != 0:
		errs = append(errs, invalidEach(pp.Child("number"), port.Number, ValidatePortNum(int(port.Number)))...)
	default:
		errs = append(errs, field.Required(pp, "port name or number is required"))
	}
	return errs
}

// DefaultIngressClass sets upstream's v1 default: parameters without a
// scope are Cluster-scoped.
func DefaultIngressClass(c *IngressClass) {
	if p := c.Spec.Parameters; p != nil && p.Scope == nil {
		scope := IngressClassParametersScopeCluster
		p.Scope = &scope
	}
}

// ValidateIngressClass checks a new IngressClass.
func ValidateIngressClass(c *IngressClass) field.ErrorList {
	errs := ValidateObjectMeta(&c.ObjectMeta, false, NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateIngressClassSpec(&c.Spec, field.NewPath("spec"))...)
}

// ValidateIngressClassUpdate checks an update: spec.controller is immutable.
func ValidateIngressClassUpdate(c, old *IngressClass) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateIngressClassSpec(&c.Spec, field.NewPath("spec"))...)
	return append(errs, ValidateImmutableField(c.Spec.Controller, old.Spec.Controller, field.NewPath("spec", "controller"))...)
}

func validateIngressClassSpec(s *IngressClassSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	cp := p.Child("controller")
	switch {
	case s.Controller == "":
		errs = append(errs, field.Required(cp, ""))
	case len(s.Controller) > 250:
		errs = append(errs, field.TooLong(cp, "", 250))
	default:
		errs = append(errs, invalidEach(cp, s.Controller, validateDomainPrefixedPath(s.Controller))...)
	}
	if r := s.Parameters; r != nil {
		pp := p.Child("parameters")
		if r.Kind == "" {
			errs = append(errs, field.Required(pp.Child("kind"), "kind is required"))
		} else {
			errs = append(errs, invalidEach(pp.Child("kind"), r.Kind, ValidatePathSegmentName(r.Kind))...)
		}
		if r.Name == "" {
			errs = append(errs, field.Required(pp.Child("name"), "name is required"))
		} else {
			errs = append(errs, invalidEach(pp.Child("name"), r.Name, ValidatePathSegmentName(r.Name))...)
		}
		if r.APIGroup != nil {
			errs = append(errs, invalidEach(pp.Child("apiGroup"), *r.APIGroup, ValidateDNS1123Subdomain(*r.APIGroup))...)
		}
		switch {
		case r.Scope == nil:
			errs = append(errs, field.Required(pp.Child("scope"), ""))
		case !slices.Contains(supportedIngressClassScopes, *r.Scope):
			errs = append(errs, field.NotSupported(pp.Child("scope"), *r.Scope, supportedIngressClassScopes))
		case *r.Scope == IngressClassParametersScopeNamespace && r.Namespace == nil:
			errs = append(errs, field.Required(pp.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
		case *r.Scope == IngressClassParametersScopeNamespace:
			errs = append(errs, invalidEach(pp.Child("namespace"), *r.Namespace, NameIsDNSLabel(*r.Namespace, false))...)
		case r.Namespace != nil:
			errs = append(errs, field.Forbidden(pp.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
		}
	}
	return errs
}

// DefaultNetworkPolicy sets upstream's defaults: protocol TCP on every
// port; policyTypes [Ingress], plus Egress when egress rules are given.
func DefaultNetworkPolicy(np *NetworkPolicy) {
	s := &np.Spec
	defaultPorts := func(ports []NetworkPolicyPort) {
		for i := range ports {
			if ports[i].Protocol == nil {
				tcp := ProtocolTCP
				ports[i].Protocol = &tcp
			}
		}
	}
	for i := range s.Ingress {
		defaultPorts(s.Ingress[i].Ports)
	}
	for i := range s.Egress {
		defaultPorts(s.Egress[i].Ports)
	}
	if len(s.PolicyTypes) == 0 {
		s.PolicyTypes = []string{PolicyTypeIngress}
		if len(s.Egress) > 0 {
			s.PolicyTypes = append(s.PolicyTypes, PolicyTypeEgress)
		}
	}
}

// ValidateNetworkPolicy checks a new NetworkPolicy.
func ValidateNetworkPolicy(np *NetworkPolicy) field.ErrorList {
	errs := ValidateObjectMeta(&np.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateNetworkPolicySpec(&np.Spec, field.NewPath("spec"))...)
}

// ValidateNetworkPolicyUpdate checks an update of a NetworkPolicy.
func ValidateNetworkPolicyUpdate(np, old *NetworkPolicy) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&np.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateNetworkPolicySpec(&np.Spec, field.NewPath("spec"))...)
}

func validateNetworkPolicySpec(s *NetworkPolicySpec, p *field.Path) field.ErrorList {
	errs := ValidateLabelSelector(&s.PodSelector, p.Child("podSelector"))
	for i, r := range s.Ingress {
		rp := p.Child("ingress").Index(i)
		errs = append(errs, validateNetworkPolicyPorts(r.Ports, rp.Child("ports"))...)
		errs = append(errs, validateNetworkPolicyPeers(r.From, rp.Child("from"))...)
	}
	for i, r := range s.Egress {
		rp := p.Child("egress").Index(i)
		errs = append(errs, validateNetworkPolicyPorts(r.Ports, rp.Child("ports"))...)
		errs = append(errs, validateNetworkPolicyPeers(r.To, rp.Child("to"))...)
	}
	for i, t := range s.PolicyTypes {
		if !slices.Contains(supportedPolicyType, t) {
			errs = append(errs, field.NotSupported(p.Child("policyTypes").Index(i), t, supportedPolicyType))
		}
	}
	if len(s.PolicyTypes) > len(supportedPolicyType) {
		errs = append(errs, field.Invalid(p.Child("policyTypes"), s.PolicyTypes, "may not specify more than two policyTypes"))
	}
	return errs
}

func validateNetworkPolicyPorts(ports []NetworkPolicyPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, port := range ports {
		pp := p.Index(i)
		if port.Protocol != nil {
			errs = append(errs, ValidateProtocol(*port.Protocol, pp.Child("protocol"))...)
		}
		if port.Port == nil {
			if port.EndPort != nil {
				errs = append(errs, field.Forbidden(pp.Child("endPort"), "may not be set when `port` is not set"))
			}
			continue
		}
		if port.Port.Type == Int {
			errs = append(errs, invalidEach(pp.Child("port"), port.Port.IntVal, ValidatePortNum(int(port.Port.IntVal)))...)
			if port.EndPort != nil {
				if *port.EndPort < port.Port.IntVal {
					errs = append(errs, field.Invalid(pp.Child("endPort"), *port.EndPort, "must be greater than or equal to `port`"))
				}
				errs = append(errs, invalidEach(pp.Child("endPort"), *port.EndPort, ValidatePortNum(int(*port.EndPort)))...)
			}
			continue
		}
		if port.EndPort != nil {
			errs = append(errs, field.Forbidden(pp.Child("endPort"), "may not be set when `port` is non-numeric"))
		}
		errs = append(errs, invalidEach(pp.Child("port"), port.Port.StrVal, ValidatePortName(port.Port.StrVal))...)
	}
	return errs
}

func validateNetworkPolicyPeers(peers []NetworkPolicyPeer, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, peer := range peers {
		pp := p.Index(i)
		n := 0
		if peer.PodSelector != nil {
			n++
			errs = append(errs, ValidateLabelSelector(peer.PodSelector, pp.Child("podSelector"))...)
		}
		if peer.NamespaceSelector != nil {
			n++
			errs = append(errs, ValidateLabelSelector(peer.NamespaceSelector, pp.Child("namespaceSelector"))...)
		}
		if peer.IPBlock != nil {
			n++
			errs = append(errs, validateIPBlock(peer.IPBlock, pp.Child("ipBlock"))...)
		}
		switch {
		case n == 0:
			errs = append(errs, field.Required(pp, "must specify a peer"))
		case n > 1 && peer.IPBlock != nil:
			errs = append(errs, field.Forbidden(pp, "may not specify more than 1 peer type"))
		}
	}
	return errs
}

func validateIPBlock(b *IPBlock, p *field.Path) field.ErrorList {
	if b.CIDR == "" {
		return field.ErrorList{field.Required(p.Child("cidr"), "")}
	}
	cidr, err := netip.ParsePrefix(b.CIDR)
	if err != nil {
		return ValidateCIDR(p.Child("cidr"), b.CIDR)
	}
	var errs field.ErrorList
	for i, e := range b.Except {
		ep := p.Child("except").Index(i)
		ex, err := netip.ParsePrefix(e)
		if err != nil {
			errs = append(errs, ValidateCIDR(ep, e)...)
			continue
		}
		if ex.Addr().Is4() != cidr.Addr().Is4() || ex.Bits() <= cidr.Bits() || !cidr.Contains(ex.Addr()) {
			errs = append(errs, field.Invalid(ep, e, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}
