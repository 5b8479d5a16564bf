package server

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent/nodeip"
)

// Built-in names.
const (
	kubernetesService = "kubernetes"
	defaultCIDRName   = "kubernetes"
	managedByAPI      = "skiff-apiserver"
)

// bootstrap creates the built-in objects through the API: the namespaces,
// the system PriorityClasses, the default ServiceCIDR, and the `kubernetes` Service with its
// EndpointSlice. Existing objects are kept (and corrected where the flags
// changed), so a restart is a no-op.
func (s *Server) bootstrap(ctx context.Context, c *client.Client) error {
	res := resourceTable(s.resource)
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		obj := &api.Namespace{ObjectMeta: api.ObjectMeta{Name: ns}}
		if err := createIfAbsent(ctx, c, res["namespaces"], "", obj); err != nil {
			return err
		}
	}
	// The built-in PriorityClasses, as kube-apiserver creates them.
	for _, pc := range api.SystemPriorityClasses() {
		if err := createIfAbsent(ctx, c, res["priorityclasses.scheduling.k8s.io"], "", pc); err != nil {
			return err
		}
	}
	cidr := &api.ServiceCIDR{
		ObjectMeta: api.ObjectMeta{Name: defaultCIDRName},
		Spec:       api.ServiceCIDRSpec{CIDRs: []string{s.parsed.ServiceCIDR.String()}},
	}
	if err := s.ensureServiceCIDR(ctx, c, res["servicecidrs.networking.k8s.io"], cidr); err != nil {
		return err
	}

	port, _ := strconv.Atoi(s.parsed.ListenPort)
	if p := s.ln.Addr(); p != nil {
		if _, ps, err := splitPort(p.String()); err == nil {
			port = ps
		}
	}
	svc := &api.Service{
		ObjectMeta: api.ObjectMeta{Name: kubernetesService, Namespace: "default",
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: api.ServiceSpec{
			Type:      api.ServiceTypeClusterIP,
			ClusterIP: s.hook.IPs().FirstIP().String(),
			Ports: []api.ServicePort{{Name: "https", Protocol: api.ProtocolTCP, Port: 443,
				TargetPort: api.FromInt32(int32(port))}},
		},
	}
	if err := createIfAbsent(ctx, c, res["services"], "default", svc); err != nil {
		return err
	}
	addr, ok := s.advertiseAddr()
	if !ok {
		s.log.Warn("no non-loopback address to advertise: the kubernetes Service has no endpoints; pass --node-ip")
		return nil
	}
	p32 := int32(port)
	ready := true
	name := "https"
	proto := api.ProtocolTCP
	slice := &api.EndpointSlice{
		ObjectMeta: api.ObjectMeta{Name: kubernetesService, Namespace: "default", Labels: map[string]string{
			"kubernetes.io/service-name":             kubernetesService,
			"endpointslice.kubernetes.io/managed-by": managedByAPI,
		}},
		AddressType: addressType(addr),
		Endpoints: []api.Endpoint{{Addresses: []string{addr.String()},
			Conditions: api.EndpointConditions{Ready: &ready, Serving: &ready}}},
		Ports: []api.EndpointPort{{Name: &name, Protocol: &proto, Port: &p32}},
	}
	if err := upsert(ctx, c, res["endpointslices.discovery.k8s.io"], "default", slice); err != nil {
		return err
	}
	// The Endpoints of the same address, as Kubernetes' API server writes
	// it: labelled skip-mirror, since the slice above is already written.
	ep := &api.Endpoints{
		ObjectMeta: api.ObjectMeta{Name: kubernetesService, Namespace: "default",
			Labels: map[string]string{api.LabelSkipMirror: "true"}},
		Subsets: []api.EndpointSubset{{
			Addresses: []api.EndpointAddress{{IP: addr.String()}},
			Ports:     []api.EndpointsPort{{Name: name, Port: p32, Protocol: proto}},
		}},
	}
	return upsert(ctx, c, res["endpoints"], "default", ep)
}

func (s *Server) ensureServiceCIDR(ctx context.Context, c *client.Client, info *api.ResourceInfo, want *api.ServiceCIDR) error {
	var have api.ServiceCIDR
	err := c.Get(ctx, info, "", want.Name, &have)
	switch {
	case client.IsNotFound(err):
		return c.Create(ctx, info, "", want)
	case err != nil:
		return err
	}
	if len(have.Spec.CIDRs) != 1 || have.Spec.CIDRs[0] != want.Spec.CIDRs[0] {
		s.log.Warn("the default ServiceCIDR differs from --service-cidr; ClusterIPs come from the flag",
			"stored", have.Spec.CIDRs, "flag", want.Spec.CIDRs)
	}
	return nil
}

// advertiseAddr is the address the `kubernetes` Service points at: the
// first --node-ip, else a specific --listen host, else the first global
// unicast address of an up interface. EndpointSlices may not hold loopback
// addresses, so there may be none.
func (s *Server) advertiseAddr() (netip.Addr, bool) {
	if len(s.parsed.NodeIPs) > 0 {
		return s.parsed.NodeIPs[0], true
	}
	if a, err := netip.ParseAddr(s.parsed.ListenHost); err == nil && !a.IsUnspecified() {
		return a, !a.IsLoopback()
	}
	return nodeip.FirstGlobalIPv4()
}

func addressType(a netip.Addr) string {
	if a.Is6() && !a.Is4In6() {
		return "IPv6"
	}
	return "IPv4"
}

func createIfAbsent(ctx context.Context, c *client.Client, info *api.ResourceInfo, ns string, obj api.Object) error {
	if info == nil {
		return fmt.Errorf("resource table lacks %T", obj)
	}
	err := c.Create(ctx, info, ns, obj)
	if client.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// upsert creates obj or replaces the stored one with it.
func upsert(ctx context.Context, c *client.Client, info *api.ResourceInfo, ns string, obj api.Object) error {
	err := c.Create(ctx, info, ns, obj)
	if !client.IsAlreadyExists(err) {
		return err
	}
	obj.GetObjectMeta().ResourceVersion = ""
	return c.Update(ctx, info, ns, obj)
}

// resourceTable indexes resources by "resource" (core) or "resource.group".
func resourceTable(rs []*api.ResourceInfo) map[string]*api.ResourceInfo {
	m := make(map[string]*api.ResourceInfo, len(rs))
	for _, r := range rs {
		k := r.Resource
		if r.Group != "" {
			k += "." + r.Group
		}
		m[k] = r
	}
	return m
}

func splitPort(hostport string) (string, int, error) {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return "", 0, err
	}
	return ap.Addr().String(), int(ap.Port()), nil
}
