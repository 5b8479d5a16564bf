package svcalloc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/apiserver/ipalloc"
	"github.com/skiff-dev/skiff/apiserver/portalloc"
	"github.com/skiff-dev/skiff/apiserver/svcalloc"
	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

var (
	resources = api.Resources()
	svcInfo   = api.Lookup(resources, "v1", "services")
	ipInfo    = api.Lookup(resources, "networking.k8s.io/v1", "ipaddresses")
)

// writer is the minimal ObjectWriter: JSON under the API server's keys.
type writer struct{}

func (writer) PutObject(tx store.Txn, info *api.ResourceInfo, obj api.Object) error {
	m := obj.GetObjectMeta()
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return tx.Put(apiserver.KeyFor(info, m.Namespace, m.Name), b)
}

func (writer) DeleteObject(tx store.Txn, info *api.ResourceInfo, ns, name string) error {
	err := tx.Delete(apiserver.KeyFor(info, ns, name))
	if errors.Is(err, store.ErrNotFound) {
		return apiserver.NewNotFound(info.Resource, name)
	}
	return err
}

// fixture is a hook over a /24 (static band: the first 16 addresses) and
// ports 30000-30099 (static band: the first 16), on a real bbolt store.
type fixture struct {
	t     *testing.T
	st    *store.Bolt
	h     *svcalloc.Hook
	ips   *ipalloc.Allocator
	ports *portalloc.Allocator
}

func newFixture(t *testing.T, cidr string, portBase, portSize int) *fixture {
	t.Helper()
	ips, err := ipalloc.New(netip.MustParsePrefix(cidr))
	if err != nil {
		t.Fatal(err)
	}
	ports, err := portalloc.New(portBase, portSize)
	if err != nil {
		t.Fatal(err)
	}
	h, err := svcalloc.New(writer{}, ips, ports, resources)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, st: storetest.MustOpenBolt(t), h: h, ips: ips, ports: ports}
}

var errAbort = errors.New("test: abort after admission")

// write runs one Service write the way the API server does: Admit inside
// the transaction, then the Service itself is put (or deleted), then
// OnCommit or OnAbort after the transaction. abort fails the transaction
// after a successful Admit. inTxn, when set, runs after Admit inside the
// transaction.
func (f *fixture) write(op apiserver.Op, svc, old *api.Service, abort bool, inTxn func(tx store.Txn)) error {
	f.t.Helper()
	var out apiserver.Outcome
	a := apiserver.Admission{Op: op, Obj: svc}
	if old != nil {
		a.Old = old
	}
	_, err := f.st.Update(context.Background(), func(tx store.Txn) error {
		var err error
		out, err = f.h.Admit(context.Background(), tx, a)
		if err != nil {
			return err
		}
		if inTxn != nil {
			inTxn(tx)
		}
		if op == apiserver.OpDelete {
			if err := tx.Delete(apiserver.KeyFor(svcInfo, svc.Namespace, svc.Name)); err != nil {
				return err
			}
		} else if err := (writer{}).PutObject(tx, svcInfo, svc); err != nil {
			return err
		}
		if abort {
			return errAbort
		}
		return nil
	})
	if err != nil {
		if out.OnAbort != nil {
			out.OnAbort()
		}
		return err
	}
	if out.OnCommit != nil {
		out.OnCommit()
	}
	return nil
}

func (f *fixture) create(svc *api.Service) error {
	return f.write(apiserver.OpCreate, svc, nil, false, nil)
}

func (f *fixture) mustCreate(svc *api.Service) *api.Service {
	f.t.Helper()
	if err := f.create(svc); err != nil {
		f.t.Fatalf("create %s: %v", svc.Name, err)
	}
	return svc
}

// stored reads a key; nil when absent.
func (f *fixture) stored(info *api.ResourceInfo, ns, name string) []byte {
	f.t.Helper()
	kv, err := f.st.Get(context.Background(), apiserver.KeyFor(info, ns, name))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return kv.Value
}

func (f *fixture) ipAddress(ip string) *api.IPAddress {
	f.t.Helper()
	b := f.stored(ipInfo, "", ip)
	if b == nil {
		return nil
	}
	var a api.IPAddress
	if err := json.Unmarshal(b, &a); err != nil {
		f.t.Fatal(err)
	}
	return &a
}

// wantIPAddress checks that ip's IPAddress points at ns/name.
func (f *fixture) wantIPAddress(ip, ns, name string) {
	f.t.Helper()
	a := f.ipAddress(ip)
	if a == nil {
		f.t.Fatalf("no IPAddress %s", ip)
	}
	r := a.Spec.ParentRef
	if r == nil || r.Resource != "services" || r.Namespace != ns || r.Name != name {
		f.t.Fatalf("IPAddress %s parentRef %+v, want services %s/%s", ip, r, ns, name)
	}
	if a.Labels[svcalloc.LabelManagedBy] != svcalloc.ManagedBy || a.Labels[svcalloc.LabelIPFamily] != "IPv4" {
		f.t.Fatalf("IPAddress %s labels %v", ip, a.Labels)
	}
}

