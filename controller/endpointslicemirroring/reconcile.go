package endpointslicemirroring

import (
	"cmp"
	"encoding/json"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// ManagedBy is the managed-by label value of the slices this controller
// writes (Kubernetes' endpointslicemirroring-controller.k8s.io).
const ManagedBy = "endpointslicemirroring-controller.k8s.io"

// MaxEndpointsPerSubset is how many endpoints of one subset are mirrored
// (Kubernetes' --mirroring-max-endpoints-per-subset default); the rest are
// dropped.
const MaxEndpointsPerSubset = 1000

// Annotations never copied from an Endpoints to its slices.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// leaderAnnotation marks an Endpoints used as a leader-election lock,
// which is never mirrored.
const leaderAnnotation = "control-plane.alpha.kubernetes.io/leader"

// Input is everything Reconcile looks at for one Endpoints key.
type Input struct {
	// Endpoints is the user's Endpoints; nil when there is none.
	Endpoints *api.Endpoints
	// Service is the Service of the same name; nil when there is none.
	Service *api.Service
	// Slices are the slices this controller manages for the key.
	Slices []*api.EndpointSlice
}

// Plan is the writes that make the slices mirror the Endpoints.
type Plan struct {
	Create, Update []*api.EndpointSlice
	Delete         []*api.EndpointSlice
}

// Empty reports a Plan with nothing to write.
func (p Plan) Empty() bool { return len(p.Create)+len(p.Update)+len(p.Delete) == 0 }

// ShouldMirror reports whether ep is mirrored given its Service: the
// Service exists and has no selector, and ep is neither labelled
// skip-mirror "true" nor a leader-election lock.
func ShouldMirror(ep *api.Endpoints, svc *api.Service) bool {
	if ep == nil || svc == nil || len(svc.Spec.Selector) > 0 {
		return false
	}
	if ep.Labels[api.LabelSkipMirror] == "true" {
		return false
	}
	_, leader := ep.Annotations[leaderAnnotation]
	return !leader
}

// Reconcile computes the slices of in.Endpoints and matches them with the
// existing ones by address type and port set.
func Reconcile(in Input) Plan {
	var want []*api.EndpointSlice
	if ShouldMirror(in.Endpoints, in.Service) {
		want = Desired(in.Endpoints)
	}
	byKey := map[string][]*api.EndpointSlice{}
	for _, s := range in.Slices {
		k := sliceKey(s.AddressType, s.Ports)
		byKey[k] = append(byKey[k], s)
	}
	for _, l := range byKey {
		slices.SortFunc(l, func(a, b *api.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	}
	var p Plan
	for _, w := range want {
		k := sliceKey(w.AddressType, w.Ports)
		have := byKey[k]
		if len(have) == 0 {
			p.Create = append(p.Create, w)
			continue
		}
		cur := have[0]
		byKey[k] = have[1:]
		if sliceEqual(cur, w) {
			continue
		}
		u := api.DeepCopy(cur)
		u.Labels, u.Annotations, u.OwnerReferences = w.Labels, w.Annotations, w.OwnerReferences
		u.Endpoints, u.Ports = w.Endpoints, w.Ports
		p.Update = append(p.Update, u)
	}
	for _, l := range byKey {
		p.Delete = append(p.Delete, l...)
	}
	slices.SortFunc(p.Delete, func(a, b *api.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	return p
}

// Desired is the slices mirroring ep: one per subset and address family
// (subsets with the same ports merge), holding up to
// MaxEndpointsPerSubset endpoints of each subset; addresses that are not
// valid endpoint IPs are skipped.
func Desired(ep *api.Endpoints) []*api.EndpointSlice {
	type bucket struct {
		addrType string
		ports    []api.EndpointPort
		eps      []api.Endpoint
		seen     map[string]bool
	}
	var order []string
	buckets := map[string]*bucket{}
	for _, ss := range ep.Subsets {
		ports := slicePorts(ss.Ports)
		n := 0
		add := func(a api.EndpointAddress, ready bool) {
			if n >= MaxEndpointsPerSubset {
				return
			}
			ip, err := netip.ParseAddr(a.IP)
			if err != nil || !api.IsValidIP(a.IP) || len(api.ValidateNonSpecialIP(a.IP, nil)) > 0 {
				return
			}
			t := api.AddressTypeIPv4
			if ip.Is6() {
				t = api.AddressTypeIPv6
			}
			k := sliceKey(t, ports)
			b := buckets[k]
			if b == nil {
				b = &bucket{addrType: t, ports: ports, seen: map[string]bool{}}
				buckets[k] = b
				order = append(order, k)
			}
			if b.seen[ip.String()] {
				return
			}
			b.seen[ip.String()] = true
			n++
			e := api.Endpoint{Addresses: []string{ip.String()}, Conditions: api.EndpointConditions{Ready: ptr(ready)}}
			if a.TargetRef != nil {
				e.TargetRef = ptr(*a.TargetRef)
			}
			if a.NodeName != nil {
				e.NodeName = ptr(*a.NodeName)
			}
			if a.Hostname != "" {
				e.Hostname = ptr(a.Hostname)
			}
			b.eps = append(b.eps, e)
		}
		for _, a := range ss.Addresses {
			add(a, true)
		}
		for _, a := range ss.NotReadyAddresses {
			add(a, false)
		}
	}
	labels := maps.Clone(ep.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[api.LabelServiceName] = ep.Name
	labels[api.LabelManagedBy] = ManagedBy
	var annotations map[string]string
	for k, v := range ep.Annotations {
		if k == lastAppliedAnnotation {
			continue
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[k] = v
	}
	out := make([]*api.EndpointSlice, 0, len(order))
	for _, k := range order {
		b := buckets[k]
		out = append(out, &api.EndpointSlice{
			ObjectMeta: api.ObjectMeta{
				GenerateName: ep.Name + "-", Namespace: ep.Namespace,
				Labels: maps.Clone(labels), Annotations: maps.Clone(annotations),
				OwnerReferences: []api.OwnerReference{{APIVersion: "v1", Kind: "Endpoints", Name: ep.Name, UID: ep.UID,
					Controller: ptr(true), BlockOwnerDeletion: ptr(true)}},
			},
			AddressType: b.addrType,
			Endpoints:   b.eps,
			Ports:       clonePorts(b.ports),
		})
	}
	return out
}

func slicePorts(ports []api.EndpointsPort) []api.EndpointPort {
	out := make([]api.EndpointPort, 0, len(ports))
	for _, p := range ports {
		proto := p.Protocol
		if proto == "" {
			proto = api.ProtocolTCP
		}
		ep := api.EndpointPort{Name: ptr(p.Name), Port: ptr(p.Port), Protocol: ptr(proto)}
		if p.AppProtocol != nil {
			ep.AppProtocol = ptr(*p.AppProtocol)
		}
		out = append(out, ep)
	}
	slices.SortFunc(out, func(a, b api.EndpointPort) int {
		return cmp.Or(strings.Compare(deref(a.Name), deref(b.Name)), cmp.Compare(deref(a.Port), deref(b.Port)))
	})
	return out
}

func clonePorts(ports []api.EndpointPort) []api.EndpointPort {
	out := make([]api.EndpointPort, len(ports))
	for i, p := range ports {
		out[i] = api.EndpointPort{Name: clonePtr(p.Name), Port: clonePtr(p.Port), Protocol: clonePtr(p.Protocol), AppProtocol: clonePtr(p.AppProtocol)}
	}
	return out
}

// sliceKey identifies a slice by its address type and port set.
func sliceKey(addrType string, ports []api.EndpointPort) string {
	var sb strings.Builder
	sb.WriteString(addrType)
	ps := slices.Clone(ports)
	slices.SortFunc(ps, func(a, b api.EndpointPort) int {
		return cmp.Or(strings.Compare(deref(a.Name), deref(b.Name)), cmp.Compare(deref(a.Port), deref(b.Port)))
	})
	for _, p := range ps {
		sb.WriteByte('|')
		sb.WriteString(deref(p.Name))
		sb.WriteByte(':')
		b, _ := json.Marshal([]any{deref(p.Port), deref(p.Protocol), p.AppProtocol})
		sb.Write(b)
	}
	return sb.String()
}

// sliceEqual reports whether cur already is w (labels, annotations, owner,
// endpoints and ports as the API returns them).
func sliceEqual(cur, w *api.EndpointSlice) bool {
	return maps.Equal(cur.Labels, w.Labels) && maps.Equal(cur.Annotations, w.Annotations) &&
		jsonEqual(cur.OwnerReferences, w.OwnerReferences) &&
		jsonEqual(nilIfEmpty(cur.Endpoints), nilIfEmpty(w.Endpoints)) && jsonEqual(nilIfEmpty(cur.Ports), nilIfEmpty(w.Ports))
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func ptr[T any](v T) *T { return &v }
