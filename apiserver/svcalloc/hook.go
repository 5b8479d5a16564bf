package svcalloc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/api/field"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/apiserver/ipalloc"
	"github.com/skiff-dev/skiff/apiserver/portalloc"
	"github.com/skiff-dev/skiff/store"
)

// Labels Kubernetes puts on IPAddress objects.
const (
	LabelIPFamily  = "ipaddress.kubernetes.io/ip-family"
	LabelManagedBy = "ipaddress.kubernetes.io/managed-by"
	ManagedBy      = "ipallocator.k8s.io"
)

// ObjectWriter writes API objects inside a store transaction; the API
// server implements it.
type ObjectWriter interface {
	PutObject(tx store.Txn, info *api.ResourceInfo, obj api.Object) error
	DeleteObject(tx store.Txn, info *api.ResourceInfo, ns, name string) error
}

// Hook allocates for Services and keeps user writes of IPAddress objects in
// the index. Register it for "services" and "ipaddresses.networking.k8s.io".
type Hook struct {
	w       ObjectWriter
	ips     *ipalloc.Allocator
	ports   *portalloc.Allocator
	ipInfo  *api.ResourceInfo
	svcInfo *api.ResourceInfo
}

// New returns a hook over the two allocators. resources must contain the
// services and ipaddresses entries.
func New(w ObjectWriter, ips *ipalloc.Allocator, ports *portalloc.Allocator, resources []*api.ResourceInfo) (*Hook, error) {
	h := &Hook{w: w, ips: ips, ports: ports}
	for _, r := range resources {
		switch {
		case r.Group == "" && r.Resource == "services":
			h.svcInfo = r
		case r.Group == "networking.k8s.io" && r.Resource == "ipaddresses":
			h.ipInfo = r
		}
	}
	if h.svcInfo == nil || h.ipInfo == nil {
		return nil, errors.New("svcalloc: resource table lacks services or ipaddresses")
	}
	return h, nil
}

// IPs is the ClusterIP allocator (for status and metrics).
func (h *Hook) IPs() *ipalloc.Allocator { return h.ips }

// Ports is the NodePort allocator.
func (h *Hook) Ports() *portalloc.Allocator { return h.ports }

// Admit implements apiserver.TxnHook.
func (h *Hook) Admit(ctx context.Context, tx store.Txn, a apiserver.Admission) (apiserver.Outcome, error) {
	switch o := a.Obj.(type) {
	case *api.Service:
		var old *api.Service
		if a.Old != nil {
			old, _ = a.Old.(*api.Service)
		}
		return h.admitService(tx, a.Op, o, old)
	case *api.IPAddress:
		return h.admitIPAddress(tx, a.Op, o)
	}
	return apiserver.Outcome{}, nil
}

// change collects what one transaction took and freed.
type change struct {
	tookIPs   []netip.Addr
	tookPorts []int
	freeIPs   []netip.Addr
	freePorts []int
}

func (c *change) outcome(h *Hook) apiserver.Outcome {
	return apiserver.Outcome{
		OnCommit: func() {
			for _, ip := range c.freeIPs {
				h.ips.Release(ip)
			}
			for _, p := range c.freePorts {
				h.ports.Release(p)
			}
		},
		OnAbort: func() {
			for _, ip := range c.tookIPs {
				h.ips.Release(ip)
			}
			for _, p := range c.tookPorts {
				h.ports.Release(p)
			}
		},
	}
}

// abort undoes what c took and returns err (used when Admit itself fails,
// since then the API server may not run any Outcome).
func (c *change) abort(h *Hook, err error) (apiserver.Outcome, error) {
	c.outcome(h).OnAbort()
	return apiserver.Outcome{}, err
}

func wantsIP(s *api.Service) bool {
	return s.Spec.Type != api.ServiceTypeExternalName && s.Spec.ClusterIP != api.ClusterIPNone
}