func svc(name, typ string, ports ...int32) *api.Service {
	s := &api.Service{
		TypeMeta:   api.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       api.ServiceSpec{Type: typ},
	}
	for i, p := range ports {
		s.Spec.Ports = append(s.Spec.Ports, api.ServicePort{Name: "p" + string(rune('a'+i)), Protocol: api.ProtocolTCP, Port: p})
	}
	return s
}

// clone deep-copies a Service through JSON (an update's old object).
func clone(t *testing.T, s *api.Service) *api.Service {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var out api.Service
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// wantStatus checks that err is a StatusError with code and a message
// holding msg.
func wantStatus(t *testing.T, err error, code int, msg string) {
	t.Helper()
	var se *apiserver.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("want a %d StatusError, got %v", code, err)
	}
	if se.Code() != code || !strings.Contains(se.Status().Message, msg) {
		t.Fatalf("got %d %q, want %d with %q", se.Code(), se.Status().Message, code, msg)
	}
}

func TestAdmitCreate(t *testing.T) {
	lb := func(local bool, alloc *bool) func() *api.Service {
		return func() *api.Service {
			s := svc("lb", api.ServiceTypeLoadBalancer, 80)
			if local {
				s.Spec.ExternalTrafficPolicy = api.ServiceTrafficPolicyLocal
			}
			s.Spec.AllocateLoadBalancerNodePorts = alloc
			return s
		}
	}
	no := false
	cases := []struct {
		name string
		// setup runs on the fresh fixture first.
		setup func(f *fixture)
		svc   func() *api.Service
		code  int    // 0: success
		msg   string // part of the error message
		check func(t *testing.T, f *fixture, s *api.Service)
	}{
		{name: "dynamic ClusterIP in the upper band", svc: func() *api.Service { return svc("a", api.ServiceTypeClusterIP, 80) },
			check: func(t *testing.T, f *fixture, s *api.Service) {
				ip := netip.MustParseAddr(s.Spec.ClusterIP)
				if ip.Compare(netip.MustParseAddr("10.0.0.16")) <= 0 || !f.ips.InRange(ip) {
					t.Fatalf("dynamic IP %s not in the upper band", ip)
				}
				if !slices.Equal(s.Spec.ClusterIPs, []string{s.Spec.ClusterIP}) || !slices.Equal(s.Spec.IPFamilies, []string{"IPv4"}) ||
					s.Spec.IPFamilyPolicy == nil || *s.Spec.IPFamilyPolicy != "SingleStack" {
					t.Fatalf("spec %+v", s.Spec)
				}
				if s.Spec.Ports[0].NodePort != 0 || f.ports.Used() != 0 {
					t.Fatal("a ClusterIP Service took a NodePort")
				}
				f.wantIPAddress(s.Spec.ClusterIP, "default", "a")
			}},
		{name: "explicit ClusterIP", svc: func() *api.Service {
			s := svc("a", api.ServiceTypeClusterIP, 80)
			s.Spec.ClusterIP = "10.0.0.5"
			return s
		}, check: func(t *testing.T, f *fixture, s *api.Service) {
			if s.Spec.ClusterIP != "10.0.0.5" || !f.ips.Has(netip.MustParseAddr("10.0.0.5")) {
				t.Fatalf("clusterIP %s", s.Spec.ClusterIP)
			}
			f.wantIPAddress("10.0.0.5", "default", "a")
		}},
		{name: "taken ClusterIP", setup: func(f *fixture) {
			s := svc("first", api.ServiceTypeClusterIP, 80)
			s.Spec.ClusterIP = "10.0.0.5"
			f.mustCreate(s)
		}, svc: func() *api.Service {
			s := svc("a", api.ServiceTypeClusterIP, 80)
			s.Spec.ClusterIP = "10.0.0.5"
			return s
		}, code: 422, msg: "provided IP is already allocated"},
		{name: "ClusterIP out of range", svc: func() *api.Service {
			s := svc("a", api.ServiceTypeClusterIP, 80)
			s.Spec.ClusterIP = "10.0.1.5"
			return s
		}, code: 422, msg: "provided IP is not in the valid range"},
		{name: "broadcast address", svc: func() *api.Service {
			s := svc("a", api.ServiceTypeClusterIP, 80)
			s.Spec.ClusterIP = "10.0.0.255"
			return s
		}, code: 422, msg: "provided IP is not in the valid range"},
		{name: "not an IP", svc: func() *api.Service {
			s := svc("a", api.ServiceTypeClusterIP, 80)
			s.Spec.ClusterIP = "ten.zero"
			return s
		}, code: 422, msg: "must be a valid IP address"},
		{name: "an IPAddress object already holds the IP", setup: func(f *fixture) {
			// Stored but not in the index (as a user's object written
			// before the hook knew of it).
			_, err := f.st.Update(context.Background(), func(tx store.Txn) error {
				return writer{}.PutObject(tx, ipInfo, &api.IPAddress{ObjectMeta: api.ObjectMeta{Name: "10.0.0.9"}})
			})
			if err != nil {
				f.t.Fatal(err)
			}
		}, svc: func() *api.Service {
			s := svc("a", api.ServiceTypeClusterIP, 80)
			s.Spec.ClusterIP = "10.0.0.9"
			return s
		}, code: 422, msg: "provided IP is already allocated"},
		{name: "headless", svc: func() *api.Service {
			s := svc("a", api.ServiceTypeClusterIP, 80)
			s.Spec.ClusterIP = api.ClusterIPNone
			return s
		}, check: func(t *testing.T, f *fixture, s *api.Service) {
			if s.Spec.ClusterIP != api.ClusterIPNone || !slices.Equal(s.Spec.ClusterIPs, []string{api.ClusterIPNone}) || f.ips.Used() != 0 {
				t.Fatalf("headless: %+v, %d IPs used", s.Spec, f.ips.Used())
			}
		}},
		{name: "ExternalName", svc: func() *api.Service {
			s := svc("a", api.ServiceTypeExternalName)
			s.Spec.ExternalName = "example.com"
			return s
		}, check: func(t *testing.T, f *fixture, s *api.Service) {
			if s.Spec.ClusterIP != "" || f.ips.Used() != 0 {
				t.Fatalf("ExternalName took %q", s.Spec.ClusterIP)
			}
		}},
		{name: "NodePort: one port per Service port", svc: func() *api.Service {
			s := svc("a", api.ServiceTypeNodePort, 80, 443)
			s.Spec.Ports[1].NodePort = 30005
			return s
		}, check: func(t *testing.T, f *fixture, s *api.Service) {
			p0, p1 := s.Spec.Ports[0].NodePort, s.Spec.Ports[1].NodePort
			if p0 < 30016 || p0 > 30099 || p1 != 30005 || f.ports.Used() != 2 {
				t.Fatalf("nodePorts %d %d (dynamic must be in the upper band), %d used", p0, p1, f.ports.Used())
			}
		}},
		{name: "taken NodePort", setup: func(f *fixture) {
			s := svc("first", api.ServiceTypeNodePort, 80)
			s.Spec.Ports[0].NodePort = 30005
			f.mustCreate(s)
		}, svc: func() *api.Service {
			s := svc("a", api.ServiceTypeNodePort, 80, 81)
			s.Spec.Ports[1].NodePort = 30005
			return s
		}, code: 422, msg: "provided port is already allocated"},
		{name: "NodePort out of range", svc: func() *api.Service {
			s := svc("a", api.ServiceTypeNodePort, 80)
			s.Spec.Ports[0].NodePort = 31000
			return s
		}, code: 422, msg: "provided port is not in the valid range"},
		{name: "LoadBalancer Local gets a healthCheckNodePort", svc: lb(true, nil),
			check: func(t *testing.T, f *fixture, s *api.Service) {
				hc, np := s.Spec.HealthCheckNodePort, s.Spec.Ports[0].NodePort
				if hc == 0 || np == 0 || hc == np || f.ports.Used() != 2 {
					t.Fatalf("hc %d np %d used %d", hc, np, f.ports.Used())
				}
			}},
		{name: "LoadBalancer Cluster has no healthCheckNodePort", svc: lb(false, nil),
			check: func(t *testing.T, f *fixture, s *api.Service) {
				if s.Spec.HealthCheckNodePort != 0 || f.ports.Used() != 1 {
					t.Fatalf("hc %d used %d", s.Spec.HealthCheckNodePort, f.ports.Used())
				}
			}},
		{name: "LoadBalancer without node ports", svc: lb(false, &no),
			check: func(t *testing.T, f *fixture, s *api.Service) {
				if s.Spec.Ports[0].NodePort != 0 || f.ports.Used() != 0 {
					t.Fatalf("np %d used %d", s.Spec.Ports[0].NodePort, f.ports.Used())
				}
			}},
		{name: "ClusterIP Service's stray nodePort is dropped", svc: func() *api.Service {
			s := svc("a", api.ServiceTypeClusterIP, 80)
			s.Spec.Ports[0].NodePort = 30007
			return s
		}, check: func(t *testing.T, f *fixture, s *api.Service) {
			if s.Spec.Ports[0].NodePort != 0 || f.ports.Has(30007) {
				t.Fatal("ClusterIP Service kept a nodePort")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "10.0.0.0/24", 30000, 100)
			if tc.setup != nil {
				tc.setup(f)
			}
			ipsBefore, portsBefore := f.ips.Snapshot(), f.ports.Snapshot()
			s := tc.svc()
			err := f.create(s)
			if tc.code != 0 {
				wantStatus(t, err, tc.code, tc.msg)
				// A rejected create takes nothing and stores nothing.
				if !slices.Equal(f.ips.Snapshot(), ipsBefore) || !slices.Equal(f.ports.Snapshot(), portsBefore) {
					t.Fatalf("rejected create changed the index: IPs %v -> %v, ports %v -> %v",
						ipsBefore, f.ips.Snapshot(), portsBefore, f.ports.Snapshot())
				}
				if f.stored(svcInfo, "default", "a") != nil {
					t.Fatal("rejected create stored the Service")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, f, s)
			}
		})
	}
}

