package endpointslice

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Input is everything the compute step looks at for one Service.
type Input struct {
	// Service is the Service being reconciled; it has a selector.
	Service *api.Service
	// Pods are the pods of the Service's namespace that match its
	// selector, in any order. Pods that must not be endpoints (no IP,
	// terminal phase) are skipped here, not by the caller.
	Pods []*api.Pod
	// Slices are the existing EndpointSlices labelled with the Service's
	// name and managed by this controller, not being deleted.
	Slices []*api.EndpointSlice
	// MaxEndpointsPerSlice bounds each slice; 0 means the default (100).
	MaxEndpointsPerSlice int
	// TriggerTime is written as AnnotationLastChangeTriggerTime on every
	// slice created or updated; zero removes the annotation.
	TriggerTime time.Time
}

// Plan is what the apply step writes. Create holds new slices (with
// generateName); Update holds modified copies of existing slices (name and
// resourceVersion set); Delete holds existing slices, as given in Input.
// Nothing in a Plan aliases the Input's objects except Delete's entries.
type Plan struct {
	Create []*api.EndpointSlice
	Update []*api.EndpointSlice
	Delete []*api.EndpointSlice
}

// Empty reports whether the plan writes nothing.
func (p Plan) Empty() bool {
	return len(p.Create) == 0 && len(p.Update) == 0 && len(p.Delete) == 0
}

// Reconcile computes the writes that make in.Slices hold exactly the
// endpoints of in.Pods, following Kubernetes' EndpointSlice reconciler:
//
//   - slices are grouped by address type, then by port set; a slice whose
//     address type the Service no longer uses, or that another Service
//     (an older one of the same name) owns, is deleted;
//   - each existing slice is updated in place: endpoints that went are
//     removed, changed ones rewritten, and a slice left empty is deleted;
//   - new endpoints first fill the slices already being updated (fullest
//     first), then, if fewer than a slice's worth remain, the unchanged
//     slice that they fill closest to full, and only then new slices;
//   - nothing is rebalanced: an unchanged slice is never written, so one
//     pod's change rewrites exactly the one slice that holds it;
//   - a Service with no endpoints keeps one empty placeholder slice;
//   - a create paired with a delete of the same address type becomes an
//     update of the slice that would be deleted;
//   - a Service being deleted gets no new slices.
//
// Reconcile is pure and deterministic: the same input gives the same plan.
func Reconcile(in Input) Plan {
	maxPerSlice := in.MaxEndpointsPerSlice
	if maxPerSlice <= 0 {
		maxPerSlice = DefaultMaxEndpointsPerSlice
	}
	svc := in.Service
	types := addressTypes(svc, in.Pods)

	var plan Plan
	byType := map[string][]*api.EndpointSlice{}
	for _, s := range sortedByName(in.Slices) {
		if !slices.Contains(types, s.AddressType) {
			plan.Delete = append(plan.Delete, s)
			continue
		}
		byType[s.AddressType] = append(byType[s.AddressType], s)
	}
	for _, at := range types {
		p := reconcileAddressType(svc, in.Pods, byType[at], at, maxPerSlice)
		plan.Create = append(plan.Create, p.Create...)
		plan.Update = append(plan.Update, p.Update...)
		plan.Delete = append(plan.Delete, p.Delete...)
	}
	if svc.DeletionTimestamp != nil {
		plan.Create = nil
	}
	for _, s := range plan.Create {
		setTriggerTime(s, in.TriggerTime)
	}
	for _, s := range plan.Update {
		setTriggerTime(s, in.TriggerTime)
	}
	return plan
}