func wantsNodePorts(s *api.Service) bool {
	if s.Spec.Type == api.ServiceTypeNodePort {
		return true
	}
	if s.Spec.Type == api.ServiceTypeLoadBalancer {
		return s.Spec.AllocateLoadBalancerNodePorts == nil || *s.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

func wantsHealthCheck(s *api.Service) bool {
	return s.Spec.Type == api.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == api.ServiceTrafficPolicyLocal
}

func (h *Hook) admitService(tx store.Txn, op apiserver.Op, svc, old *api.Service) (apiserver.Outcome, error) {
	c := &change{}
	switch op {
	case apiserver.OpCreate:
		if err := h.allocIP(tx, c, svc, nil); err != nil {
			return c.abort(h, err)
		}
		if err := h.allocPorts(c, svc, nil); err != nil {
			return c.abort(h, err)
		}
	case apiserver.OpUpdate:
		if old == nil {
			return apiserver.Outcome{}, nil
		}
		if err := h.allocIP(tx, c, svc, old); err != nil {
			return c.abort(h, err)
		}
		if err := h.allocPorts(c, svc, old); err != nil {
			return c.abort(h, err)
		}
	case apiserver.OpDelete:
		if err := h.freeIP(tx, c, svc); err != nil {
			return apiserver.Outcome{}, err
		}
		c.freePorts = append(c.freePorts, servicePorts(svc)...)
	}
	return c.outcome(h), nil
}

// allocIP gives svc its ClusterIP (create, or an update that needs one) and
// frees the old one when the update drops it.
func (h *Hook) allocIP(tx store.Txn, c *change, svc, old *api.Service) error {
	if old != nil && wantsIP(old) && old.Spec.ClusterIP != "" {
		if wantsIP(svc) {
			// The ClusterIP is immutable: keep the old one when the update
			// leaves it empty (kubectl replace, a PUT without it).
			if svc.Spec.ClusterIP == "" {
				svc.Spec.ClusterIP = old.Spec.ClusterIP
			}
			if svc.Spec.ClusterIP != old.Spec.ClusterIP {
				return apiserver.NewInvalid("Service", svc.Name, field.ErrorList{
					field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), svc.Spec.ClusterIP, "may not change once set"),
				})
			}
			setClusterIPs(svc)
			return nil
		}
		// Becoming headless is forbidden by validation; ExternalName frees.
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		return h.freeIP(tx, c, old)
	}
	if !wantsIP(svc) {
		if svc.Spec.ClusterIP == api.ClusterIPNone {
			svc.Spec.ClusterIPs = []string{api.ClusterIPNone}
		}
		return nil
	}
	var ip netip.Addr
	if svc.Spec.ClusterIP != "" {
		want, err := netip.ParseAddr(svc.Spec.ClusterIP)
		if err != nil {
			return apiserver.NewInvalid("Service", svc.Name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "clusterIPs"), []string{svc.Spec.ClusterIP}, "must be a valid IP address"),
			})
		}
		if err := h.ips.Allocate(want); err != nil {
			return apiserver.NewInvalid("Service", svc.Name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "clusterIPs"), []string{svc.Spec.ClusterIP},
					fmt.Sprintf("failed to allocate IP %s: %v", want, err)),
			})
		}
		ip = want
	} else {
		next, err := h.ips.AllocateNext()
		if err != nil {
			return apiserver.NewInternal(fmt.Errorf("failed to allocate IP %s/%s: %w", svc.Namespace, svc.Name, err))
		}
		ip = next
	}
	c.tookIPs = append(c.tookIPs, ip)
	svc.Spec.ClusterIP = ip.String()
	setClusterIPs(svc)
	// The IPAddress object must not exist yet (a user may have made one).
	if _, ok, err := tx.Get(apiserver.KeyFor(h.ipInfo, "", ip.String())); err != nil {
		return err
	} else if ok {
		return apiserver.NewInvalid("Service", svc.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "clusterIPs"), []string{ip.String()},
				fmt.Sprintf("failed to allocate IP %s: %v", ip, ipalloc.ErrAllocated)),
		})
	}
	return h.w.PutObject(tx, h.ipInfo, ipAddressFor(ip, svc))
}

