package dns

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Store is the in-memory index the DNS handler answers from. The watch-cache
// wiring feeds it slim objects through the Upsert, Delete and Replace methods
// and calls SetSynced(true) once every resource has been listed; until then
// the handler answers SERVFAIL for cluster names.
//
// All methods are safe for concurrent use. Writers take one write lock;
// the handler takes the read lock only for its map lookups. Objects passed to
// the Store are owned by it afterwards: the caller must not modify them (or
// the slices in them) later.
type Store struct {
	synced atomic.Bool
	serial atomic.Uint32 // modification counter, the SOA serial

	mu sync.RWMutex
	// mu protects the fields below.
	services   map[string]*svcEntry    // "<svc>.<ns>" -> entry
	sliceSvc   map[string]string       // "<slice>.<ns>" -> "<svc>.<ns>" of its entry
	nsServices map[string]int          // namespace -> number of Services in it
	reverse    map[netip.Addr][]ptrRef // address -> names (copy-on-write slices)
	pods       map[string][]netip.Addr // "<pod>.<ns>" -> the pod's IPs
	podIPs     map[podIP]int32         // (namespace, IP) -> number of pods with it
	nsPods     map[string]int          // namespace -> number of pods in it
}

// svcEntry holds a Service, its slices and the view derived from both. An
// entry exists while either the Service or one of its slices does (slices
// may arrive before their Service).
type svcEntry struct {
	svc    *Service
	slices []*EndpointSlice // sorted by name
	view   *svcView         // nil while svc is nil
}

// ptrRef names the target of a PTR record: <label>.<key>.svc.<domain>, or
// <key>.svc.<domain> for an empty label (a ClusterIP).
type ptrRef struct {
	key   string
	label string
}

type podIP struct {
	ns   string
	addr netip.Addr
}

// NewStore returns an empty, unsynced Store.
func NewStore() *Store {
	return &Store{
		services:   make(map[string]*svcEntry),
		sliceSvc:   make(map[string]string),
		nsServices: make(map[string]int),
		reverse:    make(map[netip.Addr][]ptrRef),
		pods:       make(map[string][]netip.Addr),
		podIPs:     make(map[podIP]int32),
		nsPods:     make(map[string]int),
	}
}

// Synced reports whether the Store holds a complete picture of the cluster.
func (s *Store) Synced() bool { return s.synced.Load() }

// SetSynced marks the Store complete (after the initial lists) or incomplete
// (while a watch is re-listing from scratch).
func (s *Store) SetSynced(synced bool) {
	s.synced.Store(synced)
	s.serial.Add(1)
}

// Serial is a counter that changes with every modification; the SOA serial.
func (s *Store) Serial() uint32 { return s.serial.Load() }

// objectKey validates a namespace and name and returns "<name>.<ns>",
// lowercase. Kubernetes names of Services, Pods and namespaces are DNS labels,
// so the key is unambiguous and is a substring of the query name.
func objectKey(kind, ns, name string) (string, error) {
	if ns == "" || name == "" || strings.ContainsAny(ns, ".\\") || strings.ContainsAny(name, "\\") {
		return "", fmt.Errorf("dns: %s %q in namespace %q: %w", kind, name, ns, ErrInvalidObject)
	}
	return lowerName(name) + "." + lowerName(ns), nil
}