// reconcileAddressType is Reconcile for the slices of one address type.
func reconcileAddressType(svc *api.Service, pods []*api.Pod, existing []*api.EndpointSlice, addrType string, maxPerSlice int) Plan {
	var plan Plan

	existingByPorts := map[string][]*api.EndpointSlice{}
	for _, s := range existing {
		if ownedBy(s, svc) {
			k := portKey(s.Ports)
			existingByPorts[k] = append(existingByPorts[k], s)
		} else {
			plan.Delete = append(plan.Delete, s)
		}
	}

	desiredPorts := map[string][]api.EndpointPort{}
	desired := map[string]endpointSet{}
	for _, pod := range pods {
		if !podIsEndpoint(pod) {
			continue
		}
		ports := endpointPorts(svc, pod)
		k := portKey(ports)
		if _, ok := desired[k]; !ok {
			desired[k] = endpointSet{}
			desiredPorts[k] = ports
		}
		ep := podToEndpoint(pod, svc, addrType)
		if len(ep.Addresses) > 0 {
			desired[k].insert(ep)
		}
	}

	for _, k := range slices.Sorted(maps.Keys(desired)) {
		p := reconcilePorts(svc, existingByPorts[k], desired[k], desiredPorts[k], addrType, maxPerSlice)
		plan.Create = append(plan.Create, p.Create...)
		plan.Update = append(plan.Update, p.Update...)
		plan.Delete = append(plan.Delete, p.Delete...)
	}
	// Port sets no pod has any more: their slices go.
	for _, k := range slices.Sorted(maps.Keys(existingByPorts)) {
		if _, ok := desired[k]; !ok {
			plan.Delete = append(plan.Delete, existingByPorts[k]...)
		}
	}

	// No endpoints at all: keep (or make) one empty placeholder slice.
	if len(existing) == len(plan.Delete) && len(plan.Create) == 0 {
		placeholder := newSlice(svc, []api.EndpointPort{}, addrType)
		if len(plan.Delete) == 1 && isPlaceholder(plan.Delete[0], placeholder) {
			plan.Delete = nil
		} else {
			plan.Create = append(plan.Create, placeholder)
		}
	}

	// Rather than create one slice and delete another, rewrite the one
	// that would be deleted (Kubernetes' finalize).
	for i := 0; i < len(plan.Delete) && len(plan.Create) > 0; {
		old := plan.Delete[i]
		if old.AddressType != addrType || !ownedBy(old, svc) {
			i++
			continue
		}
		s := plan.Create[len(plan.Create)-1]
		plan.Create = plan.Create[:len(plan.Create)-1]
		s.Name = old.Name
		s.GenerateName = old.GenerateName
		s.UID = old.UID
		s.ResourceVersion = old.ResourceVersion
		plan.Update = append(plan.Update, s)
		plan.Delete = slices.Delete(plan.Delete, i, i+1)
	}
	return plan
}

// reconcilePorts places the desired endpoints of one port set into the
// existing slices of that port set (Kubernetes' reconcileByPortMapping).
func reconcilePorts(svc *api.Service, existing []*api.EndpointSlice, desired endpointSet, ports []api.EndpointPort, addrType string, maxPerSlice int) Plan {
	byName := map[string]*api.EndpointSlice{}
	var unchanged, toUpdate, toDelete []string

	// 1. Remove endpoints that went, rewrite the ones that changed.
	for _, s := range existing {
		byName[s.Name] = s
		kept := make([]api.Endpoint, 0, len(s.Endpoints))
		changed := false
		for i := range s.Endpoints {
			ep := &s.Endpoints[i]
			k := endpointKey(ep)
			want, ok := desired[k]
			if !ok {
				continue // gone, or a duplicate of one already kept
			}
			kept = append(kept, *want)
			if !endpointEqualBeyondKey(want, ep) {
				changed = true
			}
			delete(desired, k)
		}
		labels, labelsChanged := sliceLabels(s.Labels, svc)
		switch {
		case changed || len(kept) != len(s.Endpoints):
			if len(kept) == 0 {
				toDelete = append(toDelete, s.Name)
				continue
			}
			c := api.DeepCopy(s)
			c.Endpoints = kept
			c.Labels = labels
			byName[s.Name] = c
			toUpdate = append(toUpdate, s.Name)
		case labelsChanged:
			c := api.DeepCopy(s)
			c.Labels = labels
			byName[s.Name] = c
			toUpdate = append(toUpdate, s.Name)
		default:
			unchanged = append(unchanged, s.Name)
		}
	}

	remaining := desired.sorted()
	pop := func(s *api.EndpointSlice) {
		for len(remaining) > 0 && len(s.Endpoints) < maxPerSlice {
			s.Endpoints = append(s.Endpoints, *remaining[0])
			remaining = remaining[1:]
		}
	}

	// 2. Fill the slices already being updated, fullest first.
	if len(remaining) > 0 && len(toUpdate) > 0 {
		fill := make([]*api.EndpointSlice, 0, len(toUpdate))
		for _, name := range toUpdate {
			fill = append(fill, byName[name])
		}
		slices.SortStableFunc(fill, func(a, b *api.EndpointSlice) int {
			return cmp.Or(cmp.Compare(len(b.Endpoints), len(a.Endpoints)), strings.Compare(a.Name, b.Name))
		})
		for _, s := range fill {
			pop(s)
		}
	}

	// 3. Put what is left into the unchanged slice it fills closest to
	// full (only when less than a slice's worth is left), else new slices.
	var toCreate []*api.EndpointSlice
	for len(remaining) > 0 {
		var s *api.EndpointSlice
		if len(remaining) < maxPerSlice && len(unchanged) > 0 {
			if name := sliceToFill(unchanged, byName, len(remaining), maxPerSlice); name != "" {
				s = api.DeepCopy(byName[name])
				s.Labels, _ = sliceLabels(s.Labels, svc)
				byName[name] = s
				unchanged = slices.DeleteFunc(unchanged, func(n string) bool { return n == name })
				toUpdate = append(toUpdate, name)
			}
		}
		if s == nil {
			s = newSlice(svc, ports, addrType)
			toCreate = append(toCreate, s)
		}
		pop(s)
	}

	plan := Plan{Create: toCreate}
	slices.Sort(toUpdate)
	for _, name := range toUpdate {
		plan.Update = append(plan.Update, byName[name])
	}
	slices.Sort(toDelete)
	for _, name := range toDelete {
		plan.Delete = append(plan.Delete, byName[name])
	}
	return plan
}