func setClusterIPs(svc *api.Service) {
	svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	fam := "IPv4"
	if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil && ip.Is6() {
		fam = "IPv6"
	}
	svc.Spec.IPFamilies = []string{fam}
	if svc.Spec.IPFamilyPolicy == nil {
		p := "SingleStack"
		svc.Spec.IPFamilyPolicy = &p
	}
}

func ipAddressFor(ip netip.Addr, svc *api.Service) *api.IPAddress {
	fam := "IPv4"
	if ip.Is6() {
		fam = "IPv6"
	}
	return &api.IPAddress{
		TypeMeta: api.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "IPAddress"},
		ObjectMeta: api.ObjectMeta{
			Name:   ip.String(),
			Labels: map[string]string{LabelIPFamily: fam, LabelManagedBy: ManagedBy},
		},
		Spec: api.IPAddressSpec{ParentRef: &api.ParentReference{
			Resource: "services", Namespace: svc.Namespace, Name: svc.Name,
		}},
	}
}

func (h *Hook) freeIP(tx store.Txn, c *change, svc *api.Service) error {
	ip, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil {
		return nil // headless or ExternalName: nothing held
	}
	c.freeIPs = append(c.freeIPs, ip)
	err = h.w.DeleteObject(tx, h.ipInfo, "", ip.String())
	if err != nil && !isNotFound(err) {
		return err
	}
	return nil
}

func isNotFound(err error) bool {
	var se *apiserver.StatusError
	if errors.As(err, &se) {
		return se.Status().Code == 404
	}
	return errors.Is(err, store.ErrNotFound)
}

// servicePorts lists every NodePort (and the health-check port) svc holds.
func servicePorts(svc *api.Service) []int {
	var out []int
	seen := map[int32]bool{}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 && !seen[p.NodePort] {
			seen[p.NodePort] = true
			out = append(out, int(p.NodePort))
		}
	}
	if svc.Spec.HealthCheckNodePort != 0 && !seen[svc.Spec.HealthCheckNodePort] {
		out = append(out, int(svc.Spec.HealthCheckNodePort))
	}
	return out
}

// allocPorts gives every port of a NodePort/LoadBalancer Service a NodePort
// (keeping the ones an update already held), allocates the health-check
// port for externalTrafficPolicy Local, and frees what an update drops.
func (h *Hook) allocPorts(c *change, svc, old *api.Service) error {
	held := map[int]bool{}
	if old != nil {
		for _, p := range servicePorts(old) {
			held[p] = true
		}
	}
	kept := map[int]bool{}
	nodePath := func(i int) *field.Path { return field.NewPath("spec", "ports").Index(i).Child("nodePort") }
	take := func(p int, path *field.Path) error {
		if held[p] || kept[p] {
			kept[p] = true
			return nil
		}
		if err := h.ports.Allocate(p); err != nil {
			return apiserver.NewInvalid("Service", svc.Name, field.ErrorList{field.Invalid(path, p, err.Error())})
		}
		c.tookPorts = append(c.tookPorts, p)
		kept[p] = true
		return nil
	}
	next := func(what string) (int, error) {
		p, err := h.ports.AllocateNext()
		if err != nil {
			return 0, apiserver.NewInternal(fmt.Errorf("failed to allocate a %s: %w", what, err))
		}
		c.tookPorts = append(c.tookPorts, p)
		kept[p] = true
		return p, nil
	}
	if wantsNodePorts(svc) {
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort == 0 && old != nil {
				p.NodePort = oldNodePort(old, p)
			}
			if p.NodePort != 0 {
				if err := take(int(p.NodePort), nodePath(i)); err != nil {
					return err
				}
				continue
			}
			n, err := next("nodePort")
			if err != nil {
				return err
			}
			p.NodePort = int32(n)
		}
	} else if svc.Spec.Type != api.ServiceTypeLoadBalancer {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	if wantsHealthCheck(svc) {
		if svc.Spec.HealthCheckNodePort == 0 && old != nil && wantsHealthCheck(old) {
			svc.Spec.HealthCheckNodePort = old.Spec.HealthCheckNodePort
		}
		if svc.Spec.HealthCheckNodePort != 0 {
			if err := take(int(svc.Spec.HealthCheckNodePort), field.NewPath("spec", "healthCheckNodePort")); err != nil {
				return err
			}
		} else {
			n, err := next("healthCheckNodePort")
			if err != nil {
				return err
			}
			svc.Spec.HealthCheckNodePort = int32(n)
		}
	} else {
		svc.Spec.HealthCheckNodePort = 0
	}
	for p := range held {
		if !kept[p] {
			c.freePorts = append(c.freePorts, p)
		}
	}
	return nil
}

