package api

import (
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api/field"
)

func TestValidateObjectMeta(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*ObjectMeta)
		want   []string
	}{
		{name: "valid", mutate: func(*ObjectMeta) {}},
		{name: "valid annotations and owner", mutate: func(m *ObjectMeta) {
			m.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}", "Note": "x"}
			m.OwnerReferences = []OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "u", Controller: ptrTo(true)}}
			m.Finalizers = []string{"kubernetes", "example.com/cleanup"}
		}},
		{name: "label key with bad prefix", mutate: func(m *ObjectMeta) { m.Labels = map[string]string{"Example.com/app": "x"} },
			want: []string{"FieldValueInvalid metadata.labels"}},
		{name: "label value too long", mutate: func(m *ObjectMeta) { m.Labels = map[string]string{"app": repeat("a", 64)} },
			want: []string{"FieldValueInvalid metadata.labels[app]"}},
		{name: "annotation bad key", mutate: func(m *ObjectMeta) { m.Annotations = map[string]string{"a b": "x"} },
			want: []string{"FieldValueInvalid metadata.annotations"}},
		{name: "annotations too large", mutate: func(m *ObjectMeta) {
			m.Annotations = map[string]string{"big": repeat("x", TotalAnnotationSizeLimitB)}
		}, want: []string{"FieldValueTooLong metadata.annotations"}},
		{name: "owner without uid", mutate: func(m *ObjectMeta) {
			m.OwnerReferences = []OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "web"}}
		}, want: []string{"FieldValueInvalid metadata.ownerReferences.uid"}},
		{name: "two controllers", mutate: func(m *ObjectMeta) {
			m.OwnerReferences = []OwnerReference{
				{APIVersion: "v1", Kind: "Service", Name: "a", UID: "1", Controller: ptrTo(true)},
				{APIVersion: "v1", Kind: "Service", Name: "b", UID: "2", Controller: ptrTo(true)},
			}
		}, want: []string{"FieldValueInvalid metadata.ownerReferences"}},
		{name: "unqualified finalizer", mutate: func(m *ObjectMeta) { m.Finalizers = []string{"cleanup"} },
			want: []string{"FieldValueInvalid metadata.finalizers"}},
		{name: "orphan and foreground", mutate: func(m *ObjectMeta) { m.Finalizers = []string{"orphan", "foregroundDeletion"} },
			want: []string{"FieldValueInvalid metadata.finalizers"}},
		{name: "negative generation", mutate: func(m *ObjectMeta) { m.Generation = -1 },
			want: []string{"FieldValueInvalid metadata.generation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ObjectMeta{Name: "web", Namespace: "default"}
			tt.mutate(&m)
			checkErrs(t, ValidateObjectMeta(&m, true, NameIsDNSSubdomain, field.NewPath("metadata")), tt.want...)
		})
	}
	t.Run("namespace on cluster-scoped", func(t *testing.T) {
		m := ObjectMeta{Name: "node-1", Namespace: "default"}
		checkErrs(t, ValidateObjectMeta(&m, false, NameIsDNSSubdomain, field.NewPath("metadata")), "FieldValueForbidden metadata.namespace")
	})
}

