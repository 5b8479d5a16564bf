package endpoints

import (
	"cmp"
	"maps"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Input is everything Reconcile looks at for one Service.
type Input struct {
	// Service has a selector and is not ExternalName (sync checks).
	Service *api.Service
	// Pods are the pods of the Service's namespace its selector matches.
	Pods []*api.Pod
	// Current is the Service's Endpoints in the cache; nil when none.
	Current *api.Endpoints
}

// Plan is Reconcile's decision: at most one of Create and Update is set;
// neither when the Endpoints is already as wanted.
type Plan struct {
	Create, Update *api.Endpoints
}

// Empty reports a Plan with nothing to write.
func (p Plan) Empty() bool { return p.Create == nil && p.Update == nil }

// Reconcile computes the Endpoints of in.Service from its pods and
// compares it with in.Current (see the package doc for the rules).
func Reconcile(in Input) Plan {
	svc := in.Service
	subsets, ready := Subsets(svc, in.Pods)
	truncated := truncate(subsets)
	labels := desiredLabels(svc)

	cur := in.Current
	if cur != nil && subsetsEqual(cur.Subsets, subsets) && maps.Equal(cur.Labels, labels) &&
		(cur.Annotations[api.EndpointsOverCapacityAnnotation] == "truncated") == truncated &&
		(truncated || !hasKey(cur.Annotations, api.EndpointsOverCapacityAnnotation)) {
		return Plan{}
	}
	var ep *api.Endpoints
	if cur == nil {
		ep = &api.Endpoints{ObjectMeta: api.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace}}
	} else {
		ep = api.DeepCopy(cur)
	}
	ep.Subsets = subsets
	ep.Labels = labels
	if ep.Annotations == nil {
		ep.Annotations = map[string]string{}
	}
	if t := triggerTime(svc, in.Pods, ready, cur); !t.IsZero() {
		ep.Annotations[api.EndpointsLastChangeTriggerTimeAnnotation] = t.UTC().Format(time.RFC3339Nano)
	} else {
		delete(ep.Annotations, api.EndpointsLastChangeTriggerTimeAnnotation)
	}
	if truncated {
		ep.Annotations[api.EndpointsOverCapacityAnnotation] = "truncated"
	} else {
		delete(ep.Annotations, api.EndpointsOverCapacityAnnotation)
	}
	if len(ep.Annotations) == 0 {
		ep.Annotations = nil
	}
	if cur == nil {
		return Plan{Create: ep}
	}
	return Plan{Update: ep}
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// desiredLabels are the Service's labels, the headless label for a
// Service without a ClusterIP, and skip-mirror "true".
func desiredLabels(svc *api.Service) map[string]string {
	out := maps.Clone(svc.Labels)
	if out == nil {
		out = map[string]string{}
	}
	if ip := svc.Spec.ClusterIP; ip == "" || ip == api.ClusterIPNone {
		out[api.LabelHeadlessService] = ""
	} else {
		delete(out, api.LabelHeadlessService)
	}
	out[api.LabelSkipMirror] = "true"
	return out
}

// Subsets computes the Service's subsets, packed and sorted as
// Kubernetes' RepackSubsets leaves them, and reports which pods (by name)
// are in addresses (true) or notReadyAddresses (false).
func Subsets(svc *api.Service, pods []*api.Pod) ([]api.EndpointSubset, map[string]bool) {
	type addrKey struct{ ip, uid string }
	type entry struct {
		addr  api.EndpointAddress
		ready bool
	}
	byPort := map[api.EndpointsPort]map[addrKey]entry{}
	var appProtocols map[api.EndpointsPort]*string // ports are keyed without their pointer
	readyOf := map[string]bool{}
	publish := svc.Spec.PublishNotReadyAddresses
	headless := svc.Spec.ClusterIP == api.ClusterIPNone
	for _, pod := range pods {
		if !podInEndpoints(pod, publish) {
			continue
		}
		ip := podIPFor(svc, pod)
		if ip == "" {
			continue
		}
		addr := api.EndpointAddress{IP: ip, TargetRef: &api.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}}
		if pod.Spec.NodeName != "" {
			addr.NodeName = ptr(pod.Spec.NodeName)
		}
		if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && pod.Namespace == svc.Namespace {
			addr.Hostname = pod.Spec.Hostname
		}
		ready := publish || api.IsPodReady(pod)
		k := addrKey{ip, pod.UID}
		add := func(p api.EndpointsPort) {
			set := byPort[p]
			if set == nil {
				set = map[addrKey]entry{}
				byPort[p] = set
			}
			set[k] = entry{addr, ready}
			readyOf[pod.Name] = ready
		}
		if len(svc.Spec.Ports) == 0 {
			if headless {
				add(api.EndpointsPort{Port: -1}) // a sentinel: no ports
			}
			continue
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			num, ok := api.FindPort(pod, sp)
			if !ok {
				continue
			}
			p := api.EndpointsPort{Name: sp.Name, Port: num, Protocol: sp.Protocol}
			if p.Protocol == "" {
				p.Protocol = api.ProtocolTCP
			}
			if sp.AppProtocol != nil {
				// Ports are map keys without their pointer; the
				// appProtocol is kept aside and set when grouped.
				if appProtocols == nil {
					appProtocols = map[api.EndpointsPort]*string{}
				}
				appProtocols[p] = sp.AppProtocol
			}
			add(p)
		}
	}

	// Group the ports by the exact set of (address, readiness) they have.
	type group struct {
		entries []entry
		ports   []api.EndpointsPort
	}
	groups := map[string]*group{}
	for p, set := range byPort {
		entries := slices.Collect(maps.Values(set))
		slices.SortFunc(entries, func(a, b entry) int {
			return cmp.Or(strings.Compare(a.addr.IP, b.addr.IP), strings.Compare(uidOf(a.addr), uidOf(b.addr)), boolCmp(a.ready, b.ready))
		})
		var sb strings.Builder
		for _, e := range entries {
			sb.WriteString(e.addr.IP)
			sb.WriteByte('|')
			sb.WriteString(uidOf(e.addr))
			if e.ready {
				sb.WriteString("|r;")
			} else {
				sb.WriteString("|n;")
			}
		}
		key := sb.String()
		g := groups[key]
		if g == nil {
			g = &group{entries: entries}
			groups[key] = g
		}
		if p.Port > 0 {
			if ap := appProtocols[p]; ap != nil {
				p.AppProtocol = ptr(*ap)
			}
			g.ports = append(g.ports, p)
		}
	}
	out := make([]api.EndpointSubset, 0, len(groups))
	for _, g := range groups {
		var ss api.EndpointSubset
		for _, e := range g.entries {
			a := e.addr
			a.TargetRef = ptr(*a.TargetRef)
			if a.NodeName != nil {
				a.NodeName = ptr(*a.NodeName)
			}
			if e.ready {
				ss.Addresses = append(ss.Addresses, a)
			} else {
				ss.NotReadyAddresses = append(ss.NotReadyAddresses, a)
			}
		}
		slices.SortFunc(g.ports, comparePorts)
		ss.Ports = g.ports
		out = append(out, ss)
	}
	slices.SortFunc(out, func(a, b api.EndpointSubset) int {
		return cmp.Or(
			slices.CompareFunc(a.Ports, b.Ports, comparePorts),
			strings.Compare(firstIP(a), firstIP(b)),
		)
	})
	return out, readyOf
}

