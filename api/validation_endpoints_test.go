package api

import (
	"strings"
	"testing"
)

func validEndpoints() *Endpoints {
	return &Endpoints{
		ObjectMeta: ObjectMeta{Name: "web", Namespace: "default"},
		Subsets: []EndpointSubset{{
			Addresses: []EndpointAddress{
				{IP: "10.244.0.5", NodeName: ptrTo("node-a"), TargetRef: &ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-1"}},
				{IP: "2001:db8::5", Hostname: "web-2"},
			},
			NotReadyAddresses: []EndpointAddress{{IP: "10.244.0.6"}},
			Ports: []EndpointsPort{
				{Name: "http", Port: 8080, Protocol: ProtocolTCP, AppProtocol: ptrTo("kubernetes.io/h2c")},
				{Name: "dns", Port: 53, Protocol: ProtocolUDP},
			},
		}},
	}
}

func TestValidateEndpoints(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Endpoints)
		want   []string
	}{
		{name: "valid", mutate: func(*Endpoints) {}},
		{name: "no subsets", mutate: func(e *Endpoints) { e.Subsets = nil }},
		{name: "only not-ready addresses", mutate: func(e *Endpoints) { e.Subsets[0].Addresses = nil }},
		{name: "one unnamed port", mutate: func(e *Endpoints) { e.Subsets[0].Ports = []EndpointsPort{{Port: 80, Protocol: ProtocolTCP}} }},
		{name: "no ports (headless)", mutate: func(e *Endpoints) { e.Subsets[0].Ports = nil }},
		{name: "subset without addresses", mutate: func(e *Endpoints) {
			e.Subsets = append(e.Subsets, EndpointSubset{Ports: []EndpointsPort{{Port: 80, Protocol: ProtocolTCP}}})
		}, want: []string{"FieldValueRequired subsets[1]"}},
		{name: "bad ip", mutate: func(e *Endpoints) { e.Subsets[0].Addresses[0].IP = "10.244.0" },
			want: []string{"FieldValueInvalid subsets[0].addresses[0].ip"}},
		{name: "empty ip", mutate: func(e *Endpoints) { e.Subsets[0].NotReadyAddresses[0].IP = "" },
			want: []string{"FieldValueInvalid subsets[0].notReadyAddresses[0].ip"}},
		{name: "hostname as ip", mutate: func(e *Endpoints) { e.Subsets[0].Addresses[0].IP = "db.example.com" },
			want: []string{"FieldValueInvalid subsets[0].addresses[0].ip"}},
		{name: "loopback", mutate: func(e *Endpoints) { e.Subsets[0].Addresses[0].IP = "127.0.0.1" },
			want: []string{"FieldValueInvalid subsets[0].addresses[0].ip"}},
		{name: "IPv6 loopback", mutate: func(e *Endpoints) { e.Subsets[0].Addresses[1].IP = "::1" },
			want: []string{"FieldValueInvalid subsets[0].addresses[1].ip"}},
		{name: "link-local", mutate: func(e *Endpoints) { e.Subsets[0].NotReadyAddresses[0].IP = "169.254.169.254" },
			want: []string{"FieldValueInvalid subsets[0].notReadyAddresses[0].ip"}},
		{name: "IPv6 link-local", mutate: func(e *Endpoints) { e.Subsets[0].Addresses[1].IP = "fe80::1" },
			want: []string{"FieldValueInvalid subsets[0].addresses[1].ip"}},
		{name: "link-local multicast", mutate: func(e *Endpoints) { e.Subsets[0].Addresses[0].IP = "224.0.0.1" },
			want: []string{"FieldValueInvalid subsets[0].addresses[0].ip"}},
		{name: "unspecified", mutate: func(e *Endpoints) { e.Subsets[0].Addresses[0].IP = "0.0.0.0" },
			want: []string{"FieldValueInvalid subsets[0].addresses[0].ip"}},
		{name: "bad hostname", mutate: func(e *Endpoints) { e.Subsets[0].Addresses[1].Hostname = "Web_2" },
			want: []string{"FieldValueInvalid subsets[0].addresses[1].hostname"}},
		{name: "bad nodeName", mutate: func(e *Endpoints) { e.Subsets[0].Addresses[0].NodeName = ptrTo("Node A") },
			want: []string{"FieldValueInvalid subsets[0].addresses[0].nodeName"}},
		{name: "unnamed port among two", mutate: func(e *Endpoints) { e.Subsets[0].Ports[1].Name = "" },
			want: []string{"FieldValueRequired subsets[0].ports[1].name"}},
		{name: "bad port name", mutate: func(e *Endpoints) { e.Subsets[0].Ports[0].Name = "HTTP" },
			want: []string{"FieldValueInvalid subsets[0].ports[0].name"}},
		{name: "port 0", mutate: func(e *Endpoints) { e.Subsets[0].Ports[0].Port = 0 },
			want: []string{"FieldValueInvalid subsets[0].ports[0].port"}},
		{name: "port 65536", mutate: func(e *Endpoints) { e.Subsets[0].Ports[0].Port = 65536 },
			want: []string{"FieldValueInvalid subsets[0].ports[0].port"}},
		{name: "no protocol", mutate: func(e *Endpoints) { e.Subsets[0].Ports[0].Protocol = "" },
			want: []string{"FieldValueRequired subsets[0].ports[0].protocol"}},
		{name: "unsupported protocol", mutate: func(e *Endpoints) { e.Subsets[0].Ports[0].Protocol = "ICMP" },
			want: []string{"FieldValueNotSupported subsets[0].ports[0].protocol"}},
		{name: "bad appProtocol", mutate: func(e *Endpoints) { e.Subsets[0].Ports[0].AppProtocol = ptrTo("-h2c") },
			want: []string{"FieldValueInvalid subsets[0].ports[0].appProtocol"}},
		{name: "bad name", mutate: func(e *Endpoints) { e.Name = "Web" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "no namespace", mutate: func(e *Endpoints) { e.Namespace = "" },
			want: []string{"FieldValueRequired metadata.namespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := validEndpoints()
			tt.mutate(e)
			checkErrs(t, ValidateEndpoints(e), tt.want...)
		})
	}
	t.Run("messages", func(t *testing.T) {
		e := validEndpoints()
		e.Subsets[0].Addresses[0].IP = "127.0.0.1"
		e.Subsets[0].Addresses[1].IP = "x"
		got := ValidateEndpoints(e).Error()
		for _, want := range []string{
			`subsets[0].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`,
			`subsets[0].addresses[1].ip: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
		} {
			if !strings.Contains(got, want) {
				t.Errorf("%q lacks %q", got, want)
			}
		}
	})
}

func TestValidateEndpointsUpdate(t *testing.T) {
	old := validEndpoints()
	old.ResourceVersion = "5"
	e := validEndpoints()
	e.ResourceVersion = "5"
	e.Subsets[0].Addresses[0].IP = "10.244.0.9"
	checkErrs(t, ValidateEndpointsUpdate(e, old))
	e.Subsets[0].Ports[0].Port = -1
	checkErrs(t, ValidateEndpointsUpdate(e, old), "FieldValueInvalid subsets[0].ports[0].port")
}

func TestDefaultEndpointsProtocol(t *testing.T) {
	e := validEndpoints()
	e.Subsets[0].Ports[0].Protocol = ""
	DefaultEndpoints(e)
	if p := e.Subsets[0].Ports[0].Protocol; p != ProtocolTCP {
		t.Fatalf("protocol = %q", p)
	}
	if p := e.Subsets[0].Ports[1].Protocol; p != ProtocolUDP {
		t.Fatalf("udp protocol = %q", p)
	}
}
