package api

import (
	"fmt"
	"slices"

	"github.com/skiff-dev/skiff/api/field"
)

// ---- Namespace ----

// ValidateNamespace checks a new Namespace: a DNS-1123 label name, no
// namespace of its own, valid finalizers.
func ValidateNamespace(ns *Namespace) field.ErrorList {
	errs := ValidateObjectMeta(&ns.ObjectMeta, false, ValidateNamespaceName, field.NewPath("metadata"))
	errs = append(errs, validateNamespaceSpec(ns)...)
	return errs
}

func validateNamespaceSpec(ns *Namespace) field.ErrorList {
	var errs field.ErrorList
	for _, f := range ns.Spec.Finalizers {
		errs = append(errs, validateFinalizerName(f, field.NewPath("spec", "finalizers"))...)
	}
	if ns.Status.Phase != "" && ns.Status.Phase != NamespaceActive && ns.Status.Phase != NamespaceTerminating {
		errs = append(errs, field.NotSupported(field.NewPath("status", "phase"), ns.Status.Phase, []string{NamespaceActive, NamespaceTerminating}))
	}
	return errs
}

// ValidateNamespaceUpdate checks an update of a Namespace.
func ValidateNamespaceUpdate(ns, old *Namespace) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&ns.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateNamespaceSpec(ns)...)
	return errs
}

// ---- Node ----

// ValidateNode checks a new Node.
func ValidateNode(n *Node) field.ErrorList {
	errs := ValidateObjectMeta(&n.ObjectMeta, false, NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateNodeFields(n)...)
	return errs
}

func validateNodeFields(n *Node) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if n.Spec.PodCIDR != "" {
		errs = append(errs, ValidateCIDR(spec.Child("podCIDR"), n.Spec.PodCIDR)...)
	}
	badCIDR := false
	for i, c := range n.Spec.PodCIDRs {
		if e := ValidateCIDR(spec.Child("podCIDRs").Index(i), c); len(e) > 0 {
			badCIDR = true
			errs = append(errs, e...)
		}
	}
	if len(n.Spec.PodCIDRs) > 1 && !badCIDR && !isDualStack(n.Spec.PodCIDRs) {
		errs = append(errs, field.Invalid(spec.Child("podCIDRs"), n.Spec.PodCIDRs, "may specify no more than one CIDR for each IP family"))
	}
	if n.Spec.PodCIDR != "" && len(n.Spec.PodCIDRs) > 0 && n.Spec.PodCIDRs[0] != n.Spec.PodCIDR {
		errs = append(errs, field.Invalid(spec.Child("podCIDRs"), n.Spec.PodCIDRs, "first value must match `podCIDR`"))
	}
	seen := map[string]bool{}
	for i, t := range n.Spec.Taints {
		p := spec.Child("taints").Index(i)
		errs = append(errs, ValidateLabelName(t.Key, p.Child("key"))...)
		if t.Value != "" {
			errs = append(errs, invalidEach(p.Child("value"), t.Value, ValidateLabelValue(t.Value))...)
		}
		errs = append(errs, validateEnum(t.Effect, supportedTaintEffects, p.Child("effect"))...)
		k := t.Key + "\x00" + t.Effect
		if seen[k] {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("taints must be unique by key and effect pair: %s:%s", t.Key, t.Effect)))
		}
		seen[k] = true
	}
	st := field.NewPath("status")
	for _, r := range []struct {
		name string
		list ResourceList
	}{{"capacity", n.Status.Capacity}, {"allocatable", n.Status.Allocatable}} {
		for _, k := range sortedKeys(r.list) {
			errs = append(errs, invalidEach(st.Child(r.name).Key(k), k, ValidateQualifiedName(k))...)
			errs = append(errs, validateQuantity(r.list[k], st.Child(r.name).Key(k))...)
		}
	}
	for i, a := range n.Status.Addresses {
		p := st.Child("addresses").Index(i)
		if a.Type == "" {
			errs = append(errs, field.Required(p.Child("type"), ""))
		}
		if a.Address == "" {
			errs = append(errs, field.Required(p.Child("address"), ""))
		} else if a.Type == NodeInternalIP || a.Type == NodeExternalIP {
			errs = append(errs, ValidateIP(p.Child("address"), a.Address)...)
		}
	}
	return errs
}