func uidOf(a api.EndpointAddress) string {
	if a.TargetRef == nil {
		return ""
	}
	return a.TargetRef.UID
}

func firstIP(s api.EndpointSubset) string {
	if len(s.Addresses) > 0 {
		return s.Addresses[0].IP
	}
	if len(s.NotReadyAddresses) > 0 {
		return s.NotReadyAddresses[0].IP
	}
	return ""
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

func comparePorts(a, b api.EndpointsPort) int {
	return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.Port, b.Port), strings.Compare(string(a.Protocol), string(b.Protocol)))
}

// podInEndpoints is Kubernetes' ShouldPodBeInEndpoints: not Succeeded or
// Failed, has an IP, and (unless not-ready addresses are published) is
// not terminating.
func podInEndpoints(pod *api.Pod, publishNotReady bool) bool {
	if pod.Status.Phase == api.PodSucceeded || pod.Status.Phase == api.PodFailed {
		return false
	}
	if pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0 {
		return false
	}
	return publishNotReady || pod.DeletionTimestamp == nil
}

// podIPFor is the pod's IP of the Service's family: its first ipFamily,
// else its ClusterIP's family, else (headless) the family of the pod's
// status.podIP. "" when the pod has no IP of that family.
func podIPFor(svc *api.Service, pod *api.Pod) string {
	want6 := false
	switch {
	case len(svc.Spec.IPFamilies) > 0:
		want6 = svc.Spec.IPFamilies[0] == api.IPv6Protocol
	case svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != api.ClusterIPNone:
		want6 = is6(svc.Spec.ClusterIP)
	default:
		want6 = is6(pod.Status.PodIP)
	}
	ips := make([]string, 0, 2)
	for _, p := range pod.Status.PodIPs {
		ips = append(ips, p.IP)
	}
	if len(ips) == 0 && pod.Status.PodIP != "" {
		ips = append(ips, pod.Status.PodIP)
	}
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err == nil && a.Unmap().Is6() == want6 {
			return a.Unmap().String()
		}
	}
	return ""
}