// oldNodePort finds the NodePort an update's port held before, matching by
// name, then by port and protocol (as Kubernetes does).
func oldNodePort(old *api.Service, p *api.ServicePort) int32 {
	for _, q := range old.Spec.Ports {
		if p.Name != "" && q.Name == p.Name && q.Protocol == p.Protocol {
			return q.NodePort
		}
	}
	for _, q := range old.Spec.Ports {
		if q.Port == p.Port && q.Protocol == p.Protocol {
			return q.NodePort
		}
	}
	return 0
}

// admitIPAddress keeps direct writes of IPAddress objects (by users or by
// Repair) in the index.
func (h *Hook) admitIPAddress(tx store.Txn, op apiserver.Op, ipa *api.IPAddress) (apiserver.Outcome, error) {
	ip, err := netip.ParseAddr(ipa.Name)
	if err != nil || !h.ips.InRange(ip) {
		return apiserver.Outcome{}, nil // outside the range: not ours to index
	}
	switch op {
	case apiserver.OpCreate:
		if err := h.ips.Allocate(ip); err != nil {
			return apiserver.Outcome{}, apiserver.NewAlreadyExists("ipaddresses.networking.k8s.io", ipa.Name)
		}
		return apiserver.Outcome{OnAbort: func() { h.ips.Release(ip) }}, nil
	case apiserver.OpDelete:
		// The IPAddress of a live Service that holds the IP stays: freeing
		// it would let another Service take the same ClusterIP. (The
		// hook's own deletes go through ObjectWriter, not through here.)
		if holder, err := h.liveParent(tx, ipa); err != nil {
			return apiserver.Outcome{}, err
		} else if holder != "" {
			return apiserver.Outcome{}, apiserver.NewConflict("ipaddresses.networking.k8s.io", ipa.Name,
				fmt.Errorf("the IP is in use by Service %s", holder))
		}
		return apiserver.Outcome{OnCommit: func() { h.ips.Release(ip) }}, nil
	}
	return apiserver.Outcome{}, nil
}

// liveParent returns "ns/name" of the Service ipa's parentRef names when
// that Service exists and holds ipa's IP, else "".
func (h *Hook) liveParent(tx store.Txn, ipa *api.IPAddress) (string, error) {
	ref := ipa.Spec.ParentRef
	if ref == nil || ref.Resource != "services" || ref.Name == "" {
		return "", nil
	}
	kv, ok, err := tx.Get(apiserver.KeyFor(h.svcInfo, ref.Namespace, ref.Name))
	if err != nil || !ok {
		return "", err
	}
	var svc api.Service
	if err := json.Unmarshal(kv.Value, &svc); err != nil {
		return "", fmt.Errorf("svcalloc: decode %s: %w", kv.Key, err)
	}
	held, err1 := netip.ParseAddr(svc.Spec.ClusterIP)
	ip, err2 := netip.ParseAddr(ipa.Name)
	if !wantsIP(&svc) || err1 != nil || err2 != nil || held != ip {
		return "", nil
	}
	return ref.Namespace + "/" + ref.Name, nil
}