func TestValidateObjectMetaUpdate(t *testing.T) {
	now := NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	base := func() ObjectMeta {
		return ObjectMeta{Name: "web", Namespace: "default", UID: "u1", Generation: 2, CreationTimestamp: now}
	}
	tests := []struct {
		name   string
		old    func(*ObjectMeta)
		mutate func(*ObjectMeta)
		want   []string
	}{
		{name: "labels may change", mutate: func(m *ObjectMeta) { m.Labels = map[string]string{"a": "b"} }},
		{name: "namespace immutable", mutate: func(m *ObjectMeta) { m.Namespace = "other" },
			want: []string{"FieldValueInvalid metadata.namespace"}},
		{name: "creationTimestamp immutable", mutate: func(m *ObjectMeta) { m.CreationTimestamp = Now() },
			want: []string{"FieldValueInvalid metadata.creationTimestamp"}},
		{name: "generation decrement", mutate: func(m *ObjectMeta) { m.Generation = 1 },
			want: []string{"FieldValueInvalid metadata.generation"}},
		{name: "no new finalizer while deleting", old: func(m *ObjectMeta) { m.DeletionTimestamp = &now },
			mutate: func(m *ObjectMeta) { m.DeletionTimestamp = &now; m.Finalizers = []string{"example.com/x"} },
			want:   []string{"FieldValueForbidden metadata.finalizers"}},
		{name: "removing a finalizer while deleting", old: func(m *ObjectMeta) { m.DeletionTimestamp = &now; m.Finalizers = []string{"example.com/x"} },
			mutate: func(m *ObjectMeta) { m.DeletionTimestamp = &now }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, m := base(), base()
			if tt.old != nil {
				tt.old(&old)
			}
			tt.mutate(&m)
			checkErrs(t, ValidateObjectMetaUpdate(&m, &old, field.NewPath("metadata")), tt.want...)
		})
	}
	t.Run("PrepareObjectMetaForUpdate restores system fields", func(t *testing.T) {
		old := base()
		old.DeletionTimestamp = &now
		m := ObjectMeta{Name: "web", Namespace: "default", Generation: 7}
		PrepareObjectMetaForUpdate(&m, &old)
		checkErrs(t, ValidateObjectMetaUpdate(&m, &old, field.NewPath("metadata")))
		if m.Generation != 2 || m.UID != "u1" {
			t.Fatalf("got %+v", m)
		}
	})
}

func TestValidateNamespace(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Namespace)
		want   []string
	}{
		{name: "valid", mutate: func(*Namespace) {}},
		{name: "dotted name", mutate: func(n *Namespace) { n.Name = "team.a" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "namespace set", mutate: func(n *Namespace) { n.Namespace = "default" },
			want: []string{"FieldValueForbidden metadata.namespace"}},
		{name: "bad spec finalizer", mutate: func(n *Namespace) { n.Spec.Finalizers = []string{"custom"} },
			want: []string{"FieldValueInvalid spec.finalizers"}},
		{name: "bad phase", mutate: func(n *Namespace) { n.Status.Phase = "Gone" },
			want: []string{"FieldValueNotSupported status.phase"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := validNamespace()
			tt.mutate(n)
			checkErrs(t, ValidateNamespace(n), tt.want...)
		})
	}
}

func TestValidateNode(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Node)
		want   []string
	}{
		{name: "valid", mutate: func(*Node) {}},
		{name: "valid dual stack", mutate: func(n *Node) { n.Spec.PodCIDRs = []string{"10.244.1.0/24", "fd00:1::/64"} }},
		{name: "bad podCIDR", mutate: func(n *Node) { n.Spec.PodCIDR, n.Spec.PodCIDRs = "10.244.1.0", []string{"10.244.1.0"} },
			want: []string{"FieldValueInvalid spec.podCIDR", "FieldValueInvalid spec.podCIDRs[0]"}},
		{name: "two v4 podCIDRs", mutate: func(n *Node) { n.Spec.PodCIDRs = []string{"10.244.1.0/24", "10.245.1.0/24"} },
			want: []string{"FieldValueInvalid spec.podCIDRs"}},
		{name: "bad taint effect", mutate: func(n *Node) { n.Spec.Taints = []Taint{{Key: "k", Effect: "Evict"}} },
			want: []string{"FieldValueNotSupported spec.taints[0].effect"}},
		{name: "bad address", mutate: func(n *Node) { n.Status.Addresses[0].Address = "node" },
			want: []string{"FieldValueInvalid status.addresses[0].address"}},
		{name: "bad capacity", mutate: func(n *Node) { n.Status.Capacity["cpu"] = "two" },
			want: []string{"FieldValueInvalid status.capacity[cpu]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := validNode()
			tt.mutate(n)
			checkErrs(t, ValidateNode(n), tt.want...)
		})
	}
	t.Run("podCIDR set once", func(t *testing.T) {
		old := validNode()
		old.Spec.PodCIDR, old.Spec.PodCIDRs = "", nil
		n := validNode()
		checkErrs(t, ValidateNodeUpdate(n, old))
		n2 := validNode()
		n2.Spec.PodCIDR, n2.Spec.PodCIDRs = "10.244.2.0/24", []string{"10.244.2.0/24"}
		checkErrs(t, ValidateNodeUpdate(n2, validNode()), "FieldValueForbidden spec.podCIDRs")
	})
}

