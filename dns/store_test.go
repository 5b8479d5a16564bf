package dns

import (
	"errors"
	"fmt"
	mdns "github.com/miekg/dns"
	"net/netip"
	"slices"
	"sync"
	"testing"
)

func TestBuildView(t *testing.T) {
	ready := func(host string, ips ...string) Endpoint {
		return Endpoint{Addresses: addrs(ips...), Hostname: host, Ready: true}
	}
	notReady := func(host string, ips ...string) Endpoint {
		return Endpoint{Addresses: addrs(ips...), Hostname: host}
	}
	tests := []struct {
		name    string
		svc     Service
		slices  []*EndpointSlice
		kind    svcKind
		records bool
		v4, v6  []string
		hosts   []string // "label addr"
		srvs    []string // "name proto label port"
		ports   []string // "name proto port"
		target  string
	}{
		{
			name: "clusterIP dual-stack with named and unnamed ports",
			svc: Service{ClusterIPs: addrs("fd00::1", "10.0.0.1"), Ports: []Port{
				{Name: "HTTP", Protocol: "TCP", Port: 80}, {Port: 81}, {Name: "dns", Protocol: "UDP", Port: 53}, {Name: "dns", Protocol: "TCP", Port: 53},
			}},
			slices: []*EndpointSlice{{Name: "x", Endpoints: []Endpoint{ready("a", "10.1.0.1")}}},
			kind:   kindClusterIP, records: true,
			v4: []string{"10.0.0.1"}, v6: []string{"fd00::1"},
			ports: []string{"dns tcp 53", "dns udp 53", "http tcp 80"},
		},
		{
			name: "clusterIP without an address yet has no records",
			svc:  Service{Type: TypeClusterIP},
			kind: kindClusterIP,
		},
		{
			name: "NodePort answers like ClusterIP",
			svc:  Service{Type: TypeNodePort, ClusterIPs: addrs("10.0.0.2")},
			kind: kindClusterIP, records: true, v4: []string{"10.0.0.2"},
		},
		{
			name: "mapped ClusterIP is IPv4",
			svc:  Service{ClusterIPs: addrs("::ffff:10.0.0.3")},
			kind: kindClusterIP, records: true, v4: []string{"10.0.0.3"},
		},
		{
			name: "headless: ready endpoints, hostnames, dashed names, dedup across slices",
			svc:  Service{Headless: true},
			slices: []*EndpointSlice{
				{Name: "a", Ports: []EndpointPort{{Name: "http", Port: 8080}, {Port: 9}},
					Endpoints: []Endpoint{ready("Web-0", "10.1.0.1"), ready("", "10.1.0.2"), notReady("web-2", "10.1.0.3")}},
				{Name: "b", Ports: []EndpointPort{{Name: "http", Port: 8080}},
					Endpoints: []Endpoint{ready("web-0", "fd00::1"), ready("", "10.1.0.2")}},
			},
			kind: kindHeadless, records: true,
			v4:    []string{"10.1.0.1", "10.1.0.2"},
			v6:    []string{"fd00::1"},
			hosts: []string{"10-1-0-2 10.1.0.2", "web-0 10.1.0.1", "web-0 fd00::1"},
			srvs:  []string{"http tcp 10-1-0-2 8080", "http tcp web-0 8080"},
		},
		{
			name:   "headless without ready endpoints has no records",
			svc:    Service{Headless: true},
			slices: []*EndpointSlice{{Name: "a", Endpoints: []Endpoint{notReady("", "10.1.0.3")}}},
			kind:   kindHeadless,
		},
		{
			name:   "publishNotReadyAddresses",
			svc:    Service{Headless: true, PublishNotReady: true},
			slices: []*EndpointSlice{{Name: "a", Endpoints: []Endpoint{notReady("", "10.1.0.3")}}},
			kind:   kindHeadless, records: true,
			v4:    []string{"10.1.0.3"},
			hosts: []string{"10-1-0-3 10.1.0.3"},
		},
		{
			name: "ExternalName",
			svc:  Service{Type: TypeExternalName, ExternalName: "WWW.Example.com"},
			kind: kindExternal, records: true, target: "www.example.com.",
		},
		{
			name: "ExternalName that is no domain name",
			svc:  Service{Type: TypeExternalName, ExternalName: "not a name"},
			kind: kindExternal,
		},
		{
			name: "ExternalName empty",
			svc:  Service{Type: TypeExternalName},
			kind: kindExternal,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := buildView("s.ns", &tc.svc, tc.slices)
			if v.kind != tc.kind || v.hasRecords() != tc.records || v.target != tc.target {
				t.Errorf("kind %d records %v target %q, want %d %v %q", v.kind, v.hasRecords(), v.target, tc.kind, tc.records, tc.target)
			}
			check := func(what string, got, want []string) {
				t.Helper()
				if !equalStrings(got, want) {
					t.Errorf("%s %q, want %q", what, got, want)
				}
			}
			check("v4", strs(v.v4, func(a netip.Addr) string { return a.String() }), tc.v4)
			check("v6", strs(v.v6, func(a netip.Addr) string { return a.String() }), tc.v6)
			check("hosts", strs(v.hosts, func(h hostAddr) string { return h.label + " " + h.addr.String() }), tc.hosts)
			check("srvs", strs(v.srvs, func(s srvTarget) string { return fmt.Sprintf("%s %s %s %d", s.name, s.proto, s.label, s.port) }), tc.srvs)
			check("ports", strs(v.ports, func(p srvPort) string { return fmt.Sprintf("%s %s %d", p.name, p.proto, p.port) }), tc.ports)
		})
	}
}