func is6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Unmap().Is6()
}

// truncate keeps at most api.MaxEndpointsAddresses addresses, as
// Kubernetes' truncateEndpoints: ready addresses first; each subset keeps
// its share (rounded up) of what is kept, the last ones fewer. It reports
// whether anything was dropped.
func truncate(subsets []api.EndpointSubset) bool {
	const max = api.MaxEndpointsAddresses
	totalReady, totalNotReady := 0, 0
	for _, s := range subsets {
		totalReady += len(s.Addresses)
		totalNotReady += len(s.NotReadyAddresses)
	}
	if totalReady+totalNotReady <= max {
		return false
	}
	truncateReady := totalReady > max
	keep, total := max-totalReady, totalNotReady
	if truncateReady {
		keep, total = max, totalReady
	}
	left := keep
	for i := range subsets {
		s := &subsets[i]
		n := len(s.NotReadyAddresses)
		if truncateReady {
			n = len(s.Addresses)
		}
		share := int(math.Ceil(float64(n) / float64(total) * float64(keep)))
		share = min(share, left)
		if truncateReady {
			s.Addresses = s.Addresses[:min(share, len(s.Addresses))]
			s.NotReadyAddresses = nil
			left -= len(s.Addresses)
		} else {
			s.NotReadyAddresses = s.NotReadyAddresses[:min(share, len(s.NotReadyAddresses))]
			left -= len(s.NotReadyAddresses)
		}
	}
	return true
}

// subsetsEqual compares subsets as the API returns them (nil and empty
// lists alike).
func subsetsEqual(a, b []api.EndpointSubset) bool {
	return slices.EqualFunc(a, b, func(x, y api.EndpointSubset) bool {
		return slices.EqualFunc(x.Addresses, y.Addresses, addrEqual) &&
			slices.EqualFunc(x.NotReadyAddresses, y.NotReadyAddresses, addrEqual) &&
			slices.EqualFunc(x.Ports, y.Ports, func(p, q api.EndpointsPort) bool {
				return p.Name == q.Name && p.Port == q.Port && p.Protocol == q.Protocol && strPtrEq(p.AppProtocol, q.AppProtocol)
			})
	})
}

func addrEqual(a, b api.EndpointAddress) bool {
	if a.IP != b.IP || a.Hostname != b.Hostname || !strPtrEq(a.NodeName, b.NodeName) || (a.TargetRef == nil) != (b.TargetRef == nil) {
		return false
	}
	if a.TargetRef == nil {
		return true
	}
	x, y := *a.TargetRef, *b.TargetRef
	x.ResourceVersion, y.ResourceVersion = "", "" // as Kubernetes: a pod's resourceVersion is no change
	return x == y
}

func strPtrEq(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// triggerTime is the time of the change that triggered this write: the
// earliest Ready transition (lastTransitionTime of the Ready condition,
// else the pod's creation) of the pods that are new in the Endpoints or
// moved between addresses and notReadyAddresses, and on the first write
// the Service's creation if earlier. Zero when no such change is known
// (a pod went away).
func triggerTime(svc *api.Service, pods []*api.Pod, ready map[string]bool, cur *api.Endpoints) time.Time {
	var was map[string]bool
	if cur != nil {
		was = map[string]bool{}
		for _, s := range cur.Subsets {
			for _, a := range s.Addresses {
				if a.TargetRef != nil {
					was[a.TargetRef.Name] = true
				}
			}
			for _, a := range s.NotReadyAddresses {
				if a.TargetRef != nil {
					if _, ok := was[a.TargetRef.Name]; !ok {
						was[a.TargetRef.Name] = false
					}
				}
			}
		}
	}
	var earliest time.Time
	note := func(t time.Time) {
		if !t.IsZero() && (earliest.IsZero() || t.Before(earliest)) {
			earliest = t
		}
	}
	if cur == nil {
		note(svc.CreationTimestamp.Time)
	}
	for _, pod := range pods {
		r, in := ready[pod.Name]
		if !in {
			continue
		}
		if w, ok := was[pod.Name]; ok && w == r {
			continue
		}
		if c := api.GetPodCondition(&pod.Status, api.PodReady); c != nil && !c.LastTransitionTime.IsZero() {
			note(c.LastTransitionTime.Time)
		} else {
			note(pod.CreationTimestamp.Time)
		}
	}
	return earliest
}

func ptr[T any](v T) *T { return &v }