func TestAdmitCreateAbortReleases(t *testing.T) {
	f := newFixture(t, "10.0.0.0/24", 30000, 100)
	s := svc("a", api.ServiceTypeLoadBalancer, 80, 81)
	s.Spec.ExternalTrafficPolicy = api.ServiceTrafficPolicyLocal
	s.Spec.ClusterIP = "10.0.0.7"
	s.Spec.Ports[0].NodePort = 30003
	err := f.write(apiserver.OpCreate, s, nil, true, func(store.Txn) {
		if f.ips.Used() != 1 || f.ports.Used() != 3 {
			t.Errorf("inside the transaction: %d IPs, %d ports taken; want 1 and 3", f.ips.Used(), f.ports.Used())
		}
	})
	if !errors.Is(err, errAbort) {
		t.Fatalf("got %v", err)
	}
	if f.ips.Used() != 0 || f.ports.Used() != 0 {
		t.Fatalf("OnAbort left %v and %v taken", f.ips.Snapshot(), f.ports.Snapshot())
	}
	if f.ipAddress("10.0.0.7") != nil || f.stored(svcInfo, "default", "a") != nil {
		t.Fatal("aborted transaction stored objects")
	}
	// The same values can be taken again.
	s2 := svc("b", api.ServiceTypeNodePort, 80)
	s2.Spec.ClusterIP = "10.0.0.7"
	s2.Spec.Ports[0].NodePort = 30003
	f.mustCreate(s2)
	f.wantIPAddress("10.0.0.7", "default", "b")
}