func strs[T any](xs []T, f func(T) string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

func ptrNames(s *Store, a string) []string {
	var out []string
	for _, r := range s.ptr(addr(a)) {
		out = append(out, r.label+"|"+r.key)
	}
	slices.Sort(out)
	return out
}

func TestStoreUpdates(t *testing.T) {
	s := NewStore()
	if s.Synced() {
		t.Fatal("new store is synced")
	}
	serial := s.Serial()

	// A slice before its Service: kept, no view yet.
	must(t, s.UpsertEndpointSlice(EndpointSlice{Namespace: "ns", Name: "db-1", Service: "db",
		Endpoints: []Endpoint{{Addresses: addrs("10.1.0.1"), Hostname: "db-0", Ready: true}}}))
	if s.service("db.ns") != nil || s.hasServiceNamespace("ns") {
		t.Error("view or namespace without a Service")
	}
	if s.Serial() == serial {
		t.Error("serial did not move")
	}
	must(t, s.UpsertService(Service{Namespace: "ns", Name: "db", Headless: true}))
	if v := s.service("db.ns"); v == nil || len(v.hostAddrs("db-0")) != 1 {
		t.Fatalf("view after Service: %+v", v)
	}
	if got := ptrNames(s, "10.1.0.1"); !slices.Equal(got, []string{"db-0|db.ns"}) {
		t.Errorf("ptr %q", got)
	}

	// The slice changes: the old address leaves the reverse index.
	must(t, s.UpsertEndpointSlice(EndpointSlice{Namespace: "ns", Name: "db-1", Service: "db",
		Endpoints: []Endpoint{{Addresses: addrs("10.1.0.2"), Hostname: "db-0", Ready: true}}}))
	if got := ptrNames(s, "10.1.0.1"); got != nil {
		t.Errorf("stale ptr %q", got)
	}
	if got := ptrNames(s, "10.1.0.2"); !slices.Equal(got, []string{"db-0|db.ns"}) {
		t.Errorf("ptr %q", got)
	}

	// The Service turns into a ClusterIP Service: endpoints leave the
	// reverse index, the ClusterIP enters it.
	must(t, s.UpsertService(Service{Namespace: "ns", Name: "db", ClusterIPs: addrs("10.96.0.5")}))
	if got := ptrNames(s, "10.1.0.2"); got != nil {
		t.Errorf("endpoint ptr of a clusterIP service %q", got)
	}
	if got := ptrNames(s, "10.96.0.5"); !slices.Equal(got, []string{"|db.ns"}) {
		t.Errorf("ptr %q", got)
	}

	// A second Service shares the address (an IP reused): both names.
	must(t, s.UpsertService(Service{Namespace: "ns", Name: "db2", ClusterIPs: addrs("10.96.0.5")}))
	if got := ptrNames(s, "10.96.0.5"); !slices.Equal(got, []string{"|db.ns", "|db2.ns"}) {
		t.Errorf("ptr %q", got)
	}
	s.DeleteService("ns", "db2")

	// Deleting the Service keeps the slice; deleting the slice too drops
	// everything.
	s.DeleteService("ns", "db")
	if s.service("db.ns") != nil || s.hasServiceNamespace("ns") || ptrNames(s, "10.96.0.5") != nil {
		t.Error("Service left traces")
	}
	if st := s.Stats(); st.Services != 0 || st.EndpointSlices != 1 {
		t.Errorf("stats %+v", st)
	}
	s.DeleteEndpointSlice("ns", "db-1")
	if st := s.Stats(); st != (StoreStats{}) {
		t.Errorf("stats after all deletes %+v", st)
	}
	if len(s.services) != 0 || len(s.reverse) != 0 || len(s.nsServices) != 0 {
		t.Errorf("maps not empty: %d %d %d", len(s.services), len(s.reverse), len(s.nsServices))
	}

	// Deleting what is not there is a no-op.
	s.DeleteService("ns", "nope")
	s.DeleteEndpointSlice("ns", "nope")
	s.DeletePod("ns", "nope")
}

func TestStoreSliceMovesService(t *testing.T) {
	s := NewStore()
	must(t, s.UpsertService(Service{Namespace: "ns", Name: "a", Headless: true}))
	must(t, s.UpsertService(Service{Namespace: "ns", Name: "b", Headless: true}))
	es := EndpointSlice{Namespace: "ns", Name: "x", Service: "a", Endpoints: []Endpoint{{Addresses: addrs("10.1.0.1"), Ready: true}}}
	must(t, s.UpsertEndpointSlice(es))
	es.Service = "b"
	must(t, s.UpsertEndpointSlice(es))
	if s.service("a.ns").hasRecords() || !s.service("b.ns").hasRecords() {
		t.Error("slice did not move from a to b")
	}
}

func TestStorePods(t *testing.T) {
	s := NewStore()
	must(t, s.UpsertPod(Pod{Namespace: "ns", Name: "p1", IPs: addrs("10.1.0.1", "fd00::1")}))
	must(t, s.UpsertPod(Pod{Namespace: "ns", Name: "p2", IPs: addrs("10.1.0.1")})) // an IP reused before p1 is gone
	must(t, s.UpsertPod(Pod{Namespace: "ns", Name: "web.v1", IPs: addrs("10.1.0.9")}))
	if !s.podExists("ns", addr("10.1.0.1")) || !s.podExists("ns", addr("fd00::1")) || s.podExists("other", addr("10.1.0.1")) {
		t.Error("pod lookup")
	}
	s.DeletePod("ns", "p1")
	if !s.podExists("ns", addr("10.1.0.1")) || s.podExists("ns", addr("fd00::1")) {
		t.Error("reference counting of a shared IP")
	}
	must(t, s.UpsertPod(Pod{Namespace: "ns", Name: "p2", IPs: addrs("10.1.0.2")}))
	if s.podExists("ns", addr("10.1.0.1")) || !s.podExists("ns", addr("10.1.0.2")) {
		t.Error("pod IP change")
	}
	must(t, s.ReplacePods([]Pod{{Namespace: "ns", Name: "p3", IPs: addrs("10.1.0.3")}}))
	if s.podExists("ns", addr("10.1.0.2")) || s.podExists("ns", addr("10.1.0.9")) || !s.podExists("ns", addr("10.1.0.3")) || !s.hasPodNamespace("ns") {
		t.Error("ReplacePods (with a dotted pod name)")
	}
	s.DeletePod("ns", "p3")
	if s.hasPodNamespace("ns") || len(s.podIPs) != 0 || len(s.pods) != 0 {
		t.Error("pods left traces")
	}
}

func TestStoreReplace(t *testing.T) {
	s := fixtureStore(t)
	must(t, s.ReplaceServices([]Service{
		{Namespace: "default", Name: "web", ClusterIPs: addrs("10.96.0.11")},
		{Namespace: "default", Name: "nginx", Headless: true},
	}))
	if s.service("ext.default") != nil || s.service("web.default").v4[0] != addr("10.96.0.11") {
		t.Error("ReplaceServices")
	}
	if ptrNames(s, "10.96.0.10") != nil {
		t.Error("old ClusterIP still in the reverse index")
	}
	if !s.service("nginx.default").hasRecords() {
		t.Error("slices of a kept Service lost")
	}
	must(t, s.ReplaceEndpointSlices([]EndpointSlice{{Namespace: "default", Name: "nginx-new", Service: "nginx",
		Endpoints: []Endpoint{{Addresses: addrs("10.244.7.7"), Ready: true}}}}))
	if v := s.service("nginx.default"); len(v.v4) != 1 || v.v4[0] != addr("10.244.7.7") || s.Stats().EndpointSlices != 1 {
		t.Errorf("ReplaceEndpointSlices: %+v", v)
	}
	if ptrNames(s, "10.244.1.5") != nil || ptrNames(s, "10.244.2.9") != nil {
		t.Error("replaced slices still in the reverse index")
	}
	if err := s.ReplaceEndpointSlices([]EndpointSlice{{Namespace: "default", Name: "x"}}); !errors.Is(err, ErrInvalidObject) {
		t.Errorf("slice without a Service: %v", err)
	}
	must(t, s.ReplaceEndpointSlices(nil))
	if s.service("nginx.default").hasRecords() || s.Stats().EndpointSlices != 0 {
		t.Error("ReplaceEndpointSlices(nil) kept slices")
	}
	err := s.ReplaceServices([]Service{{Namespace: "", Name: "x"}, {Namespace: "a", Name: "b.c"}, {Namespace: "a", Name: "ok"}})
	if !errors.Is(err, ErrInvalidObject) {
		t.Errorf("invalid objects: %v", err)
	}
	if st := s.Stats(); st.Services != 1 {
		t.Errorf("valid object of a partly invalid list not kept: %+v", st)
	}
}

func TestStoreInvalid(t *testing.T) {
	s := NewStore()
	tests := []struct {
		name string
		err  error
	}{
		{"service without namespace", s.UpsertService(Service{Name: "a"})},
		{"service without name", s.UpsertService(Service{Namespace: "a"})},
		{"service name with a dot", s.UpsertService(Service{Namespace: "a", Name: "b.c"})},
		{"namespace with a dot", s.UpsertService(Service{Namespace: "a.b", Name: "c"})},
		{"slice without service", s.UpsertEndpointSlice(EndpointSlice{Namespace: "a", Name: "b"})},
		{"pod with a backslash", s.UpsertPod(Pod{Namespace: "a", Name: `b\c`})},
	}
	for _, tc := range tests {
		if !errors.Is(tc.err, ErrInvalidObject) {
			t.Errorf("%s: %v, want ErrInvalidObject", tc.name, tc.err)
		}
	}
	if st := s.Stats(); st != (StoreStats{}) {
		t.Errorf("invalid objects stored: %+v", st)
	}
}

// TestStoreConcurrent runs writers against the handler (run with -race).
func TestStoreConcurrent(t *testing.T) {
	s := fixtureStore(t)
	srv, err := NewServer(Config{Upstreams: []string{}}, s)
	must(t, err)
	var writers, readers sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := range 300 {
				es := EndpointSlice{Namespace: "default", Name: "nginx-abc", Service: "nginx",
					Endpoints: []Endpoint{{Addresses: []netip.Addr{netip.AddrFrom4([4]byte{10, 244, byte(w), byte(i)})}, Ready: true}}}
				if err := s.UpsertEndpointSlice(es); err != nil {
					t.Error(err)
				}
				if err := s.UpsertService(Service{Namespace: "default", Name: "web", ClusterIPs: []netip.Addr{netip.AddrFrom4([4]byte{10, 96, byte(w), byte(i)})}}); err != nil {
					t.Error(err)
				}
				s.DeleteService("default", "ext")
				if err := s.UpsertService(Service{Namespace: "default", Name: "ext", Type: TypeExternalName, ExternalName: "x.example"}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, q := range []string{"web.default.svc.cluster.local.", "nginx.default.svc.cluster.local.",
					"_http._tcp.nginx.default.svc.cluster.local.", "10.0.96.10.in-addr.arpa.", "ext.default.svc.cluster.local.",
					"nope.default.svc.cluster.local.", "cluster.local."} {
					w := newRecorder("udp", "127.0.0.1:1000")
					m := new(mdns.Msg)
					m.SetQuestion(q, mdns.TypeA)
					if q == "cluster.local." {
						m.Question[0].Qtype = mdns.TypeNS // the shared NS record
					}
					srv.ServeDNS(w, m)
					if r := w.last(); r == nil || r.Rcode == mdns.RcodeServerFailure {
						t.Errorf("%s: %v", q, r)
						return
					}
				}
			}
		}()
	}
	writers.Wait()
	close(stop)
	readers.Wait()
}
