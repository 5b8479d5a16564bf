package endpointslice

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// Address families, as indexes of per-family arrays.
const (
	famIPv4 = 0
	famIPv6 = 1
)

func familyIndex(addrType string) int {
	if addrType == api.AddressTypeIPv6 {
		return famIPv6
	}
	return famIPv4
}

// podIsEndpoint reports whether pod belongs in a Service's slices at all:
// it has an IP and has not reached a terminal phase. Terminating pods stay
// (with terminating=true), as in Kubernetes.
func podIsEndpoint(pod *api.Pod) bool {
	if pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed {
		return false
	}
	return pod.Status.PodIP != "" || len(pod.Status.PodIPs) > 0
}

// epKey identifies an endpoint across writes as Kubernetes' endpoint hash
// does: its target pod, hostname and (sorted) addresses. Conditions, node
// and zone are not part of it, so their changes are updates in place.
type epKey struct {
	ns, name, hostname string
	addrs              string // addrKey of the addresses
}

// addrKey joins sorted addresses; one address is itself (no allocation).
func addrKey(addrs []string) string {
	switch len(addrs) {
	case 0:
		return ""
	case 1:
		return addrs[0]
	}
	if !slices.IsSorted(addrs) {
		addrs = slices.Sorted(slices.Values(addrs))
	}
	return strings.Join(addrs, ",")
}

// endpointKeyOf is the key of an endpoint found in a slice.
func endpointKeyOf(ep *api.Endpoint) epKey {
	var k epKey
	if ep.TargetRef != nil {
		k.ns, k.name = ep.TargetRef.Namespace, ep.TargetRef.Name
	}
	if ep.Hostname != nil {
		k.hostname = *ep.Hostname
	}
	k.addrs = addrKey(ep.Addresses)
	return k
}

// desiredEndpoint is one pod's endpoint for one Service and address type
// in compact form: comparing it with an endpoint of a slice allocates
// nothing, and endpoint() builds a fresh api.Endpoint for a write.
type desiredEndpoint struct {
	key                         epKey
	addresses                   []string
	uid                         string
	nodeName                    string // "" means unset
	ready, serving, terminating bool
}

// newDesiredEndpoint derives pod's endpoint for svc and the addresses of
// one family.
//
//   - serving: the pod's Ready condition is True, even while terminating;
//   - terminating: the pod has a deletionTimestamp;
//   - ready: serving and not terminating, or always with
//     publishNotReadyAddresses;
//   - hostname: the pod's spec.hostname when its spec.subdomain names svc
//     (in svc's namespace).
func newDesiredEndpoint(pod *api.Pod, svc *api.Service, addresses []string) desiredEndpoint {
	serving := api.IsPodReady(pod)
	terminating := pod.DeletionTimestamp != nil
	d := desiredEndpoint{
		key:         epKey{ns: pod.Namespace, name: pod.Name, addrs: addrKey(addresses)},
		addresses:   addresses,
		uid:         pod.UID,
		nodeName:    pod.Spec.NodeName,
		serving:     serving,
		terminating: terminating,
		ready:       svc.Spec.PublishNotReadyAddresses || (serving && !terminating),
	}
	if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && pod.Namespace == svc.Namespace {
		d.key.hostname = pod.Spec.Hostname
	}
	return d
}

// endpoint builds the api.Endpoint, sharing no memory with d.
func (d *desiredEndpoint) endpoint() api.Endpoint {
	ep := api.Endpoint{
		Addresses: slices.Clone(d.addresses),
		Conditions: api.EndpointConditions{
			Ready:       ptr(d.ready),
			Serving:     ptr(d.serving),
			Terminating: ptr(d.terminating),
		},
		TargetRef: &api.ObjectReference{Kind: "Pod", Namespace: d.key.ns, Name: d.key.name, UID: d.uid},
	}
	if d.nodeName != "" {
		ep.NodeName = ptr(d.nodeName)
	}
	if d.key.hostname != "" {
		ep.Hostname = ptr(d.key.hostname)
	}
	return ep
}