func TestValidateEvent(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Event)
		want   []string
	}{
		{name: "valid", mutate: func(*Event) {}},
		{name: "valid cluster-scoped object in default", mutate: func(e *Event) {
			e.InvolvedObject = ObjectReference{Kind: "Node", Name: "node-1"}
		}},
		{name: "valid new-style", mutate: func(e *Event) {
			e.EventTime = MicroTime{time.Now()}
			e.ReportingController, e.ReportingInstance, e.Action = "skiff.dev/scheduler", "server-1", "Binding"
		}},
		{name: "namespace mismatch", mutate: func(e *Event) { e.InvolvedObject.Namespace = "other" },
			want: []string{"FieldValueInvalid involvedObject.namespace"}},
		{name: "new-style missing fields", mutate: func(e *Event) {
			e.EventTime = MicroTime{time.Now()}
			e.Reason = ""
		}, want: []string{"FieldValueRequired reportingComponent",
			"FieldValueRequired reportingInstance", "FieldValueRequired action", "FieldValueRequired reason"}},
		{name: "bad type", mutate: func(e *Event) { e.Type = "Error" },
			want: []string{"FieldValueNotSupported type"}},
		{name: "name with slash", mutate: func(e *Event) { e.Name = "a/b" },
			want: []string{"FieldValueInvalid metadata.name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := validEvent()
			tt.mutate(e)
			checkErrs(t, ValidateEvent(e), tt.want...)
		})
	}
	t.Run("count and lastTimestamp may be updated", func(t *testing.T) {
		old := validEvent()
		e := validEvent()
		e.Count = 2
		e.LastTimestamp = Now()
		checkErrs(t, ValidateEventUpdate(e, old))
	})
}

