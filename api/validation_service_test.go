package api

import (
	"strings"
	"testing"
)

func TestValidateService(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Service)
		want   []string
	}{
		{name: "valid", mutate: func(*Service) {}},
		{name: "valid no clusterIP yet", mutate: func(s *Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil }},
		{name: "valid headless", mutate: func(s *Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"} }},
		{name: "valid headless without ports", mutate: func(s *Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.Ports = "None", []string{"None"}, nil
		}},
		{name: "valid nodeport", mutate: func(s *Service) {
			s.Spec.Type = ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = 30080
			DefaultService(s)
		}},
		{name: "valid loadbalancer local", mutate: func(s *Service) {
			s.Spec.Type = ServiceTypeLoadBalancer
			s.Spec.ExternalTrafficPolicy = ServiceTrafficPolicyLocal
			s.Spec.HealthCheckNodePort = 31000
			s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8", " 192.168.0.0/16"}
			DefaultService(s)
		}},
		{name: "valid externalname", mutate: func(s *Service) {
			*s = Service{ObjectMeta: s.ObjectMeta, Spec: ServiceSpec{Type: ServiceTypeExternalName, ExternalName: "db.example.com."}}
			DefaultService(s)
		}},
		{name: "valid client ip affinity", mutate: func(s *Service) {
			s.Spec.SessionAffinity = ServiceAffinityClientIP
			DefaultService(s)
		}},
		{name: "valid two named ports", mutate: func(s *Service) {
			s.Spec.Ports = append(s.Spec.Ports, ServicePort{Name: "dns", Port: 53, Protocol: ProtocolUDP, TargetPort: FromInt32(5353)})
		}},
		{name: "same port different protocol", mutate: func(s *Service) {
			s.Spec.Ports = []ServicePort{
				{Name: "dns-tcp", Port: 53, Protocol: ProtocolTCP, TargetPort: FromInt32(53)},
				{Name: "dns-udp", Port: 53, Protocol: ProtocolUDP, TargetPort: FromInt32(53)},
			}
		}},
		{name: "valid external IPs", mutate: func(s *Service) {
			s.Spec.ExternalIPs = []string{"192.168.1.50"}
			DefaultService(s)
			if s.Spec.ExternalTrafficPolicy != ServiceTrafficPolicyCluster {
				panic("externalTrafficPolicy not defaulted for a ClusterIP with externalIPs")
			}
		}},
		{name: "dual stack clusterIPs", mutate: func(s *Service) {
			s.Spec.ClusterIPs = []string{"10.96.0.10", "fd00::10"}
			s.Spec.IPFamilies = []string{IPv4Protocol, IPv6Protocol}
			s.Spec.IPFamilyPolicy = ptrTo(IPFamilyPolicyPreferDualStack)
		}},

		{name: "name not dns-1035", mutate: func(s *Service) { s.Name = "1web" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "missing namespace", mutate: func(s *Service) { s.Namespace = "" },
			want: []string{"FieldValueRequired metadata.namespace"}},
		{name: "bad label", mutate: func(s *Service) { s.Labels = map[string]string{"app": "-x"} },
			want: []string{"FieldValueInvalid metadata.labels[app]"}},
		{name: "port zero", mutate: func(s *Service) { s.Spec.Ports[0].Port = 0 },
			want: []string{"FieldValueInvalid spec.ports[0].port"}},
		{name: "port too big", mutate: func(s *Service) { s.Spec.Ports[0].Port = 70000 },
			want: []string{"FieldValueInvalid spec.ports[0].port"}},
		{name: "no ports", mutate: func(s *Service) { s.Spec.Ports = nil },
			want: []string{"FieldValueRequired spec.ports"}},
		{name: "sctp not supported", mutate: func(s *Service) { s.Spec.Ports[0].Protocol = ProtocolSCTP },
			want: []string{"FieldValueNotSupported spec.ports[0].protocol"}},
		{name: "bad protocol", mutate: func(s *Service) { s.Spec.Ports[0].Protocol = "HTTP" },
			want: []string{"FieldValueNotSupported spec.ports[0].protocol"}},
		{name: "empty protocol", mutate: func(s *Service) { s.Spec.Ports[0].Protocol = "" },
			want: []string{"FieldValueRequired spec.ports[0].protocol"}},
		{name: "unnamed port among two", mutate: func(s *Service) {
			s.Spec.Ports = append(s.Spec.Ports, ServicePort{Port: 81, Protocol: ProtocolTCP, TargetPort: FromInt32(81)})
		}, want: []string{"FieldValueRequired spec.ports[1].name"}},
		{name: "duplicate port name", mutate: func(s *Service) {
			s.Spec.Ports = append(s.Spec.Ports, ServicePort{Name: "http", Port: 81, Protocol: ProtocolTCP, TargetPort: FromInt32(81)})
		}, want: []string{"FieldValueDuplicate spec.ports[1].name"}},
		{name: "duplicate port and protocol", mutate: func(s *Service) {
			s.Spec.Ports = append(s.Spec.Ports, ServicePort{Name: "alt", Port: 80, Protocol: ProtocolTCP, TargetPort: FromInt32(81)})
		}, want: []string{"FieldValueDuplicate spec.ports[1]"}},
		{name: "bad port name", mutate: func(s *Service) { s.Spec.Ports[0].Name = "HTTP" },
			want: []string{"FieldValueInvalid spec.ports[0].name"}},
		{name: "bad target port name", mutate: func(s *Service) { s.Spec.Ports[0].TargetPort = FromString("my_port") },
			want: []string{"FieldValueInvalid spec.ports[0].targetPort"}},
		{name: "bad target port number", mutate: func(s *Service) { s.Spec.Ports[0].TargetPort = FromInt32(65536) },
			want: []string{"FieldValueInvalid spec.ports[0].targetPort"}},
		{name: "nodePort on ClusterIP", mutate: func(s *Service) { s.Spec.Ports[0].NodePort = 30080 },
			want: []string{"FieldValueForbidden spec.ports[0].nodePort"}},
		{name: "nodePort out of range", mutate: func(s *Service) {
			s.Spec.Type = ServiceTypeNodePort
			DefaultService(s)
			s.Spec.Ports[0].NodePort = 70000
		}, want: []string{"FieldValueInvalid spec.ports[0].nodePort"}},
		{name: "duplicate nodePort", mutate: func(s *Service) {
			s.Spec.Type = ServiceTypeNodePort
			s.Spec.Ports = []ServicePort{
				{Name: "a", Port: 80, NodePort: 30080},
				{Name: "b", Port: 81, NodePort: 30080},
			}
			DefaultService(s)
		}, want: []string{"FieldValueDuplicate spec.ports[1].nodePort"}},
		{name: "bad selector key", mutate: func(s *Service) { s.Spec.Selector = map[string]string{"a b": "x"} },
			want: []string{"FieldValueInvalid spec.selector"}},
		{name: "bad type", mutate: func(s *Service) { s.Spec.Type = "Ingress" },
			want: []string{"FieldValueNotSupported spec.type"}},
		{name: "headless NodePort", mutate: func(s *Service) {
			s.Spec.Type = ServiceTypeNodePort
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
			DefaultService(s)
		}, want: []string{"FieldValueInvalid spec.clusterIPs[0]"}},
		{name: "headless LoadBalancer", mutate: func(s *Service) {
			s.Spec.Type = ServiceTypeLoadBalancer
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
			DefaultService(s)
		}, want: []string{"FieldValueInvalid spec.clusterIPs[0]"}},
		{name: "bad clusterIP", mutate: func(s *Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.300", []string{"10.96.0.300"} },
			want: []string{"FieldValueInvalid spec.clusterIPs[0]"}},
		{name: "clusterIPs out of sync", mutate: func(s *Service) { s.Spec.ClusterIPs = []string{"10.96.0.11"} },
			want: []string{"FieldValueInvalid spec.clusterIPs"}},
		{name: "clusterIPs without clusterIP", mutate: func(s *Service) { s.Spec.ClusterIP = "" },
			want: []string{"FieldValueInvalid spec.clusterIPs"}},
		{name: "None not alone", mutate: func(s *Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None", "10.96.0.1"}
		}, want: []string{"FieldValueInvalid spec.clusterIPs"}},
		{name: "two IPv4 clusterIPs", mutate: func(s *Service) {
			s.Spec.ClusterIPs = []string{"10.96.0.10", "10.96.0.11"}
			s.Spec.IPFamilyPolicy = ptrTo(IPFamilyPolicyPreferDualStack)
		}, want: []string{"FieldValueInvalid spec.clusterIPs"}},
		{name: "family mismatch", mutate: func(s *Service) { s.Spec.IPFamilies = []string{IPv6Protocol} },
			want: []string{"FieldValueInvalid spec.clusterIPs[0]"}},
		{name: "bad family", mutate: func(s *Service) { s.Spec.IPFamilies = []string{"IPv5"} },
			want: []string{"FieldValueNotSupported spec.ipFamilies[0]"}},
		{name: "duplicate family", mutate: func(s *Service) {
			s.Spec.IPFamilies = []string{IPv4Protocol, IPv4Protocol}
			s.Spec.IPFamilyPolicy = ptrTo(IPFamilyPolicyPreferDualStack)
		}, want: []string{"FieldValueDuplicate spec.ipFamilies[1]"}},
		{name: "bad family policy", mutate: func(s *Service) { s.Spec.IPFamilyPolicy = ptrTo("Maybe") },
			want: []string{"FieldValueNotSupported spec.ipFamilyPolicy"}},
		{name: "externalName missing", mutate: func(s *Service) {
			*s = Service{ObjectMeta: s.ObjectMeta, Spec: ServiceSpec{Type: ServiceTypeExternalName}}
			DefaultService(s)
		}, want: []string{"FieldValueRequired spec.externalName"}},
		{name: "externalName invalid", mutate: func(s *Service) {
			*s = Service{ObjectMeta: s.ObjectMeta, Spec: ServiceSpec{Type: ServiceTypeExternalName, ExternalName: "Bad_Name"}}
			DefaultService(s)
		}, want: []string{"FieldValueInvalid spec.externalName"}},
		{name: "externalName with clusterIP and families", mutate: func(s *Service) {
			s.Spec.Type = ServiceTypeExternalName
			s.Spec.ExternalName = "db.example.com"
			s.Spec.InternalTrafficPolicy = nil
		}, want: []string{"FieldValueForbidden spec.clusterIPs", "FieldValueForbidden spec.ipFamilies", "FieldValueForbidden spec.ipFamilyPolicy"}},
		{name: "local policy on ClusterIP", mutate: func(s *Service) { s.Spec.ExternalTrafficPolicy = ServiceTrafficPolicyLocal },
			want: []string{"FieldValueInvalid spec.externalTrafficPolicy"}},
		{name: "bad external policy", mutate: func(s *Service) {
			s.Spec.Type = ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = "Global"
			DefaultService(s)
		}, want: []string{"FieldValueNotSupported spec.externalTrafficPolicy"}},
		{name: "healthCheckNodePort without Local", mutate: func(s *Service) {
			s.Spec.Type = ServiceTypeLoadBalancer
			DefaultService(s)
			s.Spec.HealthCheckNodePort = 31000
		}, want: []string{"FieldValueInvalid spec.healthCheckNodePort"}},
		{name: "bad internal policy", mutate: func(s *Service) { s.Spec.InternalTrafficPolicy = ptrTo("Node") },
			want: []string{"FieldValueNotSupported spec.internalTrafficPolicy"}},
		{name: "missing internal policy", mutate: func(s *Service) { s.Spec.InternalTrafficPolicy = nil },
			want: []string{"FieldValueRequired spec.internalTrafficPolicy"}},
		{name: "affinity timeout zero", mutate: func(s *Service) {
			s.Spec.SessionAffinity = ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &SessionAffinityConfig{ClientIP: &ClientIPConfig{TimeoutSeconds: ptrTo[int32](0)}}
		}, want: []string{"FieldValueInvalid spec.sessionAffinityConfig.clientIP.timeoutSeconds"}},
		{name: "affinity timeout over a day", mutate: func(s *Service) {
			s.Spec.SessionAffinity = ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &SessionAffinityConfig{ClientIP: &ClientIPConfig{TimeoutSeconds: ptrTo[int32](86401)}}
		}, want: []string{"FieldValueInvalid spec.sessionAffinityConfig.clientIP.timeoutSeconds"}},
		{name: "affinity config with None", mutate: func(s *Service) {
			s.Spec.SessionAffinityConfig = &SessionAffinityConfig{ClientIP: &ClientIPConfig{TimeoutSeconds: ptrTo[int32](10)}}
		}, want: []string{"FieldValueForbidden spec.sessionAffinityConfig"}},
		{name: "bad affinity", mutate: func(s *Service) { s.Spec.SessionAffinity = "Cookie" },
			want: []string{"FieldValueNotSupported spec.sessionAffinity"}},
		{name: "bad external IP", mutate: func(s *Service) { s.Spec.ExternalIPs = []string{"1.2.3"}; DefaultService(s) },
			want: []string{"FieldValueInvalid spec.externalIPs[0]"}},
		{name: "loopback external IP", mutate: func(s *Service) { s.Spec.ExternalIPs = []string{"127.0.0.1"}; DefaultService(s) },
			want: []string{"FieldValueInvalid spec.externalIPs[0]"}},
		{name: "source ranges on ClusterIP", mutate: func(s *Service) { s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"} },
			want: []string{"FieldValueForbidden spec.LoadBalancerSourceRanges"}},
		{name: "bad source range", mutate: func(s *Service) {
			s.Spec.Type = ServiceTypeLoadBalancer
			s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0"}
			DefaultService(s)
		}, want: []string{"FieldValueInvalid spec.LoadBalancerSourceRanges[0]"}},
		{name: "loadBalancerClass on ClusterIP", mutate: func(s *Service) { s.Spec.LoadBalancerClass = ptrTo("example.com/lb") },
			want: []string{"FieldValueForbidden spec.loadBalancerClass"}},
		{name: "allocateLoadBalancerNodePorts on ClusterIP", mutate: func(s *Service) { s.Spec.AllocateLoadBalancerNodePorts = ptrTo(true) },
			want: []string{"FieldValueForbidden spec.allocateLoadBalancerNodePorts"}},
		{name: "bad appProtocol", mutate: func(s *Service) { s.Spec.Ports[0].AppProtocol = ptrTo("a b") },
			want: []string{"FieldValueInvalid spec.ports[0].appProtocol"}},
		{name: "several errors at once", mutate: func(s *Service) {
			s.Spec.Ports[0].Port = 0
			s.Spec.Ports[0].Protocol = ProtocolSCTP
			s.Spec.SessionAffinity = "Cookie"
		}, want: []string{"FieldValueInvalid spec.ports[0].port", "FieldValueNotSupported spec.ports[0].protocol", "FieldValueNotSupported spec.sessionAffinity"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validService()
			tt.mutate(s)
			checkErrs(t, ValidateService(s), tt.want...)
		})
	}
}

func TestServiceErrorMessages(t *testing.T) {
	s := validService()
	s.Spec.Ports[0].Port = 0
	s.Spec.Ports[0].Protocol = ProtocolSCTP
	errs := ValidateService(s)
	got := errs.Error()
	for _, want := range []string{
		`spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive`,
		`spec.ports[0].protocol: Unsupported value: "SCTP": supported values: "TCP", "UDP"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not contain %q", got, want)
		}
	}
}

func TestValidateServiceUpdate(t *testing.T) {
	tests := []struct {
		name   string
		old    func(*Service)
		mutate func(*Service)
		want   []string
	}{
		{name: "unchanged", mutate: func(*Service) {}},
		{name: "change selector and ports", mutate: func(s *Service) {
			s.Spec.Selector = map[string]string{"app": "web2"}
			s.Spec.Ports[0].Port = 8080
		}},
		{name: "change clusterIP", mutate: func(s *Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.11", []string{"10.96.0.11"}
		}, want: []string{"FieldValueInvalid spec.clusterIPs[0]"}},
		{name: "unset clusterIP", mutate: func(s *Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil },
			want: []string{"FieldValueInvalid spec.clusterIPs[0]"}},
		{name: "to ExternalName drops clusterIP", mutate: func(s *Service) {
			s.Spec.Type = ServiceTypeExternalName
			s.Spec.ExternalName = "db.example.com"
			s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies, s.Spec.IPFamilyPolicy = "", nil, nil, nil
		}},
		{name: "from ExternalName gets any clusterIP", old: func(s *Service) {
			*s = Service{ObjectMeta: s.ObjectMeta, Spec: ServiceSpec{Type: ServiceTypeExternalName, ExternalName: "db.example.com"}}
			DefaultService(s)
		}, mutate: func(s *Service) {}},
		{name: "add secondary IP", mutate: func(s *Service) {
			s.Spec.ClusterIPs = []string{"10.96.0.10", "fd00::10"}
			s.Spec.IPFamilies = []string{IPv4Protocol, IPv6Protocol}
			s.Spec.IPFamilyPolicy = ptrTo(IPFamilyPolicyPreferDualStack)
		}},
		{name: "change primary family", mutate: func(s *Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs, s.Spec.IPFamilies = "fd00::10", []string{"fd00::10"}, []string{IPv6Protocol}
		}, want: []string{"FieldValueInvalid spec.clusterIPs[0]", "FieldValueInvalid spec.ipFamilies[0]"}},
		{name: "rename", mutate: func(s *Service) { s.Name = "web2" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "invalid new object", mutate: func(s *Service) { s.Spec.Ports[0].Port = 0 },
			want: []string{"FieldValueInvalid spec.ports[0].port"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validService()
			if tt.old != nil {
				tt.old(old)
			}
			s := validService()
			if tt.old != nil {
				tt.old(s)
			}
			tt.mutate(s)
			checkErrs(t, ValidateServiceUpdate(s, old), tt.want...)
		})
	}
}

func TestPrepareServiceForUpdate(t *testing.T) {
	np := func() *Service {
		s := validService()
		s.Spec.Type = ServiceTypeNodePort
		s.Spec.Ports = []ServicePort{{Name: "http", Port: 80, NodePort: 30080}, {Name: "https", Port: 443, NodePort: 30443}}
		DefaultService(s)
		return s
	}
	t.Run("keeps allocated values a PUT leaves out", func(t *testing.T) {
		old := np()
		s := &Service{ObjectMeta: old.ObjectMeta, Spec: ServiceSpec{
			Type:     ServiceTypeNodePort,
			Selector: map[string]string{"app": "web"},
			Ports:    []ServicePort{{Name: "https", Port: 443}, {Name: "http", Port: 80}},
		}}
		PrepareServiceForUpdate(s, old)
		DefaultService(s)
		if s.Spec.ClusterIP != "10.96.0.10" || len(s.Spec.ClusterIPs) != 1 {
			t.Fatalf("clusterIP not kept: %q %q", s.Spec.ClusterIP, s.Spec.ClusterIPs)
		}
		if s.Spec.Ports[0].NodePort != 30443 || s.Spec.Ports[1].NodePort != 30080 {
			t.Fatalf("nodePorts not kept by name: %+v", s.Spec.Ports)
		}
		checkErrs(t, ValidateServiceUpdate(s, old))
	})
	t.Run("drops nodePorts when leaving NodePort", func(t *testing.T) {
		old := np()
		s := np()
		s.Spec.Type = ServiceTypeClusterIP
		s.Spec.ExternalTrafficPolicy = ""
		PrepareServiceForUpdate(s, old)
		DefaultService(s)
		for _, p := range s.Spec.Ports {
			if p.NodePort != 0 {
				t.Fatalf("nodePort kept: %+v", s.Spec.Ports)
			}
		}
		checkErrs(t, ValidateServiceUpdate(s, old))
	})
	t.Run("drops clusterIP when moving to ExternalName", func(t *testing.T) {
		old := validService()
		s := validService()
		s.Spec.Type = ServiceTypeExternalName
		s.Spec.ExternalName = "db.example.com"
		s.Spec.InternalTrafficPolicy = nil
		PrepareServiceForUpdate(s, old)
		DefaultService(s)
		if s.Spec.ClusterIP != "" || s.Spec.ClusterIPs != nil || s.Spec.IPFamilies != nil || s.Spec.IPFamilyPolicy != nil {
			t.Fatalf("not dropped: %+v", s.Spec)
		}
		checkErrs(t, ValidateServiceUpdate(s, old))
	})
	t.Run("keeps a user's new nodePort", func(t *testing.T) {
		old := np()
		s := np()
		s.Spec.Ports[0].NodePort = 30999
		PrepareServiceForUpdate(s, old)
		if s.Spec.Ports[0].NodePort != 30999 {
			t.Fatalf("user nodePort overwritten: %+v", s.Spec.Ports)
		}
	})
}

func TestValidateServiceStatusUpdate(t *testing.T) {
	lb := func() *Service {
		s := validService()
		s.Spec.Type = ServiceTypeLoadBalancer
		DefaultService(s)
		return s
	}
	tests := []struct {
		name   string
		svc    func() *Service
		ingres []LoadBalancerIngress
		want   []string
	}{
		{name: "ip", svc: lb, ingres: []LoadBalancerIngress{{IP: "192.168.1.240", IPMode: ptrTo("VIP"), Ports: []PortStatus{{Port: 80, Protocol: ProtocolTCP}}}}},
		{name: "hostname", svc: lb, ingres: []LoadBalancerIngress{{Hostname: "lb.example.com"}}},
		{name: "bad ip", svc: lb, ingres: []LoadBalancerIngress{{IP: "x", IPMode: ptrTo("VIP")}},
			want: []string{"FieldValueInvalid status.loadBalancer.ingress[0].ip"}},
		{name: "ip as hostname", svc: lb, ingres: []LoadBalancerIngress{{Hostname: "10.0.0.1"}},
			want: []string{"FieldValueInvalid status.loadBalancer.ingress[0].hostname"}},
		{name: "ipMode missing", svc: lb, ingres: []LoadBalancerIngress{{IP: "10.0.0.1"}},
			want: []string{"FieldValueRequired status.loadBalancer.ingress[0].ipMode"}},
		{name: "not a LoadBalancer", svc: validService, ingres: []LoadBalancerIngress{{IP: "10.0.0.1", IPMode: ptrTo("VIP")}},
			want: []string{"FieldValueForbidden status.loadBalancer.ingress"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := tt.svc()
			s := tt.svc()
			s.Status.LoadBalancer.Ingress = tt.ingres
			checkErrs(t, ValidateServiceStatusUpdate(s, old), tt.want...)
		})
	}
}
