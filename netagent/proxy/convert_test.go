package proxy

import (
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

func ptr[T any](v T) *T { return &v }

func svc(mod func(*api.Service)) *api.Service {
	s := &api.Service{
		ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: api.ServiceSpec{
			Type: api.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			Ports: []api.ServicePort{{Name: "http", Port: 80, Protocol: api.ProtocolTCP, NodePort: 30080}},
		},
	}
	if mod != nil {
		mod(s)
	}
	return s
}

func TestServicePortsFor(t *testing.T) {
	vip := []netip.Addr{netip.MustParseAddr("10.96.0.10")}
	name := ServicePortName{Namespace: "ns", Name: "web", Port: "http", Protocol: "TCP"}
	tests := []struct {
		name        string
		svc         *api.Service
		want        []*ServicePort
		skippedHas  string
		skippedNone bool
	}{
		{"ClusterIP ignores a stray nodePort", svc(nil),
			[]*ServicePort{{Name: name, ClusterIPs: vip, Port: 80, Protocol: "TCP"}}, "", true},
		{"headless", svc(func(s *api.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"} }), nil, "", true},
		{"ExternalName", svc(func(s *api.Service) {
			s.Spec.Type, s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.ExternalName = api.ServiceTypeExternalName, "", nil, "example.com"
		}), nil, "", true},
		{"SCTP is skipped with a reason", svc(func(s *api.Service) {
			s.Spec.Ports = append(s.Spec.Ports, api.ServicePort{Name: "sctp", Port: 9, Protocol: api.ProtocolSCTP})
		}), []*ServicePort{{Name: name, ClusterIPs: vip, Port: 80, Protocol: "TCP"}}, "protocol SCTP is not supported", false},
		{"NodePort with Local policy and affinity default", svc(func(s *api.Service) {
			s.Spec.Type = api.ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = api.ServiceTrafficPolicyLocal
			s.Spec.HealthCheckNodePort = 32000
			s.Spec.SessionAffinity = api.ServiceAffinityClientIP
		}), []*ServicePort{{Name: name, ClusterIPs: vip, Port: 80, Protocol: "TCP", NodePort: 30080,
			ExternalPolicyLocal: true, HealthCheckNodePort: 32000, AffinityTimeout: 3 * time.Hour}}, "", true},
		{"LoadBalancer: ingress IPs, Proxy ipMode skipped, source ranges", svc(func(s *api.Service) {
			s.Spec.Type = api.ServiceTypeLoadBalancer
			s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24", " 198.51.100.7/32"}
			s.Spec.SessionAffinity = api.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &api.SessionAffinityConfig{ClientIP: &api.ClientIPConfig{TimeoutSeconds: ptr(int32(60))}}
			s.Status.LoadBalancer.Ingress = []api.LoadBalancerIngress{{IP: "203.0.113.10"}, {IP: "203.0.113.11", IPMode: ptr("Proxy")}, {Hostname: "lb.example"}}
		}), []*ServicePort{{Name: name, ClusterIPs: vip, Port: 80, Protocol: "TCP", NodePort: 30080,
			LoadBalancerIPs:          []netip.Addr{netip.MustParseAddr("203.0.113.10")},
			LoadBalancerSourceRanges: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.51.100.7/32")},
			AffinityTimeout:          time.Minute}}, "", true},
		{"external IPs and internal Local", svc(func(s *api.Service) {
			s.Spec.ExternalIPs = []string{"192.0.2.50", "bogus"}
			s.Spec.InternalTrafficPolicy = ptr(api.ServiceTrafficPolicyLocal)
			s.Spec.ExternalTrafficPolicy = api.ServiceTrafficPolicyLocal
		}), []*ServicePort{{Name: name, ClusterIPs: vip, Port: 80, Protocol: "TCP",
			ExternalIPs: []netip.Addr{netip.MustParseAddr("192.0.2.50")}, InternalPolicyLocal: true, ExternalPolicyLocal: true}},
			`address "bogus"`, false},
		{"Local policy without external access is not external-local", svc(func(s *api.Service) {
			s.Spec.ExternalTrafficPolicy = api.ServiceTrafficPolicyLocal
		}), []*ServicePort{{Name: name, ClusterIPs: vip, Port: 80, Protocol: "TCP"}}, "", true},
		{"unnamed UDP port, default protocol", svc(func(s *api.Service) {
			s.Spec.Ports = []api.ServicePort{{Port: 53, Protocol: api.ProtocolUDP}, {Port: 54}}
		}), []*ServicePort{
			{Name: ServicePortName{Namespace: "ns", Name: "web", Protocol: "UDP"}, ClusterIPs: vip, Port: 53, Protocol: "UDP"},
			{Name: ServicePortName{Namespace: "ns", Name: "web", Protocol: "TCP"}, ClusterIPs: vip, Port: 54, Protocol: "TCP"},
		}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped := ServicePortsFor(tt.svc)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ports:\n got %+v\nwant %+v", deref(got), deref(tt.want))
			}
			joined := strings.Join(skipped, "; ")
			if tt.skippedNone && joined != "" {
				t.Errorf("skipped = %q, want none", joined)
			}
			if tt.skippedHas != "" && !strings.Contains(joined, tt.skippedHas) {
				t.Errorf("skipped = %q, want it to mention %q", joined, tt.skippedHas)
			}
		})
	}
}

func deref(sps []*ServicePort) []ServicePort {
	var out []ServicePort
	for _, sp := range sps {
		out = append(out, *sp)
	}
	return out
}

func slice(name string, ports []api.EndpointPort, eps ...api.Endpoint) *api.EndpointSlice {
	return &api.EndpointSlice{
		ObjectMeta:  api.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{api.LabelServiceName: "web"}},
		AddressType: api.AddressTypeIPv4, Ports: ports, Endpoints: eps,
	}
}

func TestEndpointsFor(t *testing.T) {
	http := ServicePortName{Namespace: "ns", Name: "web", Port: "http", Protocol: "TCP"}
	dns := ServicePortName{Namespace: "ns", Name: "web", Port: "dns", Protocol: "UDP"}
	ports := []*ServicePort{{Name: http, Port: 80, Protocol: "TCP"}, {Name: dns, Port: 53, Protocol: "UDP"}}
	pHTTP := api.EndpointPort{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(api.ProtocolTCP)}
	pDNS := api.EndpointPort{Name: ptr("dns"), Port: ptr(int32(5353)), Protocol: ptr(api.ProtocolUDP)}
	pWrongProto := api.EndpointPort{Name: ptr("http"), Port: ptr(int32(9999)), Protocol: ptr(api.ProtocolUDP)}
	e := func(ip, node string, c api.EndpointConditions) api.Endpoint {
		return api.Endpoint{Addresses: []string{ip, "10.9.9.9"}, NodeName: ptr(node), Conditions: c}
	}
	slices1 := []*api.EndpointSlice{
		slice("a", []api.EndpointPort{pHTTP, pDNS, pWrongProto},
			e("10.244.1.9", "n2", api.EndpointConditions{}), // unset conditions: ready
			e("10.244.0.5", "n1", api.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}),
		),
		slice("b", []api.EndpointPort{pHTTP},
			e("10.244.0.5", "n1", api.EndpointConditions{Ready: ptr(true)}), // duplicate, better conditions win
			e("10.244.0.7", "n1", api.EndpointConditions{Ready: ptr(false)}),
		),
		{ObjectMeta: api.ObjectMeta{Name: "fqdn"}, AddressType: api.AddressTypeFQDN, Ports: []api.EndpointPort{pHTTP},
			Endpoints: []api.Endpoint{{Addresses: []string{"example.com"}}}},
	}
	got := EndpointsFor(ports, slices1, "n1")
	mk := func(ip string, port int32, node string, ready, serving, term bool) Endpoint {
		return Endpoint{IP: netip.MustParseAddr(ip), Port: port, NodeName: node, Ready: ready, Serving: serving, Terminating: term, IsLocal: node == "n1"}
	}
	want := map[ServicePortName][]Endpoint{
		http: {
			mk("10.244.0.5", 8080, "n1", true, true, false),
			mk("10.244.0.7", 8080, "n1", false, false, false),
			mk("10.244.1.9", 8080, "n2", true, true, false),
		},
		dns: {
			mk("10.244.0.5", 5353, "n1", false, true, true),
			mk("10.244.1.9", 5353, "n2", true, true, false),
		},
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got[name], w)
		}
	}
}

func TestSliceHelpers(t *testing.T) {
	sl := slice("a", nil)
	if got := sliceService(sl); got != "ns/web" {
		t.Errorf("sliceService = %q", got)
	}
	sl.Labels = nil
	if got := sliceService(sl); got != "" {
		t.Errorf("unlabelled sliceService = %q", got)
	}
	sl.Annotations = map[string]string{AnnotationTriggerTime: "2026-01-02T03:04:05.123456789Z"}
	tt, ok := triggerTime(sl)
	if !ok || tt.Nanosecond() != 123456789 {
		t.Errorf("triggerTime = %v %v", tt, ok)
	}
	sl.Annotations[AnnotationTriggerTime] = "yesterday"
	if _, ok := triggerTime(sl); ok {
		t.Error("a bad trigger time parsed")
	}
}