func TestValidateEndpointSlice(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*EndpointSlice)
		want   []string
	}{
		{name: "valid", mutate: func(*EndpointSlice) {}},
		{name: "valid no endpoints", mutate: func(s *EndpointSlice) { s.Endpoints = nil }},
		{name: "valid ipv6", mutate: func(s *EndpointSlice) {
			s.AddressType = AddressTypeIPv6
			s.Endpoints[0].Addresses = []string{"fd00::5"}
		}},
		{name: "valid fqdn", mutate: func(s *EndpointSlice) {
			s.AddressType = AddressTypeFQDN
			s.Endpoints[0].Addresses = []string{"db.example.com"}
		}},
		{name: "valid hostname", mutate: func(s *EndpointSlice) { s.Endpoints[0].Hostname = ptrTo("web-0") }},
		{name: "missing addressType", mutate: func(s *EndpointSlice) { s.AddressType = "" },
			want: []string{"FieldValueRequired addressType"}},
		{name: "bad addressType", mutate: func(s *EndpointSlice) { s.AddressType = "IP" },
			want: []string{"FieldValueNotSupported addressType"}},
		{name: "ipv6 address in IPv4 slice", mutate: func(s *EndpointSlice) { s.Endpoints[0].Addresses = []string{"fd00::5"} },
			want: []string{"FieldValueInvalid endpoints[0].addresses[0]"}},
		{name: "loopback address", mutate: func(s *EndpointSlice) { s.Endpoints[0].Addresses = []string{"127.0.0.1"} },
			want: []string{"FieldValueInvalid endpoints[0].addresses[0]"}},
		{name: "no addresses", mutate: func(s *EndpointSlice) { s.Endpoints[0].Addresses = nil },
			want: []string{"FieldValueRequired endpoints[0].addresses"}},
		{name: "bad fqdn", mutate: func(s *EndpointSlice) {
			s.AddressType = AddressTypeFQDN
			s.Endpoints[0].Addresses = []string{"localhost"}
		}, want: []string{"FieldValueInvalid endpoints[0].addresses[0]"}},
		{name: "too many endpoints", mutate: func(s *EndpointSlice) {
			s.Endpoints = make([]Endpoint, MaxEndpointsPerSlice+1)
		}, want: []string{"FieldValueTooMany endpoints"}},
		{name: "valid hints", mutate: func(s *EndpointSlice) {
			s.Endpoints[0].Hints = &EndpointHints{ForZones: []ForZone{{Name: "zone-a"}}, ForNodes: []ForNode{{Name: "node-1"}}}
		}},
		{name: "too many zone and node hints", mutate: func(s *EndpointSlice) {
			s.Endpoints[0].Hints = &EndpointHints{ForZones: make([]ForZone, maxZoneHints+1), ForNodes: make([]ForNode, maxNodeHints+1)}
		}, want: []string{"FieldValueTooMany endpoints[0].hints.forZones", "FieldValueTooMany endpoints[0].hints.forNodes"}},
		{name: "duplicate and bad hints", mutate: func(s *EndpointSlice) {
			s.Endpoints[0].Hints = &EndpointHints{ForZones: []ForZone{{Name: "a"}, {Name: "a"}}, ForNodes: []ForNode{{Name: "Node_1"}}}
		}, want: []string{"FieldValueDuplicate endpoints[0].hints.forZones[1].name", "FieldValueInvalid endpoints[0].hints.forNodes[0].name"}},
		{name: "bad hostname", mutate: func(s *EndpointSlice) { s.Endpoints[0].Hostname = ptrTo("web.0") },
			want: []string{"FieldValueInvalid endpoints[0].hostname"}},
		{name: "bad nodeName", mutate: func(s *EndpointSlice) { s.Endpoints[0].NodeName = ptrTo("Node_1") },
			want: []string{"FieldValueInvalid endpoints[0].nodeName"}},
		{name: "duplicate port name", mutate: func(s *EndpointSlice) {
			s.Ports = append(s.Ports, EndpointPort{Name: ptrTo("http"), Protocol: ptrTo(ProtocolTCP), Port: ptrTo[int32](81)})
		}, want: []string{"FieldValueDuplicate ports[1].name"}},
		{name: "bad port name", mutate: func(s *EndpointSlice) { s.Ports[0].Name = ptrTo("HTTP") },
			want: []string{"FieldValueInvalid ports[0].name"}},
		{name: "missing protocol", mutate: func(s *EndpointSlice) { s.Ports[0].Protocol = nil },
			want: []string{"FieldValueRequired ports[0].protocol"}},
		{name: "sctp port", mutate: func(s *EndpointSlice) { s.Ports[0].Protocol = ptrTo(ProtocolSCTP) },
			want: []string{"FieldValueNotSupported ports[0].protocol"}},
		{name: "port zero", mutate: func(s *EndpointSlice) { s.Ports[0].Port = ptrTo[int32](0) },
			want: []string{"FieldValueInvalid ports[0].port"}},
		{name: "missing service-name label value", mutate: func(s *EndpointSlice) { s.Labels[LabelServiceName] = "-web" },
			want: []string{"FieldValueInvalid metadata.labels[kubernetes.io/service-name]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validEndpointSlice()
			tt.mutate(s)
			checkErrs(t, ValidateEndpointSlice(s), tt.want...)
		})
	}
	t.Run("addressType immutable", func(t *testing.T) {
		old := validEndpointSlice()
		s := validEndpointSlice()
		s.AddressType = AddressTypeIPv6
		s.Endpoints = nil
		checkErrs(t, ValidateEndpointSliceUpdate(s, old), "FieldValueInvalid addressType")
		s2 := validEndpointSlice()
		s2.Endpoints[0].Conditions.Ready = ptrTo(false)
		checkErrs(t, ValidateEndpointSliceUpdate(s2, old))
	})
}