// sliceToFill returns the name of the unchanged slice that n more
// endpoints fill closest to full without overflowing it, or "".
func sliceToFill(names []string, byName map[string]*api.EndpointSlice, n, maxPerSlice int) string {
	best, bestDiff := "", maxPerSlice
	for _, name := range names {
		diff := maxPerSlice - (n + len(byName[name].Endpoints))
		if diff >= 0 && diff < bestDiff {
			best, bestDiff = name, diff
			if diff == 0 {
				break
			}
		}
	}
	return best
}

// newSlice is an empty slice of svc for ports and addrType, to be created
// with a generated name.
func newSlice(svc *api.Service, ports []api.EndpointPort, addrType string) *api.EndpointSlice {
	labels, _ := sliceLabels(nil, svc)
	return &api.EndpointSlice{
		TypeMeta: api.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: api.ObjectMeta{
			GenerateName: svc.Name + "-",
			Namespace:    svc.Namespace,
			Labels:       labels,
			OwnerReferences: []api.OwnerReference{{
				APIVersion:         "v1",
				Kind:               "Service",
				Name:               svc.Name,
				UID:                svc.UID,
				Controller:         ptr(true),
				BlockOwnerDeletion: ptr(true),
			}},
		},
		AddressType: addrType,
		Endpoints:   []api.Endpoint{},
		Ports:       slices.Clone(ports),
	}
}

// isPlaceholder reports whether existing is already the placeholder that
// want describes (same namespace, labels and address type, no endpoints,
// no ports).
func isPlaceholder(existing, want *api.EndpointSlice) bool {
	return existing.Namespace == want.Namespace &&
		existing.AddressType == want.AddressType &&
		len(existing.Endpoints) == 0 && len(existing.Ports) == 0 &&
		maps.Equal(existing.Labels, want.Labels)
}

// ownedBy reports whether svc (this very Service, by UID) is an owner of s.
func ownedBy(s *api.EndpointSlice, svc *api.Service) bool {
	for _, o := range s.OwnerReferences {
		if o.UID == svc.UID && o.Kind == "Service" && o.APIVersion == "v1" {
			return true
		}
	}
	return false
}

// isReservedLabel reports labels the controller sets itself and never
// copies from the Service.
func isReservedLabel(key string) bool {
	return key == api.LabelServiceName || key == api.LabelManagedBy || key == LabelHeadless
}