// ValidateNodeUpdate checks an update of a Node: podCIDRs may be set once
// and not changed afterwards.
func ValidateNodeUpdate(n, old *Node) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&n.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateNodeFields(n)...)
	if len(old.Spec.PodCIDRs) > 0 && !slices.Equal(old.Spec.PodCIDRs, n.Spec.PodCIDRs) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDRs"), "node updates may not change podCIDR except from \"\" to valid"))
	}
	if old.Spec.ProviderID != "" && n.Spec.ProviderID != old.Spec.ProviderID {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "providerID"), "node updates may not change providerID except from \"\" to valid"))
	}
	return errs
}

// ---- Event ----

// Length limits of Event fields.
const (
	eventReportingInstanceLengthLimit = 128
	eventActionLengthLimit            = 128
	eventReasonLengthLimit            = 128
	eventNoteLengthLimit              = 1024
)

// ValidateEvent checks a core/v1 Event, as Kubernetes' legacy event
// validation: the involved object's namespace must match the event's, and
// events with an eventTime (the newer style) need reportingComponent,
// reportingInstance, action and reason.
func ValidateEvent(e *Event) field.ErrorList {
	errs := ValidateObjectMeta(&e.ObjectMeta, true, NameIsPathSegment, field.NewPath("metadata"))
	involvedNS := field.NewPath("involvedObject", "namespace")
	if e.EventTime.IsZero() {
		if e.InvolvedObject.Namespace == "" {
			if e.Namespace != "" && e.Namespace != "default" {
				errs = append(errs, field.Invalid(involvedNS, e.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if e.Namespace != e.InvolvedObject.Namespace {
			errs = append(errs, field.Invalid(involvedNS, e.InvolvedObject.Namespace, "does not match event.namespace"))
		}
	} else {
		if e.InvolvedObject.Namespace == "" && e.Namespace != "default" && e.Namespace != "kube-system" {
			errs = append(errs, field.Invalid(involvedNS, e.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		if e.ReportingController == "" {
			errs = append(errs, field.Required(field.NewPath("reportingComponent"), ""))
		} else {
			errs = append(errs, ValidateQualifiedNameField(e.ReportingController, field.NewPath("reportingComponent"))...)
		}
		if e.ReportingInstance == "" {
			errs = append(errs, field.Required(field.NewPath("reportingInstance"), ""))
		}
		if len(e.ReportingInstance) > eventReportingInstanceLengthLimit {
			errs = append(errs, field.Invalid(field.NewPath("reportingInstance"), "", fmt.Sprintf("can have at most %v characters", eventReportingInstanceLengthLimit)))
		}
		if e.Action == "" {
			errs = append(errs, field.Required(field.NewPath("action"), ""))
		}
		if len(e.Action) > eventActionLengthLimit {
			errs = append(errs, field.Invalid(field.NewPath("action"), "", fmt.Sprintf("can have at most %v characters", eventActionLengthLimit)))
		}
		if e.Reason == "" {
			errs = append(errs, field.Required(field.NewPath("reason"), ""))
		}
		if len(e.Reason) > eventReasonLengthLimit {
			errs = append(errs, field.Invalid(field.NewPath("reason"), "", fmt.Sprintf("can have at most %v characters", eventReasonLengthLimit)))
		}
		if len(e.Message) > eventNoteLengthLimit {
			errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", eventNoteLengthLimit)))
		}
	}
	if e.Type != "" && e.Type != EventTypeNormal && e.Type != EventTypeWarning {
		errs = append(errs, field.NotSupported(field.NewPath("type"), e.Type, []string{EventTypeNormal, EventTypeWarning}))
	}
	errs = append(errs, ValidateNonnegativeField(int64(e.Count), field.NewPath("count"))...)
	return errs
}

// ValidateEventUpdate checks an update of a core/v1 Event (count and
// timestamps may change, as event recorders patch them).
func ValidateEventUpdate(e, old *Event) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&e.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, ValidateEvent(e)...)
	return dedupe(errs)
}

// dedupe drops repeated errors (the metadata checks of update and create
// overlap on labels, annotations, owner references and finalizers).
func dedupe(errs field.ErrorList) field.ErrorList {
	seen := map[string]bool{}
	out := errs[:0]
	for _, e := range errs {
		k := string(e.Type) + "\x00" + e.Error()
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// ---- EndpointSlice ----

// Limits of an EndpointSlice, as Kubernetes' discovery validation has them.
const (
	MaxEndpointsPerSlice = 1000
	maxAddressesPerEndp  = 100
	maxPortsPerSlice     = 20000
	maxZoneHints         = 8
	maxNodeHints         = 8
)

var supportedAddressTypes = []string{AddressTypeFQDN, AddressTypeIPv4, AddressTypeIPv6}

// ValidateEndpointSlice checks a new EndpointSlice: addressType, at most
// 1000 endpoints each with 1..100 addresses valid for the address type,
// node names, hostnames, and unique, valid ports.
func ValidateEndpointSlice(s *EndpointSlice) field.ErrorList {
	errs := ValidateObjectMeta(&s.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	if s.AddressType == "" {
		errs = append(errs, field.Required(field.NewPath("addressType"), ""))
	} else if !slices.Contains(supportedAddressTypes, s.AddressType) {
		errs = append(errs, field.NotSupported(field.NewPath("addressType"), s.AddressType, supportedAddressTypes))
	}
	errs = append(errs, validateEndpoints(s.Endpoints, s.AddressType, field.NewPath("endpoints"))...)
	errs = append(errs, validateEndpointPorts(s.Ports, field.NewPath("ports"))...)
	return errs
}

func validateEndpoints(eps []Endpoint, addrType string, path *field.Path) field.ErrorList {
	if len(eps) > MaxEndpointsPerSlice {
		return field.ErrorList{field.TooMany(path, len(eps), MaxEndpointsPerSlice)}
	}
	var errs field.ErrorList
	for i, ep := range eps {
		p := path.Index(i)
		ap := p.Child("addresses")
		if len(ep.Addresses) == 0 {
			errs = append(errs, field.Required(ap, "must contain at least 1 address"))
		} else if len(ep.Addresses) > maxAddressesPerEndp {
			errs = append(errs, field.TooMany(ap, len(ep.Addresses), maxAddressesPerEndp))
		}
		for j, a := range ep.Addresses {
			switch addrType {
			case AddressTypeIPv4:
				if e := ValidateIPv4(ap.Index(j), a); len(e) > 0 {
					errs = append(errs, e...)
				} else {
					errs = append(errs, ValidateNonSpecialIP(a, ap.Index(j))...)
				}
			case AddressTypeIPv6:
				if e := ValidateIPv6(ap.Index(j), a); len(e) > 0 {
					errs = append(errs, e...)
				} else {
					errs = append(errs, ValidateNonSpecialIP(a, ap.Index(j))...)
				}
			case AddressTypeFQDN:
				errs = append(errs, ValidateFQDN(ap.Index(j), a)...)
			}
		}
		if ep.NodeName != nil {
			errs = append(errs, invalidEach(p.Child("nodeName"), *ep.NodeName, NameIsDNSSubdomain(*ep.NodeName, false))...)
		}
		if ep.Hostname != nil {
			errs = append(errs, ValidateDNS1123LabelField(*ep.Hostname, p.Child("hostname"))...)
		}
		if ep.Zone != nil && *ep.Zone != "" {
			errs = append(errs, invalidEach(p.Child("zone"), *ep.Zone, ValidateLabelValue(*ep.Zone))...)
		}
		if ep.TargetRef != nil && ep.TargetRef.Name == "" {
			errs = append(errs, field.Required(p.Child("targetRef", "name"), ""))
		}
		if ep.Hints != nil {
			errs = append(errs, validateEndpointHints(ep.Hints, p.Child("hints"))...)
		}
	}
	return errs
}

// validateEndpointHints checks an endpoint's topology hints: at most 8
// zones and 8 nodes, each named once and validly.
func validateEndpointHints(h *EndpointHints, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	zp := path.Child("forZones")
	if len(h.ForZones) > maxZoneHints {
		errs = append(errs, field.TooMany(zp, len(h.ForZones), maxZoneHints))
	} else {
		seen := map[string]bool{}
		for i, z := range h.ForZones {
			p := zp.Index(i).Child("name")
			if seen[z.Name] {
				errs = append(errs, field.Duplicate(p, z.Name))
			}
			seen[z.Name] = true
			errs = append(errs, invalidEach(p, z.Name, ValidateLabelValue(z.Name))...)
		}
	}
	np := path.Child("forNodes")
	if len(h.ForNodes) > maxNodeHints {
		errs = append(errs, field.TooMany(np, len(h.ForNodes), maxNodeHints))
	} else {
		seen := map[string]bool{}
		for i, n := range h.ForNodes {
			p := np.Index(i).Child("name")
			if seen[n.Name] {
				errs = append(errs, field.Duplicate(p, n.Name))
			}
			seen[n.Name] = true
			errs = append(errs, invalidEach(p, n.Name, NameIsDNSSubdomain(n.Name, false))...)
		}
	}
	return errs
}

func validateEndpointPorts(ports []EndpointPort, path *field.Path) field.ErrorList {
	if len(ports) > maxPortsPerSlice {
		return field.ErrorList{field.TooMany(path, len(ports), maxPortsPerSlice)}
	}
	var errs field.ErrorList
	names := map[string]bool{}
	for i, port := range ports {
		p := path.Index(i)
		name := ""
		if port.Name != nil {
			name = *port.Name
		}
		if name != "" {
			errs = append(errs, ValidateDNS1123LabelField(name, p.Child("name"))...)
		}
		if names[name] {
			errs = append(errs, field.Duplicate(p.Child("name"), name))
		}
		names[name] = true
		if port.Protocol == nil {
			errs = append(errs, field.Required(p.Child("protocol"), ""))
		} else {
			errs = append(errs, ValidateProtocol(*port.Protocol, p.Child("protocol"))...)
		}
		if port.Port != nil {
			errs = append(errs, invalidEach(p.Child("port"), *port.Port, ValidatePortNum(int(*port.Port)))...)
		}
		if port.AppProtocol != nil {
			errs = append(errs, ValidateQualifiedNameField(*port.AppProtocol, p.Child("appProtocol"))...)
		}
	}
	return errs
}

// ValidateEndpointSliceUpdate checks an update: addressType is immutable.
func ValidateEndpointSliceUpdate(s, old *EndpointSlice) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, ValidateImmutableField(s.AddressType, old.AddressType, field.NewPath("addressType"))...)
	errs = append(errs, ValidateEndpointSlice(s)...)
	return dedupe(errs)
}

// ---- ServiceCIDR ----

// ValidateServiceCIDR checks a new ServiceCIDR: one or two CIDRs, one per
// IP family.
func ValidateServiceCIDR(c *ServiceCIDR) field.ErrorList {
	errs := ValidateObjectMeta(&c.ObjectMeta, false, NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateServiceCIDRSpec(&c.Spec)...)
}

func validateServiceCIDRSpec(s *ServiceCIDRSpec) field.ErrorList {
	p := field.NewPath("spec", "cidrs")
	if len(s.CIDRs) == 0 {
		return field.ErrorList{field.Required(p, "at least one CIDR required")}
	}
	if len(s.CIDRs) > 2 {
		return field.ErrorList{field.Invalid(p, s, "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, c := range s.CIDRs {
		errs = append(errs, ValidateCIDR(p.Index(i), c)...)
	}
	if len(errs) == 0 && len(s.CIDRs) == 2 && !isDualStack(s.CIDRs) {
		errs = append(errs, field.Invalid(p, s, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
	}
	return errs
}

// ValidateServiceCIDRUpdate checks an update: existing CIDRs may not
// change; a single-stack ServiceCIDR may gain a CIDR of the other family.
func ValidateServiceCIDRUpdate(c, old *ServiceCIDR) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("spec", "cidrs")
	switch {
	case len(old.Spec.CIDRs) == 1 && len(c.Spec.CIDRs) == 2:
		if c.Spec.CIDRs[0] != old.Spec.CIDRs[0] {
			errs = append(errs, field.Invalid(p.Index(0), c.Spec.CIDRs[0], "field is immutable"))
		}
	default:
		errs = append(errs, ValidateImmutableField(c.Spec.CIDRs, old.Spec.CIDRs, p)...)
	}
	return append(errs, validateServiceCIDRSpec(&c.Spec)...)
}

// ValidateServiceCIDRStatusUpdate checks a write to servicecidrs/status.
func ValidateServiceCIDRStatusUpdate(c, old *ServiceCIDR) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, ValidateConditions(c.Status.Conditions, field.NewPath("status", "conditions"))...)
}

// ValidateConditions checks metav1.Condition entries: a qualified type,
// unique, a True/False/Unknown status, a reason.
func ValidateConditions(cs []Condition, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, c := range cs {
		p := path.Index(i)
		if c.Type == "" {
			errs = append(errs, field.Required(p.Child("type"), "must be set"))
		} else {
			errs = append(errs, ValidateQualifiedNameField(c.Type, p.Child("type"))...)
			if seen[c.Type] {
				errs = append(errs, field.Duplicate(p.Child("type"), c.Type))
			}
			seen[c.Type] = true
		}
		errs = append(errs, validateEnum(string(c.Status), []string{string(ConditionTrue), string(ConditionFalse), string(ConditionUnknown)}, p.Child("status"))...)
		errs = append(errs, ValidateNonnegativeField(c.ObservedGeneration, p.Child("observedGeneration"))...)
		if c.Reason == "" {
			errs = append(errs, field.Required(p.Child("reason"), "must be set"))
		}
		if c.LastTransitionTime.IsZero() {
			errs = append(errs, field.Required(p.Child("lastTransitionTime"), "must be set"))
		}
	}
	return errs
}

// ---- IPAddress ----

// ValidateIPAddress checks a new IPAddress: its name is a canonical IP and
// spec.parentRef names its owner.
func ValidateIPAddress(a *IPAddress) field.ErrorList {
	errs := ValidateObjectMeta(&a.ObjectMeta, false, ValidateIPAddressName, field.NewPath("metadata"))
	ref := a.Spec.ParentRef
	p := field.NewPath("spec", "parentRef")
	if ref == nil {
		return append(errs, field.Required(p, ""))
	}
	if ref.Group != "" {
		errs = append(errs, ValidateDNS1123SubdomainField(ref.Group, p.Child("group"))...)
	}
	if ref.Resource == "" {
		errs = append(errs, field.Required(p.Child("resource"), ""))
	} else {
		errs = append(errs, invalidEach(p.Child("resource"), ref.Resource, ValidatePathSegmentName(ref.Resource))...)
	}
	if ref.Namespace != "" {
		errs = append(errs, invalidEach(p.Child("namespace"), ref.Namespace, ValidateNamespaceName(ref.Namespace, false))...)
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, invalidEach(p.Child("name"), ref.Name, ValidatePathSegmentName(ref.Name))...)
	}
	return errs
}

// ValidateIPAddressUpdate checks an update: spec.parentRef is immutable.
func ValidateIPAddressUpdate(a, old *IPAddress) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&a.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, ValidateImmutableField(a.Spec.ParentRef, old.Spec.ParentRef, field.NewPath("spec", "parentRef"))...)
	return errs
}

// ---- Lease ----

// ValidateLease checks a Lease: leaseDurationSeconds > 0 and
// leaseTransitions >= 0 when set.
func ValidateLease(l *Lease) field.ErrorList {
	errs := ValidateObjectMeta(&l.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateLeaseSpec(&l.Spec)...)
}

func validateLeaseSpec(s *LeaseSpec) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	if s.LeaseDurationSeconds != nil && *s.LeaseDurationSeconds <= 0 {
		errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), *s.LeaseDurationSeconds, "must be greater than 0"))
	}
	if s.LeaseTransitions != nil && *s.LeaseTransitions < 0 {
		errs = append(errs, field.Invalid(p.Child("leaseTransitions"), *s.LeaseTransitions, "must be greater than or equal to 0"))
	}
	if s.Strategy != nil && *s.Strategy != "OldestEmulationVersion" {
		errs = append(errs, field.NotSupported(p.Child("strategy"), *s.Strategy, []string{"OldestEmulationVersion"}))
	}
	return errs
}