func TestValidateServiceCIDR(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*ServiceCIDR)
		want   []string
	}{
		{name: "valid", mutate: func(*ServiceCIDR) {}},
		{name: "valid dual", mutate: func(c *ServiceCIDR) { c.Spec.CIDRs = []string{"10.96.0.0/16", "fd00:10:96::/112"} }},
		{name: "none", mutate: func(c *ServiceCIDR) { c.Spec.CIDRs = nil },
			want: []string{"FieldValueRequired spec.cidrs"}},
		{name: "three", mutate: func(c *ServiceCIDR) { c.Spec.CIDRs = []string{"10.0.0.0/8", "fd00::/64", "10.1.0.0/16"} },
			want: []string{"FieldValueInvalid spec.cidrs"}},
		{name: "same family twice", mutate: func(c *ServiceCIDR) { c.Spec.CIDRs = []string{"10.0.0.0/8", "11.0.0.0/8"} },
			want: []string{"FieldValueInvalid spec.cidrs"}},
		{name: "bad cidr", mutate: func(c *ServiceCIDR) { c.Spec.CIDRs = []string{"10.0.0.0/40"} },
			want: []string{"FieldValueInvalid spec.cidrs[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validServiceCIDR()
			tt.mutate(c)
			checkErrs(t, ValidateServiceCIDR(c), tt.want...)
		})
	}
	t.Run("update", func(t *testing.T) {
		old := validServiceCIDR()
		c := validServiceCIDR()
		c.Spec.CIDRs = append(c.Spec.CIDRs, "fd00::/108")
		checkErrs(t, ValidateServiceCIDRUpdate(c, old))
		c2 := validServiceCIDR()
		c2.Spec.CIDRs = []string{"10.97.0.0/16"}
		checkErrs(t, ValidateServiceCIDRUpdate(c2, old), "FieldValueInvalid spec.cidrs")
	})
	t.Run("status", func(t *testing.T) {
		old := validServiceCIDR()
		c := validServiceCIDR()
		c.Status.Conditions = []Condition{{Type: "Ready", Status: ConditionTrue, Reason: "Ready", LastTransitionTime: Now()}}
		checkErrs(t, ValidateServiceCIDRStatusUpdate(c, old))
		c.Status.Conditions[0].Status = "Yes"
		checkErrs(t, ValidateServiceCIDRStatusUpdate(c, old), "FieldValueNotSupported status.conditions[0].status")
	})
}

func TestValidateIPAddress(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*IPAddress)
		want   []string
	}{
		{name: "valid", mutate: func(*IPAddress) {}},
		{name: "valid ipv6", mutate: func(a *IPAddress) { a.Name = "fd00::a" }},
		{name: "not canonical", mutate: func(a *IPAddress) { a.Name = "fd00:0::a" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "not an IP", mutate: func(a *IPAddress) { a.Name = "web" },
			want: []string{"FieldValueInvalid metadata.name"}},
		{name: "no parentRef", mutate: func(a *IPAddress) { a.Spec.ParentRef = nil },
			want: []string{"FieldValueRequired spec.parentRef"}},
		{name: "parentRef without resource and name", mutate: func(a *IPAddress) { a.Spec.ParentRef = &ParentReference{} },
			want: []string{"FieldValueRequired spec.parentRef.resource", "FieldValueRequired spec.parentRef.name"}},
		{name: "bad parent namespace", mutate: func(a *IPAddress) { a.Spec.ParentRef.Namespace = "A" },
			want: []string{"FieldValueInvalid spec.parentRef.namespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := validIPAddress()
			tt.mutate(a)
			checkErrs(t, ValidateIPAddress(a), tt.want...)
		})
	}
	t.Run("spec immutable", func(t *testing.T) {
		a := validIPAddress()
		a.Spec.ParentRef.Name = "other"
		checkErrs(t, ValidateIPAddressUpdate(a, validIPAddress()), "FieldValueInvalid spec.parentRef")
	})
}