func TestAdmitUpdate(t *testing.T) {
	cases := []struct {
		name   string
		before func() *api.Service
		// edit turns a copy of the created Service into the update.
		edit  func(s *api.Service)
		abort bool
		code  int
		msg   string
		check func(t *testing.T, f *fixture, old, s *api.Service)
	}{
		{name: "PUT without clusterIP keeps it", before: func() *api.Service { return svc("a", api.ServiceTypeClusterIP, 80) },
			edit: func(s *api.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil },
			check: func(t *testing.T, f *fixture, old, s *api.Service) {
				if s.Spec.ClusterIP != old.Spec.ClusterIP || !slices.Equal(s.Spec.ClusterIPs, old.Spec.ClusterIPs) || f.ips.Used() != 1 {
					t.Fatalf("clusterIP %s -> %s", old.Spec.ClusterIP, s.Spec.ClusterIP)
				}
				f.wantIPAddress(s.Spec.ClusterIP, "default", "a")
			}},
		{name: "changing the clusterIP is refused", before: func() *api.Service { return svc("a", api.ServiceTypeClusterIP, 80) },
			edit: func(s *api.Service) { s.Spec.ClusterIP = "10.0.0.3" },
			code: 422, msg: "may not change once set"},
		{name: "ClusterIP to ExternalName frees the IP", before: func() *api.Service { return svc("a", api.ServiceTypeClusterIP, 80) },
			edit: func(s *api.Service) { s.Spec.Type, s.Spec.ExternalName = api.ServiceTypeExternalName, "example.com" },
			check: func(t *testing.T, f *fixture, old, s *api.Service) {
				if s.Spec.ClusterIP != "" || len(s.Spec.ClusterIPs) != 0 || f.ips.Used() != 0 || f.ipAddress(old.Spec.ClusterIP) != nil {
					t.Fatalf("ExternalName kept %s (%d used)", old.Spec.ClusterIP, f.ips.Used())
				}
			}},
		{name: "ExternalName to ClusterIP allocates", before: func() *api.Service {
			s := svc("a", api.ServiceTypeExternalName)
			s.Spec.ExternalName = "example.com"
			return s
		}, edit: func(s *api.Service) {
			s.Spec.Type, s.Spec.ExternalName, s.Spec.Ports = api.ServiceTypeClusterIP, "", []api.ServicePort{{Port: 80}}
		},
			check: func(t *testing.T, f *fixture, old, s *api.Service) {
				if s.Spec.ClusterIP == "" || f.ips.Used() != 1 {
					t.Fatal("no ClusterIP")
				}
				f.wantIPAddress(s.Spec.ClusterIP, "default", "a")
			}},
		{name: "PUT without nodePorts keeps them", before: func() *api.Service { return svc("a", api.ServiceTypeNodePort, 80, 81) },
			edit: func(s *api.Service) { s.Spec.Ports[0].NodePort, s.Spec.Ports[1].NodePort = 0, 0 },
			check: func(t *testing.T, f *fixture, old, s *api.Service) {
				for i := range s.Spec.Ports {
					if s.Spec.Ports[i].NodePort != old.Spec.Ports[i].NodePort {
						t.Fatalf("port %d: nodePort %d -> %d", i, old.Spec.Ports[i].NodePort, s.Spec.Ports[i].NodePort)
					}
				}
				if f.ports.Used() != 2 {
					t.Fatalf("%d ports used", f.ports.Used())
				}
			}},
		{name: "a port matched by name keeps its nodePort after reordering", before: func() *api.Service { return svc("a", api.ServiceTypeNodePort, 80, 81) },
			edit: func(s *api.Service) {
				s.Spec.Ports[0], s.Spec.Ports[1] = s.Spec.Ports[1], s.Spec.Ports[0]
				s.Spec.Ports[0].NodePort, s.Spec.Ports[1].NodePort = 0, 0
			},
			check: func(t *testing.T, f *fixture, old, s *api.Service) {
				if s.Spec.Ports[0].NodePort != old.Spec.Ports[1].NodePort || s.Spec.Ports[1].NodePort != old.Spec.Ports[0].NodePort || f.ports.Used() != 2 {
					t.Fatalf("nodePorts %+v, old %+v", s.Spec.Ports, old.Spec.Ports)
				}
			}},
		{name: "NodePort to ClusterIP frees the ports", before: func() *api.Service { return svc("a", api.ServiceTypeNodePort, 80, 81) },
			edit: func(s *api.Service) { s.Spec.Type = api.ServiceTypeClusterIP },
			check: func(t *testing.T, f *fixture, old, s *api.Service) {
				if s.Spec.Ports[0].NodePort != 0 || f.ports.Used() != 0 {
					t.Fatalf("ports %+v, %d used", s.Spec.Ports, f.ports.Used())
				}
				if s.Spec.ClusterIP != old.Spec.ClusterIP || f.ips.Used() != 1 {
					t.Fatal("type change lost the ClusterIP")
				}
			}},
		{name: "changing a nodePort frees the old one", before: func() *api.Service { return svc("a", api.ServiceTypeNodePort, 80) },
			edit: func(s *api.Service) { s.Spec.Ports[0].NodePort = 30001 },
			check: func(t *testing.T, f *fixture, old, s *api.Service) {
				if !f.ports.Has(30001) || f.ports.Has(int(old.Spec.Ports[0].NodePort)) || f.ports.Used() != 1 {
					t.Fatalf("ports %v", f.ports.Snapshot())
				}
			}},
		{name: "Local to Cluster frees the healthCheckNodePort", before: func() *api.Service {
			s := svc("a", api.ServiceTypeLoadBalancer, 80)
			s.Spec.ExternalTrafficPolicy = api.ServiceTrafficPolicyLocal
			return s
		}, edit: func(s *api.Service) { s.Spec.ExternalTrafficPolicy = api.ServiceTrafficPolicyCluster },
			check: func(t *testing.T, f *fixture, old, s *api.Service) {
				if s.Spec.HealthCheckNodePort != 0 || f.ports.Has(int(old.Spec.HealthCheckNodePort)) || f.ports.Used() != 1 {
					t.Fatalf("hc %d, ports %v", s.Spec.HealthCheckNodePort, f.ports.Snapshot())
				}
			}},
		{name: "aborted update releases what it took and keeps what it held", before: func() *api.Service { return svc("a", api.ServiceTypeNodePort, 80) },
			edit: func(s *api.Service) {
				s.Spec.Ports = append(s.Spec.Ports, api.ServicePort{Name: "pb", Protocol: api.ProtocolTCP, Port: 81, NodePort: 30002})
			},
			abort: true,
			check: func(t *testing.T, f *fixture, old, s *api.Service) {
				if f.ports.Has(30002) || !f.ports.Has(int(old.Spec.Ports[0].NodePort)) || f.ports.Used() != 1 || f.ips.Used() != 1 {
					t.Fatalf("ports %v ips %v", f.ports.Snapshot(), f.ips.Snapshot())
				}
			}},
		{name: "aborted type change frees nothing", before: func() *api.Service { return svc("a", api.ServiceTypeNodePort, 80) },
			edit:  func(s *api.Service) { s.Spec.Type, s.Spec.ExternalName = api.ServiceTypeExternalName, "example.com" },
			abort: true,
			check: func(t *testing.T, f *fixture, old, s *api.Service) {
				if f.ports.Used() != 1 || f.ips.Used() != 1 || f.ipAddress(old.Spec.ClusterIP) == nil {
					t.Fatalf("aborted update freed: ports %v ips %v", f.ports.Snapshot(), f.ips.Snapshot())
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, "10.0.0.0/24", 30000, 100)
			old := f.mustCreate(tc.before())
			s := clone(t, old)
			tc.edit(s)
			ipsBefore, portsBefore := f.ips.Snapshot(), f.ports.Snapshot()
			err := f.write(apiserver.OpUpdate, s, clone(t, old), tc.abort, func(store.Txn) {
				// Nothing the old object held is free before the commit.
				for _, ip := range ipsBefore {
					if !f.ips.Has(ip) {
						t.Errorf("IP %s freed inside the transaction", ip)
					}
				}
				for _, p := range portsBefore {
					if !f.ports.Has(p) {
						t.Errorf("port %d freed inside the transaction", p)
					}
				}
			})
			switch {
			case tc.abort:
				if !errors.Is(err, errAbort) {
					t.Fatalf("got %v", err)
				}
			case tc.code != 0:
				wantStatus(t, err, tc.code, tc.msg)
				if !slices.Equal(f.ips.Snapshot(), ipsBefore) || !slices.Equal(f.ports.Snapshot(), portsBefore) {
					t.Fatal("rejected update changed the index")
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, f, old, s)
			}
		})
	}
}