// ValidateLeaseUpdate checks an update of a Lease.
func ValidateLeaseUpdate(l, old *Lease) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&l.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateLeaseSpec(&l.Spec)...)
}

// ---- Binding and DeleteOptions ----

// ValidateBinding checks a pod binding: the target is a Node by name.
func ValidateBinding(b *Binding) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("target")
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(p.Child("kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, invalidEach(p.Child("name"), b.Target.Name, NameIsDNSSubdomain(b.Target.Name, false))...)
	}
	return errs
}

// ValidateDeleteOptions checks DELETE options: a known propagationPolicy,
// not combined with orphanDependents; a non-negative grace period; dryRun
// only "All".
func ValidateDeleteOptions(o *DeleteOptions) field.ErrorList {
	var errs field.ErrorList
	valid := []string{string(DeletePropagationForeground), string(DeletePropagationBackground), string(DeletePropagationOrphan), "nil"}
	if o.OrphanDependents != nil && o.PropagationPolicy != nil {
		errs = append(errs, field.Invalid(field.NewPath("propagationPolicy"), *o.PropagationPolicy, "orphanDependents and deletionPropagation cannot be both set"))
	}
	if o.PropagationPolicy != nil && !slices.Contains(valid[:3], string(*o.PropagationPolicy)) {
		errs = append(errs, field.NotSupported(field.NewPath("propagationPolicy"), string(*o.PropagationPolicy), valid))
	}
	if o.GracePeriodSeconds != nil {
		errs = append(errs, ValidateNonnegativeField(*o.GracePeriodSeconds, field.NewPath("gracePeriodSeconds"))...)
	}
	for i, d := range o.DryRun {
		if d != "All" {
			errs = append(errs, field.NotSupported(field.NewPath("dryRun").Index(i), d, []string{"All"}))
		}
	}
	return errs
}
