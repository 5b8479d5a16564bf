package endpointslice

import (
	"net/netip"

	"github.com/skiff-dev/skiff/api"
)

// podIsEndpoint reports whether pod belongs in a Service's slices at all:
// it has an IP and has not reached a terminal phase. Terminating pods stay
// (with terminating=true), as in Kubernetes.
func podIsEndpoint(pod *api.Pod) bool {
	if pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed {
		return false
	}
	return pod.Status.PodIP != "" || len(pod.Status.PodIPs) > 0
}

// podToEndpoint builds pod's endpoint for svc and one address type. Its
// Addresses are empty when the pod has no IP of that type.
//
//   - serving: the pod's Ready condition is True, even while terminating;
//   - terminating: the pod has a deletionTimestamp;
//   - ready: serving and not terminating, or always with
//     publishNotReadyAddresses;
//   - hostname: the pod's spec.hostname when its spec.subdomain names svc
//     (in svc's namespace).
func podToEndpoint(pod *api.Pod, svc *api.Service, addrType string) *api.Endpoint {
	serving := api.IsPodReady(pod)
	terminating := pod.DeletionTimestamp != nil
	ready := svc.Spec.PublishNotReadyAddresses || (serving && !terminating)
	ep := &api.Endpoint{
		Addresses: podAddresses(pod, addrType),
		Conditions: api.EndpointConditions{
			Ready:       &ready,
			Serving:     &serving,
			Terminating: &terminating,
		},
		TargetRef: &api.ObjectReference{
			Kind:      "Pod",
			Namespace: pod.Namespace,
			Name:      pod.Name,
			UID:       pod.UID,
		},
	}
	if pod.Spec.NodeName != "" {
		ep.NodeName = ptr(pod.Spec.NodeName)
	}
	if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && pod.Namespace == svc.Namespace {
		ep.Hostname = ptr(pod.Spec.Hostname)
	}
	return ep
}

// podAddresses returns the pod's IPs of addrType (status.podIPs, or
// status.podIP when podIPs is empty), in canonical form; IPv4-mapped IPv6
// addresses count as IPv4. Unparsable IPs are skipped.
func podAddresses(pod *api.Pod, addrType string) []string {
	ips := make([]string, 0, 2)
	for _, p := range pod.Status.PodIPs {
		ips = append(ips, p.IP)
	}
	if len(ips) == 0 && pod.Status.PodIP != "" {
		ips = append(ips, pod.Status.PodIP)
	}
	out := make([]string, 0, len(ips))
	for _, s := range ips {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			continue
		}
		ip = ip.Unmap()
		if (ip.Is4() && addrType == api.AddressTypeIPv4) || (ip.Is6() && addrType == api.AddressTypeIPv6) {
			out = append(out, ip.String())
		}
	}
	return out
}

// addressTypes returns the address types svc gets slices for: its
// spec.ipFamilies; failing that the family of its ClusterIP; failing that
// (a headless Service without ipFamilies) IPv4, and IPv6 too when one of
// the pods has an IPv6 address. Kubernetes assumes both families in the
// last case; Skiff's API server sets no ipFamilies on headless Services,
// so this avoids an always-empty IPv6 placeholder slice.
func addressTypes(svc *api.Service, pods []*api.Pod) []string {
	var out []string
	add := func(t string) {
		for _, have := range out {
			if have == t {
				return
			}
		}
		out = append(out, t)
	}
	for _, f := range svc.Spec.IPFamilies {
		switch f {
		case api.IPv4Protocol:
			add(api.AddressTypeIPv4)
		case api.IPv6Protocol:
			add(api.AddressTypeIPv6)
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
	out = []string{api.AddressTypeIPv4}
	for _, pod := range pods {
		if podIsEndpoint(pod) && len(podAddresses(pod, api.AddressTypeIPv6)) > 0 {
			return append(out, api.AddressTypeIPv6)
		}
	}
	return out
}

// endpointPorts returns the ports of pod's endpoint for svc: one per
// Service port whose target port resolves on this pod, named and with the
// protocol of the Service port and the resolved number. A headless Service
// without ports has an empty port list.
func endpointPorts(svc *api.Service, pod *api.Pod) []api.EndpointPort {
	out := make([]api.EndpointPort, 0, len(svc.Spec.Ports))
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		num, ok := findPort(pod, sp)
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

// findPort resolves a Service port's targetPort on pod: a number is used
// as is (0, unset, means the Service port); a name is looked up among the
// container ports (and those of sidecar init containers, restartPolicy
// Always) with the same protocol.
func findPort(pod *api.Pod, sp *api.ServicePort) (int32, bool) {
	tp := sp.TargetPort
	if tp.Type != api.String {
		if tp.IntVal == 0 {
			return sp.Port, true
		}
		return tp.IntVal, true
	}
	proto := sp.Protocol
	if proto == "" {
		proto = api.ProtocolTCP
	}
	match := func(cs []api.Container, sidecarsOnly bool) (int32, bool) {
		for _, c := range cs {
			if sidecarsOnly && (c.RestartPolicy == nil || *c.RestartPolicy != api.RestartPolicyAlways) {
				continue
			}
			for _, p := range c.Ports {
				pp := p.Protocol
				if pp == "" {
					pp = api.ProtocolTCP
				}
				if p.Name == tp.StrVal && pp == proto {
					return p.ContainerPort, true
				}
			}
		}
		return 0, false
	}
	if n, ok := match(pod.Spec.Containers, false); ok {
		return n, true
	}
	return match(pod.Spec.InitContainers, true)
}