func TestValidateLease(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Lease)
		want   []string
	}{
		{name: "valid", mutate: func(*Lease) {}},
		{name: "valid times", mutate: func(l *Lease) {
			now := MicroTime{time.Now()}
			l.Spec.AcquireTime, l.Spec.RenewTime, l.Spec.LeaseTransitions = &now, &now, ptrTo[int32](3)
		}},
		{name: "zero duration", mutate: func(l *Lease) { l.Spec.LeaseDurationSeconds = ptrTo[int32](0) },
			want: []string{"FieldValueInvalid spec.leaseDurationSeconds"}},
		{name: "negative transitions", mutate: func(l *Lease) { l.Spec.LeaseTransitions = ptrTo[int32](-1) },
			want: []string{"FieldValueInvalid spec.leaseTransitions"}},
		{name: "no namespace", mutate: func(l *Lease) { l.Namespace = "" },
			want: []string{"FieldValueRequired metadata.namespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := validLease()
			tt.mutate(l)
			checkErrs(t, ValidateLease(l), tt.want...)
		})
	}
}

func TestValidateBindingAndDeleteOptions(t *testing.T) {
	checkErrs(t, ValidateBinding(&Binding{Target: ObjectReference{Kind: "Node", Name: "node-1"}}))
	checkErrs(t, ValidateBinding(&Binding{Target: ObjectReference{Name: "node-1"}}))
	checkErrs(t, ValidateBinding(&Binding{Target: ObjectReference{Kind: "Pod", Name: "x"}}), "FieldValueNotSupported target.kind")
	checkErrs(t, ValidateBinding(&Binding{}), "FieldValueRequired target.name")

	fg := DeletePropagationForeground
	bad := DeletionPropagation("Later")
	checkErrs(t, ValidateDeleteOptions(&DeleteOptions{PropagationPolicy: &fg, GracePeriodSeconds: ptrTo[int64](0), DryRun: []string{"All"}}))
	checkErrs(t, ValidateDeleteOptions(&DeleteOptions{PropagationPolicy: &bad}), "FieldValueNotSupported propagationPolicy")
	checkErrs(t, ValidateDeleteOptions(&DeleteOptions{GracePeriodSeconds: ptrTo[int64](-1)}), "FieldValueInvalid gracePeriodSeconds")
	checkErrs(t, ValidateDeleteOptions(&DeleteOptions{DryRun: []string{"Some"}}), "FieldValueNotSupported dryRun[0]")
	checkErrs(t, ValidateDeleteOptions(&DeleteOptions{PropagationPolicy: &fg, OrphanDependents: ptrTo(true)}), "FieldValueInvalid propagationPolicy")
}

func TestSelectorHelpers(t *testing.T) {
	sel := &LabelSelector{
		MatchLabels: map[string]string{"app": "web"},
		MatchExpressions: []LabelSelectorRequirement{
			{Key: "tier", Operator: LabelSelectorOpIn, Values: []string{"front", "api"}},
			{Key: "env", Operator: LabelSelectorOpNotIn, Values: []string{"dev"}},
			{Key: "release", Operator: LabelSelectorOpExists},
			{Key: "canary", Operator: LabelSelectorOpDoesNotExist},
		},
	}
	if got, want := SelectorString(sel), "app=web,!canary,env notin (dev),release,tier in (api,front)"; got != want {
		t.Errorf("SelectorString = %q, want %q", got, want)
	}
	tests := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"all match", map[string]string{"app": "web", "tier": "api", "release": "1"}, true},
		{"notin key absent ok", map[string]string{"app": "web", "tier": "front", "release": "1", "env": "prod"}, true},
		{"wrong app", map[string]string{"app": "db", "tier": "api", "release": "1"}, false},
		{"tier not in set", map[string]string{"app": "web", "tier": "back", "release": "1"}, false},
		{"env excluded", map[string]string{"app": "web", "tier": "api", "release": "1", "env": "dev"}, false},
		{"release missing", map[string]string{"app": "web", "tier": "api"}, false},
		{"canary present", map[string]string{"app": "web", "tier": "api", "release": "1", "canary": "y"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SelectorMatches(sel, tt.labels); got != tt.want {
				t.Fatalf("SelectorMatches = %v", got)
			}
		})
	}
	if SelectorMatches(nil, map[string]string{}) {
		t.Error("nil selector matched")
	}
	if !SelectorMatches(&LabelSelector{}, map[string]string{"a": "b"}) {
		t.Error("empty selector did not match")
	}
	if SelectorString(nil) != "" || SelectorString(&LabelSelector{}) != "" {
		t.Error("empty selector string")
	}
}