// UpsertService adds or replaces a Service.
func (s *Store) UpsertService(svc Service) error {
	key, err := objectKey("service", svc.Namespace, svc.Name)
	if err != nil {
		return err
	}
	if strings.Contains(svc.Name, ".") {
		return fmt.Errorf("dns: service %q: %w", svc.Name, ErrInvalidObject)
	}
	svc.Namespace, svc.Name = lowerName(svc.Namespace), lowerName(svc.Name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.upsertServiceLocked(key, &svc)
	return nil
}

func (s *Store) upsertServiceLocked(key string, svc *Service) {
	e := s.services[key]
	if e == nil {
		e = &svcEntry{}
		s.services[key] = e
	}
	if e.svc == nil {
		s.nsServices[svc.Namespace]++
	}
	e.svc = svc
	s.rebuildLocked(key, e)
}

// DeleteService removes a Service; its slices stay until they are deleted.
func (s *Store) DeleteService(namespace, name string) {
	key, err := objectKey("service", namespace, name)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleteServiceLocked(key)
}

func (s *Store) deleteServiceLocked(key string) {
	e := s.services[key]
	if e == nil || e.svc == nil {
		return
	}
	ns := e.svc.Namespace
	if s.nsServices[ns]--; s.nsServices[ns] <= 0 {
		delete(s.nsServices, ns)
	}
	e.svc = nil
	s.rebuildLocked(key, e)
}

// UpsertEndpointSlice adds or replaces an EndpointSlice. A slice whose
// Service is not (yet) in the Store is kept and used once the Service comes.
func (s *Store) UpsertEndpointSlice(es EndpointSlice) error {
	sliceKey, err := objectKey("endpointslice", es.Namespace, es.Name)
	if err != nil {
		return err
	}
	svcKey, err := objectKey("endpointslice service", es.Namespace, es.Service)
	if err != nil {
		return err
	}
	es.Namespace, es.Name, es.Service = lowerName(es.Namespace), lowerName(es.Name), lowerName(es.Service)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.upsertSliceLocked(sliceKey, svcKey, &es)
	return nil
}

func (s *Store) upsertSliceLocked(sliceKey, svcKey string, es *EndpointSlice) {
	if old, ok := s.sliceSvc[sliceKey]; ok && old != svcKey {
		s.deleteSliceLocked(sliceKey)
	}
	s.sliceSvc[sliceKey] = svcKey
	e := s.services[svcKey]
	if e == nil {
		e = &svcEntry{}
		s.services[svcKey] = e
	}
	i, found := slices.BinarySearchFunc(e.slices, es.Name, func(x *EndpointSlice, n string) int {
		return strings.Compare(x.Name, n)
	})
	if found {
		e.slices[i] = es
	} else {
		e.slices = slices.Insert(e.slices, i, es)
	}
	s.rebuildLocked(svcKey, e)
}

// DeleteEndpointSlice removes an EndpointSlice.
func (s *Store) DeleteEndpointSlice(namespace, name string) {
	sliceKey, err := objectKey("endpointslice", namespace, name)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deleteSliceLocked(sliceKey)
}

// deleteSliceLocked removes the slice with key "<slice>.<ns>" (namespaces
// have no dots, so the name is the key up to its last dot).
func (s *Store) deleteSliceLocked(sliceKey string) {
	name, _ := lastLabel(sliceKey)
	svcKey, ok := s.sliceSvc[sliceKey]
	if !ok {
		return
	}
	delete(s.sliceSvc, sliceKey)
	e := s.services[svcKey]
	if e == nil {
		return
	}
	e.slices = slices.DeleteFunc(e.slices, func(x *EndpointSlice) bool { return x.Name == name })
	s.rebuildLocked(svcKey, e)
}

// rebuildLocked derives e's view again and updates the reverse index. It
// drops e when neither the Service nor a slice is left.
func (s *Store) rebuildLocked(key string, e *svcEntry) {
	s.serial.Add(1)
	old := e.view
	var nv *svcView
	if e.svc != nil {
		nv = buildView(key, e.svc, e.slices)
	}
	e.view = nv
	if old != nil {
		s.reverseLocked(old, false)
	}
	if nv != nil {
		s.reverseLocked(nv, true)
	}
	if e.svc == nil && len(e.slices) == 0 {
		delete(s.services, key)
	}
}

// reverseLocked adds (or removes) v's PTR names. The slices in s.reverse are
// never modified in place, since a handler may hold one after unlocking.
func (s *Store) reverseLocked(v *svcView, add bool) {
	each := func(a netip.Addr, label string) {
		ref := ptrRef{key: v.key, label: label}
		cur := s.reverse[a]
		if add {
			if slices.Contains(cur, ref) {
				return
			}
			next := make([]ptrRef, len(cur), len(cur)+1)
			copy(next, cur)
			s.reverse[a] = append(next, ref)
			return
		}
		i := slices.Index(cur, ref)
		if i < 0 {
			return
		}
		if len(cur) == 1 {
			delete(s.reverse, a)
			return
		}
		next := make([]ptrRef, 0, len(cur)-1)
		next = append(next, cur[:i]...)
		s.reverse[a] = append(next, cur[i+1:]...)
	}
	switch v.kind {
	case kindClusterIP:
		for _, a := range v.v4 {
			each(a, "")
		}
		for _, a := range v.v6 {
			each(a, "")
		}
	case kindHeadless:
		for _, h := range v.hosts {
			each(h.addr, h.label)
		}
	}
}

// UpsertPod adds or replaces a Pod.
func (s *Store) UpsertPod(p Pod) error {
	key, err := objectKey("pod", p.Namespace, p.Name)
	if err != nil {
		return err
	}
	ips := make([]netip.Addr, 0, len(p.IPs))
	for _, a := range p.IPs {
		if a = a.Unmap().WithZone(""); a.IsValid() && !slices.Contains(ips, a) {
			ips = append(ips, a)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.upsertPodLocked(key, lowerName(p.Namespace), ips)
	return nil
}

func (s *Store) upsertPodLocked(key, ns string, ips []netip.Addr) {
	old, existed := s.pods[key]
	if existed {
		s.podIPsLocked(ns, old, -1)
	} else {
		s.nsPods[ns]++
	}
	s.pods[key] = ips
	s.podIPsLocked(ns, ips, 1)
	s.serial.Add(1)
}

// DeletePod removes a Pod.
func (s *Store) DeletePod(namespace, name string) {
	key, err := objectKey("pod", namespace, name)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deletePodLocked(key, lowerName(namespace))
}

func (s *Store) deletePodLocked(key, ns string) {
	old, ok := s.pods[key]
	if !ok {
		return
	}
	delete(s.pods, key)
	s.podIPsLocked(ns, old, -1)
	if s.nsPods[ns]--; s.nsPods[ns] <= 0 {
		delete(s.nsPods, ns)
	}
	s.serial.Add(1)
}

func (s *Store) podIPsLocked(ns string, ips []netip.Addr, delta int32) {
	for _, a := range ips {
		k := podIP{ns: ns, addr: a}
		if n := s.podIPs[k] + delta; n > 0 {
			s.podIPs[k] = n
		} else {
			delete(s.podIPs, k)
		}
	}
}

// ReplaceServices makes svcs the complete set of Services (after a re-list):
// Services not in it are deleted. Invalid objects are skipped and reported.
func (s *Store) ReplaceServices(svcs []Service) error {
	keys := make(map[string]*Service, len(svcs))
	var errs []error
	for i := range svcs {
		key, err := objectKey("service", svcs[i].Namespace, svcs[i].Name)
		if err == nil && strings.Contains(svcs[i].Name, ".") {
			err = fmt.Errorf("dns: service %q: %w", svcs[i].Name, ErrInvalidObject)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		svc := &svcs[i]
		svc.Namespace, svc.Name = lowerName(svc.Namespace), lowerName(svc.Name)
		keys[key] = svc
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, e := range s.services {
		if _, ok := keys[key]; !ok && e.svc != nil {
			s.deleteServiceLocked(key)
		}
	}
	for key, svc := range keys {
		s.upsertServiceLocked(key, svc)
	}
	return errors.Join(errs...)
}

// ReplaceEndpointSlices makes eps the complete set of EndpointSlices.
func (s *Store) ReplaceEndpointSlices(eps []EndpointSlice) error {
	type item struct {
		svcKey string
		es     *EndpointSlice
	}
	keys := make(map[string]item, len(eps))
	var errs []error
	for i := range eps {
		sk, err := objectKey("endpointslice", eps[i].Namespace, eps[i].Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		vk, err := objectKey("endpointslice service", eps[i].Namespace, eps[i].Service)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		es := &eps[i]
		es.Namespace, es.Name, es.Service = lowerName(es.Namespace), lowerName(es.Name), lowerName(es.Service)
		keys[sk] = item{svcKey: vk, es: es}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for sk := range s.sliceSvc {
		if _, ok := keys[sk]; !ok {
			s.deleteSliceLocked(sk)
		}
	}
	for sk, it := range keys {
		s.upsertSliceLocked(sk, it.svcKey, it.es)
	}
	return errors.Join(errs...)
}

// ReplacePods makes pods the complete set of Pods.
func (s *Store) ReplacePods(pods []Pod) error {
	type item struct {
		ns  string
		ips []netip.Addr
	}
	keys := make(map[string]item, len(pods))
	var errs []error
	for _, p := range pods {
		key, err := objectKey("pod", p.Namespace, p.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ips := make([]netip.Addr, 0, len(p.IPs))
		for _, a := range p.IPs {
			if a = a.Unmap().WithZone(""); a.IsValid() && !slices.Contains(ips, a) {
				ips = append(ips, a)
			}
		}
		keys[key] = item{ns: lowerName(p.Namespace), ips: ips}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for key := range s.pods {
		if _, ok := keys[key]; !ok {
			_, ns := lastLabel(key)
			s.deletePodLocked(key, ns)
		}
	}
	for key, it := range keys {
		s.upsertPodLocked(key, it.ns, it.ips)
	}
	return errors.Join(errs...)
}

// Read side, used by the handler. Each takes the read lock once; what it
// returns is immutable.

// service returns the view of "<svc>.<ns>", or nil.
func (s *Store) service(key string) *svcView {
	s.mu.RLock()
	e := s.services[key]
	var v *svcView
	if e != nil {
		v = e.view
	}
	s.mu.RUnlock()
	return v
}

// hasNamespace reports whether <ns>.svc.<domain> has any Service under it.
func (s *Store) hasServiceNamespace(ns string) bool {
	s.mu.RLock()
	n := s.nsServices[ns]
	s.mu.RUnlock()
	return n > 0
}

// hasPodNamespace reports whether <ns>.pod.<domain> has any pod under it.
func (s *Store) hasPodNamespace(ns string) bool {
	s.mu.RLock()
	n := s.nsPods[ns]
	s.mu.RUnlock()
	return n > 0
}

// podExists reports whether a pod in namespace ns has address a.
func (s *Store) podExists(ns string, a netip.Addr) bool {
	s.mu.RLock()
	n := s.podIPs[podIP{ns: ns, addr: a}]
	s.mu.RUnlock()
	return n > 0
}

// ptr returns the PTR names of address a (shared; do not modify).
func (s *Store) ptr(a netip.Addr) []ptrRef {
	s.mu.RLock()
	r := s.reverse[a]
	s.mu.RUnlock()
	return r
}

// StoreStats counts what a Store holds.
type StoreStats struct {
	Services       int
	EndpointSlices int
	Pods           int
	ReverseAddrs   int
}

// Stats returns counts of what the Store holds.
func (s *Store) Stats() StoreStats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := StoreStats{EndpointSlices: len(s.sliceSvc), Pods: len(s.pods), ReverseAddrs: len(s.reverse)}
	for _, e := range s.services {
		if e.svc != nil {
			st.Services++
		}
	}
	return st
}