func TestAdmitDelete(t *testing.T) {
	for _, abort := range []bool{false, true} {
		name := "commit"
		if abort {
			name = "abort"
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "10.0.0.0/24", 30000, 100)
			s := svc("a", api.ServiceTypeLoadBalancer, 80, 81)
			s.Spec.ExternalTrafficPolicy = api.ServiceTrafficPolicyLocal
			f.mustCreate(s)
			ip := netip.MustParseAddr(s.Spec.ClusterIP)
			err := f.write(apiserver.OpDelete, clone(t, s), nil, abort, func(tx store.Txn) {
				// The IPAddress goes in the same transaction, but the IP
				// and ports stay taken until the commit.
				if _, ok, _ := tx.Get(apiserver.KeyFor(ipInfo, "", ip.String())); ok {
					t.Error("IPAddress still present inside the delete's transaction")
				}
				if !f.ips.Has(ip) || f.ports.Used() != 3 {
					t.Error("IP or ports freed before the commit")
				}
			})
			if abort {
				if !errors.Is(err, errAbort) {
					t.Fatal(err)
				}
				if !f.ips.Has(ip) || f.ports.Used() != 3 || f.ipAddress(ip.String()) == nil {
					t.Fatal("aborted delete freed something")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.ips.Used() != 0 || f.ports.Used() != 0 || f.ipAddress(ip.String()) != nil {
				t.Fatalf("delete left IPs %v ports %v", f.ips.Snapshot(), f.ports.Snapshot())
			}
		})
	}
	t.Run("headless and missing IPAddress", func(t *testing.T) {
		f := newFixture(t, "10.0.0.0/24", 30000, 100)
		h := svc("h", api.ServiceTypeClusterIP, 80)
		h.Spec.ClusterIP = api.ClusterIPNone
		f.mustCreate(h)
		if err := f.write(apiserver.OpDelete, h, nil, false, nil); err != nil {
			t.Fatalf("delete headless: %v", err)
		}
		// A Service whose IPAddress is already gone still deletes.
		s := f.mustCreate(svc("s", api.ServiceTypeClusterIP, 80))
		if _, err := f.st.Update(context.Background(), func(tx store.Txn) error {
			return tx.Delete(apiserver.KeyFor(ipInfo, "", s.Spec.ClusterIP))
		}); err != nil {
			t.Fatal(err)
		}
		if err := f.write(apiserver.OpDelete, s, nil, false, nil); err != nil {
			t.Fatalf("delete without IPAddress: %v", err)
		}
		if f.ips.Used() != 0 {
			t.Fatal("IP not freed")
		}
	})
}

