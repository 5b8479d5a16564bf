package api

import (
	"github.com/skiff-dev/skiff/api/field"
)

// ---- Endpoints ----

// ValidateEndpoints checks an Endpoints as Kubernetes' ValidateEndpoints
// does: the name is a DNS subdomain (it is the Service's name); every
// subset has at least one address (ready or not); every address has a
// valid IP that is not unspecified, loopback, link-local or link-local
// multicast, a DNS-1123 label hostname and a DNS subdomain nodeName when
// set; every port has a valid number and protocol, a DNS-1123 label name
// (required when the subset has more than one port) and a qualified-name
// appProtocol. The API sets no bound on the number of addresses (the
// endpoints controller does, MaxEndpointsAddresses).
func ValidateEndpoints(e *Endpoints) field.ErrorList {
	errs := ValidateObjectMeta(&e.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateEndpointSubsets(e.Subsets, field.NewPath("subsets"))...)
}

// ValidateEndpointsUpdate checks an update: the same rules as a create
// plus the metadata update rules.
func ValidateEndpointsUpdate(e, old *Endpoints) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&e.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, ValidateEndpoints(e)...)
	return dedupe(errs)
}

func validateEndpointSubsets(subsets []EndpointSubset, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range subsets {
		ss := &subsets[i]
		p := path.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(p, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			errs = append(errs, validateEndpointAddress(&ss.Addresses[j], p.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			errs = append(errs, validateEndpointAddress(&ss.NotReadyAddresses[j], p.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			errs = append(errs, validateEndpointsPort(&ss.Ports[j], len(ss.Ports) > 1, p.Child("ports").Index(j))...)
		}
	}
	return errs
}

func validateEndpointAddress(a *EndpointAddress, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if e := ValidateIP(path.Child("ip"), a.IP); len(e) > 0 {
		errs = append(errs, e...)
	} else {
		errs = append(errs, ValidateNonSpecialIP(a.IP, path.Child("ip"))...)
	}
	if a.Hostname != "" {
		errs = append(errs, ValidateDNS1123LabelField(a.Hostname, path.Child("hostname"))...)
	}
	if a.NodeName != nil {
		errs = append(errs, invalidEach(path.Child("nodeName"), *a.NodeName, NameIsDNSSubdomain(*a.NodeName, false))...)
	}
	return errs
}

func validateEndpointsPort(port *EndpointsPort, requireName bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && port.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else if port.Name != "" {
		errs = append(errs, ValidateDNS1123LabelField(port.Name, path.Child("name"))...)
	}
	errs = append(errs, invalidEach(path.Child("port"), port.Port, ValidatePortNum(int(port.Port)))...)
	errs = append(errs, ValidateProtocol(port.Protocol, path.Child("protocol"))...)
	if port.AppProtocol != nil {
		errs = append(errs, ValidateQualifiedNameField(*port.AppProtocol, path.Child("appProtocol"))...)
	}
	return errs
}
