package proxy

import (
	"net/netip"
	"slices"
	"testing"
)

func ep(ip string, ready, serving, terminating, local bool) Endpoint {
	return Endpoint{IP: netip.MustParseAddr(ip), Port: 8080, Ready: ready, Serving: serving, Terminating: terminating, IsLocal: local}
}

func ips(eps []Endpoint) []string {
	var out []string
	for _, e := range eps {
		out = append(out, e.IP.String())
	}
	return out
}

func TestCategorizeEndpoints(t *testing.T) {
	var (
		readyLocal    = ep("10.0.0.1", true, true, false, true)
		readyRemote   = ep("10.0.0.2", true, true, false, false)
		notReady      = ep("10.0.0.3", false, false, false, true)
		termLocal     = ep("10.0.0.4", false, true, true, true)
		termRemote    = ep("10.0.0.5", false, true, true, false)
		termNotServ   = ep("10.0.0.6", false, false, true, true)
		clusterIP     = ServicePort{}
		internalLocal = ServicePort{InternalPolicyLocal: true}
		externalLocal = ServicePort{NodePort: 30000, ExternalPolicyLocal: true}
		bothLocal     = ServicePort{NodePort: 30000, ExternalPolicyLocal: true, InternalPolicyLocal: true}
	)
	tests := []struct {
		name                      string
		sp                        ServicePort
		eps                       []Endpoint
		cluster, local, reachable []string
		hasAny                    bool
	}{
		{"cluster: ready only", clusterIP, []Endpoint{readyLocal, readyRemote, notReady, termLocal},
			[]string{"10.0.0.1", "10.0.0.2"}, nil, []string{"10.0.0.1", "10.0.0.2"}, true},
		{"cluster: none ready falls back to serving+terminating", clusterIP, []Endpoint{notReady, termLocal, termRemote, termNotServ},
			[]string{"10.0.0.4", "10.0.0.5"}, nil, []string{"10.0.0.4", "10.0.0.5"}, true},
		{"cluster: nothing usable", clusterIP, []Endpoint{notReady, termNotServ}, nil, nil, nil, false},
		{"cluster: no endpoints", clusterIP, nil, nil, nil, nil, false},
		{"internal Local: only local ready", internalLocal, []Endpoint{readyLocal, readyRemote},
			nil, []string{"10.0.0.1"}, []string{"10.0.0.1"}, true},
		{"internal Local: remote only means no local but hasAny", internalLocal, []Endpoint{readyRemote},
			nil, nil, nil, true},
		{"internal Local: local terminating fallback", internalLocal, []Endpoint{readyRemote, termLocal},
			nil, []string{"10.0.0.4"}, []string{"10.0.0.4"}, true},
		{"external Local: cluster for internal, local for external", externalLocal, []Endpoint{readyLocal, readyRemote},
			[]string{"10.0.0.1", "10.0.0.2"}, []string{"10.0.0.1"}, []string{"10.0.0.1", "10.0.0.2"}, true},
		{"external Local: no local endpoint", externalLocal, []Endpoint{readyRemote},
			[]string{"10.0.0.2"}, nil, []string{"10.0.0.2"}, true},
		{"external Local: reachable is the union in input order", externalLocal, []Endpoint{readyRemote, termLocal, readyLocal},
			[]string{"10.0.0.2", "10.0.0.1"}, []string{"10.0.0.1"}, []string{"10.0.0.2", "10.0.0.1"}, true},
		{"both Local: cluster endpoints still kept for short-circuiting", bothLocal, []Endpoint{readyLocal, readyRemote},
			[]string{"10.0.0.1", "10.0.0.2"}, []string{"10.0.0.1"}, []string{"10.0.0.1", "10.0.0.2"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := CategorizeEndpoints(&tt.sp, tt.eps)
			if got := ips(c.Cluster); !slices.Equal(got, tt.cluster) {
				t.Errorf("cluster = %v, want %v", got, tt.cluster)
			}
			if got := ips(c.Local); !slices.Equal(got, tt.local) {
				t.Errorf("local = %v, want %v", got, tt.local)
			}
			if got := ips(c.Reachable); !slices.Equal(got, tt.reachable) {
				t.Errorf("reachable = %v, want %v", got, tt.reachable)
			}
			if c.HasAny != tt.hasAny {
				t.Errorf("hasAny = %v, want %v", c.HasAny, tt.hasAny)
			}
		})
	}
}

func TestServicePortPolicies(t *testing.T) {
	tests := []struct {
		name                     string
		sp                       ServicePort
		external, cluster, local bool
	}{
		{"ClusterIP", ServicePort{}, false, true, false},
		{"NodePort", ServicePort{NodePort: 30001}, true, true, false},
		{"external IP", ServicePort{ExternalIPs: []netip.Addr{netip.MustParseAddr("192.0.2.1")}}, true, true, false},
		{"internal Local", ServicePort{InternalPolicyLocal: true}, false, false, true},
		{"internal Local, NodePort Cluster", ServicePort{InternalPolicyLocal: true, NodePort: 30001}, true, true, true},
		{"both Local", ServicePort{InternalPolicyLocal: true, ExternalPolicyLocal: true, NodePort: 30001}, true, true, true},
		{"external Local", ServicePort{ExternalPolicyLocal: true, NodePort: 30001}, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sp.ExternallyAccessible(); got != tt.external {
				t.Errorf("ExternallyAccessible = %v", got)
			}
			if got := tt.sp.UsesClusterEndpoints(); got != tt.cluster {
				t.Errorf("UsesClusterEndpoints = %v", got)
			}
			if got := tt.sp.UsesLocalEndpoints(); got != tt.local {
				t.Errorf("UsesLocalEndpoints = %v", got)
			}
		})
	}
}

func TestNames(t *testing.T) {
	n := ServicePortName{Namespace: "ns", Name: "web", Port: "http", Protocol: "TCP"}
	if got := n.PortString(); got != "ns/web:http" {
		t.Errorf("PortString = %q", got)
	}
	n.Port = ""
	if got := n.PortString(); got != "ns/web" {
		t.Errorf("unnamed PortString = %q", got)
	}
	e := Endpoint{IP: netip.MustParseAddr("10.244.0.5"), Port: 8080}
	if got := e.String(); got != "10.244.0.5:8080" {
		t.Errorf("Endpoint.String = %q", got)
	}
}