func TestAdmitIPAddress(t *testing.T) {
	f := newFixture(t, "10.0.0.0/24", 30000, 100)
	admit := func(op apiserver.Op, name string) (apiserver.Outcome, error) {
		var out apiserver.Outcome
		var aerr error
		_, err := f.st.Update(context.Background(), func(tx store.Txn) error {
			out, aerr = f.h.Admit(context.Background(), tx, apiserver.Admission{Op: op, Obj: &api.IPAddress{ObjectMeta: api.ObjectMeta{Name: name}}})
			return aerr
		})
		if err != nil && !errors.Is(err, aerr) {
			t.Fatal(err)
		}
		return out, aerr
	}
	ip := netip.MustParseAddr("10.0.0.40")
	out, err := admit(apiserver.OpCreate, "10.0.0.40")
	if err != nil || !f.ips.Has(ip) {
		t.Fatalf("user IPAddress create: %v, has %v", err, f.ips.Has(ip))
	}
	// Its transaction aborted: the IP is released.
	out.OnAbort()
	if f.ips.Has(ip) {
		t.Fatal("OnAbort kept the IP")
	}
	if _, err := admit(apiserver.OpCreate, "10.0.0.40"); err != nil {
		t.Fatal(err)
	}
	_, err = admit(apiserver.OpCreate, "10.0.0.40")
	wantStatus(t, err, 409, "10.0.0.40")
	// A Service cannot take it.
	s := svc("a", api.ServiceTypeClusterIP, 80)
	s.Spec.ClusterIP = "10.0.0.40"
	wantStatus(t, f.create(s), 422, "provided IP is already allocated")
	// Deleting frees it on commit.
	out, err = admit(apiserver.OpDelete, "10.0.0.40")
	if err != nil || !f.ips.Has(ip) {
		t.Fatal("freed before commit")
	}
	out.OnCommit()
	if f.ips.Has(ip) {
		t.Fatal("not freed on commit")
	}
	// The IPAddress of a live Service cannot be deleted: its IP would be
	// free for another Service.
	s = f.mustCreate(svc("live", api.ServiceTypeClusterIP, 80))
	owned := f.ipAddress(s.Spec.ClusterIP)
	_, err = f.st.Update(context.Background(), func(tx store.Txn) error {
		_, err := f.h.Admit(context.Background(), tx, apiserver.Admission{Op: apiserver.OpDelete, Obj: owned})
		return err
	})
	wantStatus(t, err, 409, "in use by Service default/live")
	if !f.ips.Has(netip.MustParseAddr(s.Spec.ClusterIP)) {
		t.Fatal("refused delete freed the IP")
	}
	// Once the Service holds another IP (or is gone) it can.
	f.mustCreate(func() *api.Service {
		x := svc("other", api.ServiceTypeClusterIP, 80)
		x.Spec.ClusterIP = "10.0.0.41"
		return x
	}())
	stray := managedIPA("10.0.0.42", "default", "other")
	if _, err := admit(apiserver.OpCreate, "10.0.0.42"); err != nil {
		t.Fatal(err)
	}
	_, err = f.st.Update(context.Background(), func(tx store.Txn) error {
		var err error
		out, err = f.h.Admit(context.Background(), tx, apiserver.Admission{Op: apiserver.OpDelete, Obj: stray})
		return err
	})
	if err == nil {
		out.OnCommit()
	}
	if err != nil || f.ips.Has(netip.MustParseAddr("10.0.0.42")) {
		t.Fatalf("delete of an IPAddress whose parent holds another IP: %v", err)
	}
	// Outside the range: not indexed, not refused.
	if _, err := admit(apiserver.OpCreate, "192.168.0.1"); err != nil {
		t.Fatal(err)
	}
	if f.ips.Used() != 2 {
		t.Fatalf("an out-of-range IPAddress was indexed: %v", f.ips.Snapshot())
	}
}

