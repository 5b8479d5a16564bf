package source

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/dns"
)

func ptr[T any](v T) *T { return &v }

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func meta(ns, name string) api.ObjectMeta { return api.ObjectMeta{Namespace: ns, Name: name} }

func TestServiceFrom(t *testing.T) {
	tests := []struct {
		name string
		in   api.Service
		want dns.Service
	}{
		{
			name: "cluster IP dual stack with ports",
			in: api.Service{ObjectMeta: meta("default", "web"), Spec: api.ServiceSpec{
				Type: api.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10", "fd00::10"},
				Ports: []api.ServicePort{
					{Name: "http", Protocol: api.ProtocolTCP, Port: 80},
					{Name: "dns", Protocol: api.ProtocolUDP, Port: 53},
					{Port: 8080},
				},
			}},
			want: dns.Service{Namespace: "default", Name: "web", Type: dns.TypeClusterIP,
				ClusterIPs: addrs("10.96.0.10", "fd00::10"),
				Ports:      []dns.Port{{Name: "http", Protocol: "TCP", Port: 80}, {Name: "dns", Protocol: "UDP", Port: 53}, {Protocol: "TCP", Port: 8080}}},
		},
		{
			name: "empty type is ClusterIP, clusterIP alone is used",
			in:   api.Service{ObjectMeta: meta("a", "b"), Spec: api.ServiceSpec{ClusterIP: "10.96.0.11"}},
			want: dns.Service{Namespace: "a", Name: "b", Type: dns.TypeClusterIP, ClusterIPs: addrs("10.96.0.11")},
		},
		{
			name: "NodePort keeps its type and ClusterIP",
			in:   api.Service{ObjectMeta: meta("a", "np"), Spec: api.ServiceSpec{Type: api.ServiceTypeNodePort, ClusterIPs: []string{"10.96.0.12"}}},
			want: dns.Service{Namespace: "a", Name: "np", Type: dns.TypeNodePort, ClusterIPs: addrs("10.96.0.12")},
		},
		{
			name: "not yet allocated: no addresses",
			in:   api.Service{ObjectMeta: meta("a", "new"), Spec: api.ServiceSpec{Type: api.ServiceTypeClusterIP}},
			want: dns.Service{Namespace: "a", Name: "new", Type: dns.TypeClusterIP},
		},
		{
			name: "unparsable address dropped",
			in:   api.Service{ObjectMeta: meta("a", "bad"), Spec: api.ServiceSpec{ClusterIPs: []string{"10.96.0.300", "10.96.0.13"}}},
			want: dns.Service{Namespace: "a", Name: "bad", Type: dns.TypeClusterIP, ClusterIPs: addrs("10.96.0.13")},
		},
		{
			name: "headless via clusterIPs None, publishNotReadyAddresses",
			in: api.Service{ObjectMeta: meta("db", "pg"), Spec: api.ServiceSpec{
				ClusterIP: api.ClusterIPNone, ClusterIPs: []string{api.ClusterIPNone}, PublishNotReadyAddresses: true,
				Ports: []api.ServicePort{{Name: "pg", Protocol: api.ProtocolTCP, Port: 5432}},
			}},
			want: dns.Service{Namespace: "db", Name: "pg", Type: dns.TypeClusterIP, Headless: true, PublishNotReady: true,
				Ports: []dns.Port{{Name: "pg", Protocol: "TCP", Port: 5432}}},
		},
		{
			name: "headless via clusterIP only",
			in:   api.Service{ObjectMeta: meta("db", "h"), Spec: api.ServiceSpec{ClusterIP: api.ClusterIPNone}},
			want: dns.Service{Namespace: "db", Name: "h", Type: dns.TypeClusterIP, Headless: true},
		},
		{
			name: "ExternalName",
			in:   api.Service{ObjectMeta: meta("a", "ext"), Spec: api.ServiceSpec{Type: api.ServiceTypeExternalName, ExternalName: "www.example.com"}},
			want: dns.Service{Namespace: "a", Name: "ext", Type: dns.TypeExternalName, ExternalName: "www.example.com"},
		},
		{
			name: "SCTP port kept, out-of-range port dropped",
			in: api.Service{ObjectMeta: meta("a", "p"), Spec: api.ServiceSpec{ClusterIP: "10.96.0.14",
				Ports: []api.ServicePort{{Name: "s", Protocol: api.ProtocolSCTP, Port: 9}, {Name: "big", Port: 70000}}}},
			want: dns.Service{Namespace: "a", Name: "p", Type: dns.TypeClusterIP, ClusterIPs: addrs("10.96.0.14"),
				Ports: []dns.Port{{Name: "s", Protocol: "SCTP", Port: 9}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ServiceFrom(&tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ServiceFrom:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestEndpointSliceFrom(t *testing.T) {
	labeled := func(ns, name, svc string) api.ObjectMeta {
		m := meta(ns, name)
		m.Labels = map[string]string{api.LabelServiceName: svc}
		return m
	}
	tests := []struct {
		name   string
		in     api.EndpointSlice
		want   dns.EndpointSlice
		wantOK bool
	}{
		{
			name: "full endpoint",
			in: api.EndpointSlice{ObjectMeta: labeled("default", "nginx-abc", "nginx"), AddressType: "IPv4",
				Ports: []api.EndpointPort{{Name: ptr("http"), Protocol: ptr(api.ProtocolTCP), Port: ptr(int32(8080))}},
				Endpoints: []api.Endpoint{{
					Addresses:  []string{"10.244.1.5"},
					Conditions: api.EndpointConditions{Ready: ptr(true), Serving: ptr(true), Terminating: ptr(false)},
					Hostname:   ptr("web-0"),
					NodeName:   ptr("node-1"),
					TargetRef:  &api.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-0"},
				}},
			},
			want: dns.EndpointSlice{Namespace: "default", Name: "nginx-abc", Service: "nginx",
				Ports: []dns.EndpointPort{{Name: "http", Protocol: "TCP", Port: 8080}},
				Endpoints: []dns.Endpoint{{Addresses: addrs("10.244.1.5"), Hostname: "web-0", Ready: true, Serving: true,
					NodeName: "node-1", TargetPodName: "web-0"}}},
			wantOK: true,
		},
		{
			name: "unset conditions: ready and serving, not terminating; unset port fields",
			in: api.EndpointSlice{ObjectMeta: labeled("a", "s-1", "s"), AddressType: "IPv6",
				Ports:     []api.EndpointPort{{Port: ptr(int32(53))}},
				Endpoints: []api.Endpoint{{Addresses: []string{"fd00::5"}}},
			},
			want: dns.EndpointSlice{Namespace: "a", Name: "s-1", Service: "s",
				Ports:     []dns.EndpointPort{{Protocol: "TCP", Port: 53}},
				Endpoints: []dns.Endpoint{{Addresses: addrs("fd00::5"), Ready: true, Serving: true}}},
			wantOK: true,
		},
		{
			name: "terminating: not ready, serving, terminating; serving unset follows ready",
			in: api.EndpointSlice{ObjectMeta: labeled("a", "s-2", "s"),
				Endpoints: []api.Endpoint{
					{Addresses: []string{"10.244.0.1"}, Conditions: api.EndpointConditions{Ready: ptr(false), Serving: ptr(true), Terminating: ptr(true)}},
					{Addresses: []string{"10.244.0.2"}, Conditions: api.EndpointConditions{Ready: ptr(false)}},
				},
			},
			want: dns.EndpointSlice{Namespace: "a", Name: "s-2", Service: "s",
				Endpoints: []dns.Endpoint{
					{Addresses: addrs("10.244.0.1"), Serving: true, Terminating: true},
					{Addresses: addrs("10.244.0.2")},
				}},
			wantOK: true,
		},
		{
			name: "targetRef to something else than a Pod is not a pod name; nil port means all ports",
			in: api.EndpointSlice{ObjectMeta: labeled("a", "s-3", "s"),
				Ports: []api.EndpointPort{{Name: ptr("all")}},
				Endpoints: []api.Endpoint{{Addresses: []string{"10.244.0.3"},
					TargetRef: &api.ObjectReference{Kind: "Node", Name: "node-1"}}},
			},
			want: dns.EndpointSlice{Namespace: "a", Name: "s-3", Service: "s",
				Endpoints: []dns.Endpoint{{Addresses: addrs("10.244.0.3"), Ready: true, Serving: true}}},
			wantOK: true,
		},
		{
			name: "FQDN and unparsable addresses dropped with their endpoint",
			in: api.EndpointSlice{ObjectMeta: labeled("a", "s-4", "s"), AddressType: "FQDN",
				Endpoints: []api.Endpoint{{Addresses: []string{"db.example.com"}}, {Addresses: []string{"bogus", "10.244.0.4"}}},
			},
			want: dns.EndpointSlice{Namespace: "a", Name: "s-4", Service: "s",
				Endpoints: []dns.Endpoint{{Addresses: addrs("10.244.0.4"), Ready: true, Serving: true}}},
			wantOK: true,
		},
		{
			name:   "no service-name label: not DNS's",
			in:     api.EndpointSlice{ObjectMeta: meta("a", "orphan"), Endpoints: []api.Endpoint{{Addresses: []string{"10.244.0.5"}}}},
			wantOK: false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := EndpointSliceFrom(&tc.in)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if !ok {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("EndpointSliceFrom:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPodFrom(t *testing.T) {
	now := api.Now()
	tests := []struct {
		name   string
		in     api.Pod
		want   dns.Pod
		wantOK bool
	}{
		{
			name:   "podIPs dual stack",
			in:     api.Pod{ObjectMeta: meta("default", "web-0"), Status: api.PodStatus{Phase: api.PodRunning, PodIP: "10.244.1.5", PodIPs: []api.PodIP{{IP: "10.244.1.5"}, {IP: "fd00::5"}}}},
			want:   dns.Pod{Namespace: "default", Name: "web-0", IPs: addrs("10.244.1.5", "fd00::5")},
			wantOK: true,
		},
		{
			name:   "podIP alone",
			in:     api.Pod{ObjectMeta: meta("default", "p"), Status: api.PodStatus{Phase: api.PodPending, PodIP: "10.244.1.6"}},
			want:   dns.Pod{Namespace: "default", Name: "p", IPs: addrs("10.244.1.6")},
			wantOK: true,
		},
		{
			name:   "no IP yet",
			in:     api.Pod{ObjectMeta: meta("default", "p"), Status: api.PodStatus{Phase: api.PodPending}},
			wantOK: false,
		},
		{
			name:   "unparsable IP only",
			in:     api.Pod{ObjectMeta: meta("default", "p"), Status: api.PodStatus{PodIPs: []api.PodIP{{IP: "x"}}}},
			wantOK: false,
		},
		{
			name:   "succeeded: IP released",
			in:     api.Pod{ObjectMeta: meta("default", "p"), Status: api.PodStatus{Phase: api.PodSucceeded, PodIP: "10.244.1.7"}},
			wantOK: false,
		},
		{
			name:   "failed: IP released",
			in:     api.Pod{ObjectMeta: meta("default", "p"), Status: api.PodStatus{Phase: api.PodFailed, PodIP: "10.244.1.7"}},
			wantOK: false,
		},
		{
			name: "being deleted",
			in: api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "p", DeletionTimestamp: &now},
				Status: api.PodStatus{Phase: api.PodRunning, PodIP: "10.244.1.8"}},
			wantOK: false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := PodFrom(&tc.in)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if ok && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PodFrom:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