// sliceLabels returns the labels a slice of svc must carry: the Service's
// labels minus the reserved ones, the headless label for a Service
// without a ClusterIP, and the service-name and managed-by labels. changed
// reports whether the non-reserved labels of current differ from the
// Service's (reserved labels are fixed by the selection of slices).
func sliceLabels(current map[string]string, svc *api.Service) (labels map[string]string, changed bool) {
	labels = make(map[string]string, len(svc.Labels)+3)
	for k, v := range svc.Labels {
		if !isReservedLabel(k) {
			labels[k] = v
		}
	}
	n := 0
	for k, v := range current {
		if isReservedLabel(k) {
			continue
		}
		n++
		if got, ok := labels[k]; !ok || got != v {
			changed = true
		}
	}
	if n != len(labels) {
		changed = true
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == api.ClusterIPNone {
		labels[LabelHeadless] = ""
	}
	labels[api.LabelServiceName] = svc.Name
	labels[api.LabelManagedBy] = ControllerName
	return labels, changed
}

// setTriggerTime sets or (for a zero t) removes the trigger annotation.
func setTriggerTime(s *api.EndpointSlice, t time.Time) {
	if t.IsZero() {
		delete(s.Annotations, AnnotationLastChangeTriggerTime)
		if len(s.Annotations) == 0 {
			s.Annotations = nil
		}
		return
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[AnnotationLastChangeTriggerTime] = t.UTC().Format(time.RFC3339Nano)
}

// portKey identifies a set of endpoint ports regardless of order (unset
// name and protocol count as "" and TCP, the API's defaults).
func portKey(ports []api.EndpointPort) string {
	parts := make([]string, 0, len(ports))
	for _, p := range ports {
		name, proto, app, num := "", string(api.ProtocolTCP), "", "-"
		if p.Name != nil {
			name = *p.Name
		}
		if p.Protocol != nil && *p.Protocol != "" {
			proto = string(*p.Protocol)
		}
		if p.AppProtocol != nil {
			app = *p.AppProtocol
		}
		if p.Port != nil {
			num = strconv.Itoa(int(*p.Port))
		}
		parts = append(parts, name+"/"+proto+"/"+num+"/"+app)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// endpointSet holds desired endpoints by endpointKey.
type endpointSet map[string]*api.Endpoint

func (s endpointSet) insert(ep *api.Endpoint) { s[endpointKey(ep)] = ep }

// sorted returns the endpoints ordered by key (pod namespace/name first),
// so that placement is deterministic.
func (s endpointSet) sorted() []*api.Endpoint {
	out := make([]*api.Endpoint, 0, len(s))
	for _, k := range slices.Sorted(maps.Keys(s)) {
		out = append(out, s[k])
	}
	return out
}

// endpointKey identifies an endpoint across writes as Kubernetes' hash
// does: its target pod, hostname and (sorted) addresses. Conditions, node
// and zone are not part of it, so their changes are updates in place.
func endpointKey(ep *api.Endpoint) string {
	var b strings.Builder
	if ep.TargetRef != nil {
		b.WriteString(ep.TargetRef.Namespace)
		b.WriteByte('/')
		b.WriteString(ep.TargetRef.Name)
	}
	b.WriteByte('|')
	if ep.Hostname != nil {
		b.WriteString(*ep.Hostname)
	}
	addrs := ep.Addresses
	if !slices.IsSorted(addrs) {
		addrs = slices.Sorted(slices.Values(addrs))
	}
	for _, a := range addrs {
		b.WriteByte('|')
		b.WriteString(a)
	}
	return b.String()
}

// endpointEqualBeyondKey compares what endpointKey leaves out: node, zone,
// conditions and the target (ignoring its resourceVersion).
func endpointEqualBeyondKey(a, b *api.Endpoint) bool {
	if !ptrEqual(a.NodeName, b.NodeName) || !ptrEqual(a.Zone, b.Zone) ||
		!ptrEqual(a.Conditions.Ready, b.Conditions.Ready) ||
		!ptrEqual(a.Conditions.Serving, b.Conditions.Serving) ||
		!ptrEqual(a.Conditions.Terminating, b.Conditions.Terminating) {
		return false
	}
	if (a.TargetRef == nil) != (b.TargetRef == nil) {
		return false
	}
	if a.TargetRef != nil {
		x, y := *a.TargetRef, *b.TargetRef
		x.ResourceVersion, y.ResourceVersion = "", ""
		if x != y {
			return false
		}
	}
	return true
}

func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func ptr[T any](v T) *T { return &v }

func sortedByName(in []*api.EndpointSlice) []*api.EndpointSlice {
	out := slices.Clone(in)
	slices.SortFunc(out, func(a, b *api.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	return out
}