// putRaw writes objects straight into the store, bypassing the hook (the
// state a crash or an older version could leave).
func putRaw(t *testing.T, st store.Interface, objs ...api.Object) {
	t.Helper()
	_, err := st.Update(context.Background(), func(tx store.Txn) error {
		for _, o := range objs {
			info := svcInfo
			if _, ok := o.(*api.IPAddress); ok {
				info = ipInfo
			}
			if err := (writer{}).PutObject(tx, info, o); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func managedIPA(ip, ns, name string) *api.IPAddress {
	return &api.IPAddress{
		ObjectMeta: api.ObjectMeta{Name: ip, Labels: map[string]string{svcalloc.LabelManagedBy: svcalloc.ManagedBy, svcalloc.LabelIPFamily: "IPv4"}},
		Spec:       api.IPAddressSpec{ParentRef: &api.ParentReference{Resource: "services", Namespace: ns, Name: name}},
	}
}

func withIP(s *api.Service, ip string, nodePorts ...int32) *api.Service {
	s.Spec.ClusterIP, s.Spec.ClusterIPs = ip, []string{ip}
	for i, p := range nodePorts {
		s.Spec.Ports[i].NodePort = p
	}
	return s
}

func TestRepair(t *testing.T) {
	f := newFixture(t, "10.0.0.0/24", 30000, 100)
	lb := withIP(svc("lb", api.ServiceTypeLoadBalancer, 80), "10.0.0.13", 30013)
	lb.Spec.ExternalTrafficPolicy, lb.Spec.HealthCheckNodePort = api.ServiceTrafficPolicyLocal, 30014
	putRaw(t, f.st,
		// Consistent: a Service with its IPAddress.
		withIP(svc("ok", api.ServiceTypeNodePort, 80), "10.0.0.10", 30010), managedIPA("10.0.0.10", "default", "ok"),
		// A Service whose IPAddress is missing (restored).
		withIP(svc("lost-ipa", api.ServiceTypeNodePort, 80), "10.0.0.11", 30011),
		// An IPAddress whose Service is gone (freed).
		managedIPA("10.0.0.12", "default", "gone"),
		// An IPAddress pointing at a Service that holds another IP (freed).
		managedIPA("10.0.0.20", "default", "ok"),
		// A user's own IPAddress without a parent: kept and reserved.
		&api.IPAddress{ObjectMeta: api.ObjectMeta{Name: "10.0.0.30"}},
		// A health-check port.
		lb,
		// Headless and ExternalName hold nothing.
		withIP(svc("headless", api.ServiceTypeClusterIP, 80), api.ClusterIPNone),
		&api.Service{ObjectMeta: api.ObjectMeta{Name: "ext", Namespace: "default"}, Spec: api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "example.com"}},
		// A Service from an older --service-cidr: not indexed, nothing restored.
		withIP(svc("old-cidr", api.ServiceTypeClusterIP, 80), "10.1.0.5"),
		// Two Services claiming one IP and one port: a conflict, reported.
		withIP(svc("dup-a", api.ServiceTypeNodePort, 80), "10.0.0.50", 30050), managedIPA("10.0.0.50", "default", "dup-a"),
		withIP(svc("dup-b", api.ServiceTypeNodePort, 80), "10.0.0.50", 30050),
	)
	// The index is stale: it holds an IP and a port nothing owns.
	if err := f.ips.Allocate(netip.MustParseAddr("10.0.0.99")); err != nil {
		t.Fatal(err)
	}
	if err := f.ports.Allocate(30099); err != nil {
		t.Fatal(err)
	}

	rep, err := f.h.Repair(context.Background(), f.st)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rep.FreedIPAddrs)
	if !slices.Equal(rep.FreedIPAddrs, []string{"10.0.0.12", "10.0.0.20"}) {
		t.Errorf("freed %v, want 10.0.0.12 and 10.0.0.20", rep.FreedIPAddrs)
	}
	slices.Sort(rep.RestoredIPAddrs)
	if !slices.Equal(rep.RestoredIPAddrs, []string{"10.0.0.11", "10.0.0.13"}) {
		t.Errorf("restored %v, want 10.0.0.11 and 10.0.0.13", rep.RestoredIPAddrs)
	}
	if len(rep.Conflicts) != 2 {
		t.Errorf("conflicts %v, want the IP and the port of dup-b", rep.Conflicts)
	}
	if rep.Services != 8 {
		t.Errorf("read %d Services, want 8", rep.Services)
	}
	if f.ipAddress("10.0.0.12") != nil || f.ipAddress("10.0.0.20") != nil {
		t.Error("orphan IPAddresses still stored")
	}
	f.wantIPAddress("10.0.0.11", "default", "lost-ipa")
	f.wantIPAddress("10.0.0.13", "default", "lb")
	f.wantIPAddress("10.0.0.50", "default", "dup-a")
	if f.ipAddress("10.0.0.30") == nil || f.ipAddress("10.1.0.5") != nil {
		t.Error("user IPAddress removed, or an out-of-range one restored")
	}
	wantIPs := []string{"10.0.0.10", "10.0.0.11", "10.0.0.13", "10.0.0.30", "10.0.0.50"}
	var gotIPs []string
	for _, ip := range f.ips.Snapshot() {
		gotIPs = append(gotIPs, ip.String())
	}
	if !slices.Equal(gotIPs, wantIPs) {
		t.Errorf("indexed IPs %v, want %v", gotIPs, wantIPs)
	}
	if got := f.ports.Snapshot(); !slices.Equal(got, []int{30010, 30011, 30013, 30014, 30050}) {
		t.Errorf("indexed ports %v", got)
	}

	// Idempotent: a second pass finds nothing to fix.
	rep2, err := f.h.Repair(context.Background(), f.st)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep2.FreedIPAddrs)+len(rep2.RestoredIPAddrs) != 0 || rep2.IPs != rep.IPs || rep2.Ports != rep.Ports {
		t.Errorf("second repair: %+v", rep2)
	}

	// After repair, allocation never hands out a held IP or port.
	s := svc("new", api.ServiceTypeNodePort, 80)
	s.Spec.ClusterIP = "10.0.0.30"
	wantStatus(t, f.create(s), 422, "provided IP is already allocated")
	s = svc("new", api.ServiceTypeNodePort, 80)
	s.Spec.Ports[0].NodePort = 30014
	wantStatus(t, f.create(s), 422, "provided port is already allocated")
	s = svc("new", api.ServiceTypeNodePort, 80)
	s.Spec.ClusterIP = "10.0.0.12" // freed by repair
	s.Spec.Ports[0].NodePort = 30099
	f.mustCreate(s)
}

// TestRepairFullRange: after repair over a full tiny range, dynamic
// allocation fails with "range is full" instead of reusing a held IP.
func TestRepairFullRange(t *testing.T) {
	f := newFixture(t, "10.0.0.0/29", 30000, 4) // 6 usable addresses
	var objs []api.Object
	for i := 1; i <= 6; i++ {
		ip := netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}).String()
		s := withIP(svc("s"+string(rune('0'+i)), api.ServiceTypeClusterIP, 80), ip)
		objs = append(objs, s)
		if i%2 == 0 {
			objs = append(objs, managedIPA(ip, "default", s.Name))
		}
	}
	putRaw(t, f.st, objs...)
	rep, err := f.h.Repair(context.Background(), f.st)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.RestoredIPAddrs) != 3 || rep.IPs != 6 {
		t.Fatalf("report %+v", rep)
	}
	err = f.create(svc("one-more", api.ServiceTypeClusterIP, 80))
	wantStatus(t, err, 500, "range is full")
	if !strings.Contains(err.Error(), "failed to allocate IP") {
		t.Fatalf("error %q lacks Kubernetes' wording", err)
	}
}
