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
	// Memo, when set, keeps per-pod work between calls for this Service
	// (see Memo); nil derives every pod afresh. The plan is the same.
	Memo *Memo
}

// Plan is what the apply step writes. Create holds new slices (with
// generateName); Update holds modified copies of existing slices (name and
// resourceVersion set); Delete holds existing slices, as given in Input.
// Created and updated slices share no memory with the Input or the Memo.
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
// Reconcile is deterministic: the same input gives the same plan. It
// changes nothing but in.Memo.
func Reconcile(in Input) Plan {
	maxPerSlice := in.MaxEndpointsPerSlice
	if maxPerSlice <= 0 {
		maxPerSlice = DefaultMaxEndpointsPerSlice
	}
	svc := in.Service
	memo := in.Memo
	if memo == nil {
		memo = &Memo{}
	}
	memo.begin(svc)
	derived := make([]*podDerived, 0, len(in.Pods))
	hasIPv6 := false
	for _, pod := range in.Pods {
		d, dup := memo.derive(pod, svc)
		if d.include && !dup {
			derived = append(derived, d)
			hasIPv6 = hasIPv6 || d.hasAddr[famIPv6]
		}
	}
	memo.end()
	types := addressTypes(svc, hasIPv6)
	labels, _ := sliceLabels(nil, svc)

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
		r := reconciler{svc: svc, addrType: at, fam: familyIndex(at), maxPerSlice: maxPerSlice, labels: labels, memo: memo}
		p := r.reconcileAddressType(derived, byType[at])
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

// reconciler holds what one address type's reconcile shares.
type reconciler struct {
	svc         *api.Service
	addrType    string
	fam         int
	maxPerSlice int
	labels      map[string]string // what every slice must carry; never written to
	memo        *Memo             // this call's pods, by name
}

// portGroup is one port set: its desired endpoints are the pods with
// that port set and an address of the reconciler's family.
type portGroup struct {
	key       string
	ports     []api.EndpointPort
	existing  []*api.EndpointSlice
	remaining []*desiredEndpoint // not found in an existing slice

	byName    map[string]*api.EndpointSlice
	unchanged []string
	toUpdate  []string
	toDelete  []string
}

// reconcileAddressType is Reconcile for the slices of one address type.
func (r *reconciler) reconcileAddressType(pods []*podDerived, existing []*api.EndpointSlice) Plan {
	var plan Plan

	// Port sets of the pods. A pod without an address of this family
	// still makes its port set known (as in Kubernetes).
	groups := map[string]*portGroup{}
	for _, d := range pods {
		if _, ok := groups[d.portKey]; !ok {
			groups[d.portKey] = &portGroup{key: d.portKey, ports: d.ports}
		}
	}
	var gone []*api.EndpointSlice // slices of port sets no pod has
	for _, s := range existing {
		if !ownedBy(s, r.svc) {
			plan.Delete = append(plan.Delete, s)
			continue
		}
		if g := groups[portKey(s.Ports)]; g != nil {
			g.existing = append(g.existing, s)
		} else {
			gone = append(gone, s)
		}
	}
	keys := slices.Sorted(maps.Keys(groups))

	// 1. Per port set, update existing slices in place.
	for _, k := range keys {
		r.updateExisting(groups[k])
	}
	// The endpoints no existing slice holds, in a fixed order.
	for _, d := range pods {
		if d.hasAddr[r.fam] && d.placed[r.fam] != r.memo.gen {
			g := groups[d.portKey]
			g.remaining = append(g.remaining, &d.eps[r.fam])
		}
	}
	// 2, 3. Place them.
	for _, k := range keys {
		p := r.place(groups[k])
		plan.Create = append(plan.Create, p.Create...)
		plan.Update = append(plan.Update, p.Update...)
		plan.Delete = append(plan.Delete, p.Delete...)
	}
	plan.Delete = append(plan.Delete, gone...)

	// No endpoints at all: keep (or make) one empty placeholder slice.
	if len(existing) == len(plan.Delete) && len(plan.Create) == 0 {
		placeholder := r.newSlice(nil)
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
		if old.AddressType != r.addrType || !ownedBy(old, r.svc) {
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

// want returns the desired endpoint of group g matching ep, if it has not
// been placed in this call yet.
func (r *reconciler) want(g *portGroup, ep *api.Endpoint) *podDerived {
	if ep.TargetRef == nil {
		return nil
	}
	d := r.memo.lookup(ep.TargetRef.Name)
	if d == nil || !d.include || d.portKey != g.key || !d.hasAddr[r.fam] ||
		d.placed[r.fam] == r.memo.gen || d.eps[r.fam].key != endpointKeyOf(ep) {
		return nil
	}
	return d
}

// updateExisting is step 1 of Kubernetes' reconcileByPortMapping: remove
// endpoints that went from the group's slices and rewrite the ones that
// changed; slices left empty are deleted.
func (r *reconciler) updateExisting(g *portGroup) {
	g.byName = map[string]*api.EndpointSlice{}
	var matched []*desiredEndpoint // scratch, reused per slice
	for _, s := range g.existing {
		g.byName[s.Name] = s
		matched = matched[:0]
		changed := false
		for i := range s.Endpoints {
			ep := &s.Endpoints[i]
			d := r.want(g, ep)
			if d == nil {
				changed = true // gone, or a duplicate of one already kept
				continue
			}
			d.placed[r.fam] = r.memo.gen
			want := &d.eps[r.fam]
			matched = append(matched, want)
			if !want.matches(ep) {
				changed = true
			}
		}
		switch {
		case changed:
			if len(matched) == 0 {
				g.toDelete = append(g.toDelete, s.Name)
				continue
			}
			c := copySlice(s, r.labels)
			c.Endpoints = make([]api.Endpoint, 0, len(s.Endpoints))
			for _, want := range matched {
				c.Endpoints = append(c.Endpoints, want.endpoint())
			}
			g.byName[s.Name] = c
			g.toUpdate = append(g.toUpdate, s.Name)
		case labelsDiffer(s.Labels, r.labels):
			c := copySlice(s, r.labels)
			c.Endpoints = cloneEndpoints(s.Endpoints)
			g.byName[s.Name] = c
			g.toUpdate = append(g.toUpdate, s.Name)
		default:
			g.unchanged = append(g.unchanged, s.Name)
		}
	}
}

// place is steps 2 and 3 of Kubernetes' reconcileByPortMapping: the
// group's remaining endpoints fill the slices already being updated
// (fullest first), then, when less than a slice's worth is left, the
// unchanged slice they fill closest to full, then new slices.
func (r *reconciler) place(g *portGroup) Plan {
	remaining := g.remaining
	slices.SortFunc(remaining, func(a, b *desiredEndpoint) int { return compareKeys(a.key, b.key) })
	pop := func(s *api.EndpointSlice) {
		for len(remaining) > 0 && len(s.Endpoints) < r.maxPerSlice {
			s.Endpoints = append(s.Endpoints, remaining[0].endpoint())
			remaining = remaining[1:]
		}
	}

	if len(remaining) > 0 && len(g.toUpdate) > 0 {
		fill := make([]*api.EndpointSlice, 0, len(g.toUpdate))
		for _, name := range g.toUpdate {
			fill = append(fill, g.byName[name])
		}
		slices.SortStableFunc(fill, func(a, b *api.EndpointSlice) int {
			return cmp.Or(cmp.Compare(len(b.Endpoints), len(a.Endpoints)), strings.Compare(a.Name, b.Name))
		})
		for _, s := range fill {
			pop(s)
		}
	}

	var toCreate []*api.EndpointSlice
	for len(remaining) > 0 {
		var s *api.EndpointSlice
		if len(remaining) < r.maxPerSlice && len(g.unchanged) > 0 {
			if name := sliceToFill(g.unchanged, g.byName, len(remaining), r.maxPerSlice); name != "" {
				old := g.byName[name]
				s = copySlice(old, r.labels)
				s.Endpoints = cloneEndpoints(old.Endpoints)
				g.byName[name] = s
				g.unchanged = slices.DeleteFunc(g.unchanged, func(n string) bool { return n == name })
				g.toUpdate = append(g.toUpdate, name)
			}
		}
		if s == nil {
			s = r.newSlice(g.ports)
			toCreate = append(toCreate, s)
		}
		pop(s)
	}

	plan := Plan{Create: toCreate}
	slices.Sort(g.toUpdate)
	for _, name := range g.toUpdate {
		plan.Update = append(plan.Update, g.byName[name])
	}
	slices.Sort(g.toDelete)
	for _, name := range g.toDelete {
		plan.Delete = append(plan.Delete, g.byName[name])
	}
	return plan
}

func compareKeys(a, b epKey) int {
	return cmp.Or(strings.Compare(a.ns, b.ns), strings.Compare(a.name, b.name),
		strings.Compare(a.hostname, b.hostname), strings.Compare(a.addrs, b.addrs))
}

// copySlice copies s for an update: metadata (with labels set to a copy
// of labels), address type and ports; no endpoints. It shares no memory
// with s.
func copySlice(s *api.EndpointSlice, labels map[string]string) *api.EndpointSlice {
	c := &api.EndpointSlice{TypeMeta: s.TypeMeta, ObjectMeta: s.ObjectMeta, AddressType: s.AddressType}
	m := &c.ObjectMeta
	m.Labels = maps.Clone(labels)
	m.Annotations = maps.Clone(s.Annotations)
	m.DeletionTimestamp = clonePtr(s.DeletionTimestamp)
	m.DeletionGracePeriodSeconds = clonePtr(s.DeletionGracePeriodSeconds)
	m.OwnerReferences = make([]api.OwnerReference, len(s.OwnerReferences))
	for i, o := range s.OwnerReferences {
		o.Controller, o.BlockOwnerDeletion = clonePtr(o.Controller), clonePtr(o.BlockOwnerDeletion)
		m.OwnerReferences[i] = o
	}
	m.Finalizers = slices.Clone(s.Finalizers)
	m.ManagedFields = nil // Skiff does not track field managers
	c.Ports = clonePorts(s.Ports)
	return c
}

// cloneEndpoints deep-copies endpoints.
func cloneEndpoints(eps []api.Endpoint) []api.Endpoint {
	out := make([]api.Endpoint, len(eps))
	for i, ep := range eps {
		out[i] = api.Endpoint{
			Addresses: slices.Clone(ep.Addresses),
			Conditions: api.EndpointConditions{
				Ready: clonePtr(ep.Conditions.Ready), Serving: clonePtr(ep.Conditions.Serving),
				Terminating: clonePtr(ep.Conditions.Terminating),
			},
			Hostname:  clonePtr(ep.Hostname),
			TargetRef: clonePtr(ep.TargetRef),
			NodeName:  clonePtr(ep.NodeName),
			Zone:      clonePtr(ep.Zone),
		}
		if h := ep.Hints; h != nil {
			out[i].Hints = &api.EndpointHints{ForZones: slices.Clone(h.ForZones), ForNodes: slices.Clone(h.ForNodes)}
		}
	}
	return out
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

// newSlice is an empty slice of the Service for ports (nil: none) and the
// address type, to be created with a generated name.
func (r *reconciler) newSlice(ports []api.EndpointPort) *api.EndpointSlice {
	return &api.EndpointSlice{
		TypeMeta: api.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: api.ObjectMeta{
			GenerateName: r.svc.Name + "-",
			Namespace:    r.svc.Namespace,
			Labels:       maps.Clone(r.labels),
			OwnerReferences: []api.OwnerReference{{
				APIVersion:         "v1",
				Kind:               "Service",
				Name:               r.svc.Name,
				UID:                r.svc.UID,
				Controller:         ptr(true),
				BlockOwnerDeletion: ptr(true),
			}},
		},
		AddressType: r.addrType,
		Endpoints:   []api.Endpoint{},
		Ports:       clonePorts(ports),
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
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == api.ClusterIPNone {
		labels[LabelHeadless] = ""
	}
	labels[api.LabelServiceName] = svc.Name
	labels[api.LabelManagedBy] = ControllerName
	return labels, labelsDiffer(current, labels)
}

// labelsDiffer reports whether the non-reserved labels of current and
// want differ.
func labelsDiffer(current, want map[string]string) bool {
	n, m := 0, 0
	for k, v := range current {
		if isReservedLabel(k) {
			continue
		}
		n++
		if got, ok := want[k]; !ok || got != v {
			return true
		}
	}
	for k := range want {
		if !isReservedLabel(k) {
			m++
		}
	}
	return n != m
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