// matches reports whether ep (with the same key) needs no rewrite: node,
// zone, conditions and target (but its resourceVersion) are as desired.
func (d *desiredEndpoint) matches(ep *api.Endpoint) bool {
	if !strPtrIs(ep.NodeName, d.nodeName) || ep.Zone != nil ||
		!boolPtrIs(ep.Conditions.Ready, d.ready) ||
		!boolPtrIs(ep.Conditions.Serving, d.serving) ||
		!boolPtrIs(ep.Conditions.Terminating, d.terminating) {
		return false
	}
	r := ep.TargetRef
	return r != nil && r.Kind == "Pod" && r.Namespace == d.key.ns && r.Name == d.key.name &&
		r.UID == d.uid && r.APIVersion == "" && r.FieldPath == ""
}

func strPtrIs(p *string, s string) bool {
	if s == "" {
		return p == nil
	}
	return p != nil && *p == s
}

func boolPtrIs(p *bool, b bool) bool { return p != nil && *p == b }

// podAddresses returns the pod's IPs (status.podIPs, or status.podIP when
// podIPs is empty) by family, in canonical form; IPv4-mapped IPv6
// addresses count as IPv4. Unparsable IPs are skipped.
func podAddresses(pod *api.Pod) (byFamily [2][]string) {
	add := func(s string) {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return
		}
		ip = ip.Unmap()
		f := famIPv4
		if ip.Is6() {
			f = famIPv6
		}
		byFamily[f] = append(byFamily[f], ip.String())
	}
	for _, p := range pod.Status.PodIPs {
		add(p.IP)
	}
	if len(pod.Status.PodIPs) == 0 && pod.Status.PodIP != "" {
		add(pod.Status.PodIP)
	}
	return byFamily
}

// addressTypes returns the address types svc gets slices for: its
// spec.ipFamilies; failing that the family of its ClusterIP; failing that
// (a headless Service without ipFamilies) IPv4, and IPv6 too when
// hasIPv6 (one of its pods has an IPv6 address). Kubernetes assumes both
// families in the last case; Skiff's API server sets no ipFamilies on
// headless Services, so this avoids an always-empty IPv6 placeholder.
func addressTypes(svc *api.Service, hasIPv6 bool) []string {
	var out []string
	for _, f := range svc.Spec.IPFamilies {
		t := ""
		switch f {
		case api.IPv4Protocol:
			t = api.AddressTypeIPv4
		case api.IPv6Protocol:
			t = api.AddressTypeIPv6
		}
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) > 0 {
		return out
	}
	if ip := svc.Spec.ClusterIP; ip != "" && ip != api.ClusterIPNone {
		if a, err := netip.ParseAddr(ip); err == nil && a.Unmap().Is6() {
			return []string{api.AddressTypeIPv6}
		}
		return []string{api.AddressTypeIPv4}
	}
	if hasIPv6 {
		return []string{api.AddressTypeIPv4, api.AddressTypeIPv6}
	}
	return []string{api.AddressTypeIPv4}
}

// endpointPorts returns the ports of pod's endpoint for svc: one per
// Service port whose target port resolves on this pod, named and with the
// protocol of the Service port and the resolved number. A headless Service
// without ports has an empty port list.
func endpointPorts(svc *api.Service, pod *api.Pod) []api.EndpointPort {
	out := make([]api.EndpointPort, 0, len(svc.Spec.Ports))
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		num, ok := api.FindPort(pod, sp)
		if !ok {
			continue
		}
		proto := sp.Protocol
		if proto == "" {
			proto = api.ProtocolTCP
		}
		out = append(out, api.EndpointPort{
			Name:        ptr(sp.Name),
			Protocol:    ptr(proto),
			Port:        ptr(num),
			AppProtocol: sp.AppProtocol,
		})
	}
	return out
}

// clonePorts copies ports, pointers included.
func clonePorts(ports []api.EndpointPort) []api.EndpointPort {
	out := make([]api.EndpointPort, len(ports))
	for i, p := range ports {
		out[i] = api.EndpointPort{
			Name: clonePtr(p.Name), Protocol: clonePtr(p.Protocol),
			Port: clonePtr(p.Port), AppProtocol: clonePtr(p.AppProtocol),
		}
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
