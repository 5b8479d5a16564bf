package api

import "testing"

func TestValidatePodScheduling(t *testing.T) {
	sel := func() *LabelSelector { return &LabelSelector{MatchLabels: map[string]string{"app": "zk"}} }
	req := func(terms ...NodeSelectorTerm) *Affinity {
		return &Affinity{NodeAffinity: &NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &NodeSelector{NodeSelectorTerms: terms}}}
	}
	expr := func(key string, op NodeSelectorOperator, vals ...string) NodeSelectorTerm {
		return NodeSelectorTerm{MatchExpressions: []NodeSelectorRequirement{{Key: key, Operator: op, Values: vals}}}
	}
	anti := func(t PodAffinityTerm) *Affinity {
		return &Affinity{PodAntiAffinity: &PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []PodAffinityTerm{t}}}
	}
	spread := func(c TopologySpreadConstraint) []TopologySpreadConstraint { return []TopologySpreadConstraint{c} }
	tsc := func() TopologySpreadConstraint {
		return TopologySpreadConstraint{MaxSkew: 1, TopologyKey: LabelTopologyZone, WhenUnsatisfiable: DoNotSchedule, LabelSelector: sel()}
	}
	policy := func(s string) *NodeInclusionPolicy { p := NodeInclusionPolicy(s); return &p }
	na := "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
	pa := "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
	tests := []struct {
		name   string
		mutate func(*PodSpec)
		want   []string
	}{
		{name: "valid everything", mutate: func(s *PodSpec) {
			s.Affinity = req(expr("disk", NodeSelectorOpIn, "ssd"), expr("gpu", NodeSelectorOpDoesNotExist),
				expr("cores", NodeSelectorOpGt, "4"), NodeSelectorTerm{MatchFields: []NodeSelectorRequirement{{Key: "metadata.name", Operator: NodeSelectorOpIn, Values: []string{"n1"}}}})
			s.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []PreferredSchedulingTerm{{Weight: 100, Preference: expr("zone", NodeSelectorOpNotIn, "a")}}
			s.Affinity.PodAffinity = &PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: PodAffinityTerm{LabelSelector: sel(), TopologyKey: LabelHostname, Namespaces: []string{"default"}, MatchLabelKeys: []string{"pod-template-hash"}}}}}
			s.Affinity.PodAntiAffinity = &PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []PodAffinityTerm{{LabelSelector: sel(), TopologyKey: LabelHostname, NamespaceSelector: &LabelSelector{}}}}
			c := tsc()
			c.MinDomains, c.NodeAffinityPolicy, c.NodeTaintsPolicy, c.MatchLabelKeys = ptrTo[int32](3), policy("Honor"), policy("Ignore"), []string{"pod-template-hash"}
			s.TopologySpreadConstraints = []TopologySpreadConstraint{c, {MaxSkew: 2, TopologyKey: LabelHostname, WhenUnsatisfiable: ScheduleAnyway}}
			s.PriorityClassName, s.PreemptionPolicy = "system-node-critical", ptrTo(PreemptNever)
		}},
		{name: "node selector without terms", mutate: func(s *PodSpec) { s.Affinity = req() },
			want: []string{"FieldValueRequired " + na}},
		{name: "In without values", mutate: func(s *PodSpec) { s.Affinity = req(expr("disk", NodeSelectorOpIn)) },
			want: []string{"FieldValueRequired " + na + "[0].matchExpressions[0].values"}},
		{name: "Exists with values", mutate: func(s *PodSpec) { s.Affinity = req(expr("disk", NodeSelectorOpExists, "x")) },
			want: []string{"FieldValueForbidden " + na + "[0].matchExpressions[0].values"}},
		{name: "Gt with two values", mutate: func(s *PodSpec) { s.Affinity = req(expr("cores", NodeSelectorOpGt, "1", "2")) },
			want: []string{"FieldValueRequired " + na + "[0].matchExpressions[0].values"}},
		{name: "unknown operator", mutate: func(s *PodSpec) { s.Affinity = req(expr("disk", "Near", "x")) },
			want: []string{"FieldValueInvalid " + na + "[0].matchExpressions[0].operator"}},
		{name: "bad key and value", mutate: func(s *PodSpec) { s.Affinity = req(expr("bad key", NodeSelectorOpIn, "no spaces")) },
			want: []string{"FieldValueInvalid " + na + "[0].matchExpressions[0].key", "FieldValueInvalid " + na + "[0].matchExpressions[0].values[0]"}},
		{name: "matchFields on a label", mutate: func(s *PodSpec) {
			s.Affinity = req(NodeSelectorTerm{MatchFields: []NodeSelectorRequirement{{Key: "metadata.labels", Operator: NodeSelectorOpIn, Values: []string{"a"}}}})
		}, want: []string{"FieldValueInvalid " + na + "[0].matchFields[0].key"}},
		{name: "matchFields Exists", mutate: func(s *PodSpec) {
			s.Affinity = req(NodeSelectorTerm{MatchFields: []NodeSelectorRequirement{{Key: "metadata.name", Operator: NodeSelectorOpExists}}})
		}, want: []string{"FieldValueInvalid " + na + "[0].matchFields[0].operator"}},
		{name: "preferred weight 0", mutate: func(s *PodSpec) {
			s.Affinity = &Affinity{NodeAffinity: &NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []PreferredSchedulingTerm{{Weight: 0, Preference: expr("a", NodeSelectorOpExists)}}}}
		}, want: []string{"FieldValueInvalid spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight"}},
		{name: "pod affinity term without topologyKey", mutate: func(s *PodSpec) { s.Affinity = anti(PodAffinityTerm{LabelSelector: sel()}) },
			want: []string{"FieldValueRequired " + pa + ".topologyKey", "FieldValueInvalid " + pa + ".topologyKey", "FieldValueInvalid " + pa + ".topologyKey"}},
		{name: "pod affinity bad selector and namespace", mutate: func(s *PodSpec) {
			s.Affinity = anti(PodAffinityTerm{TopologyKey: LabelHostname, Namespaces: []string{"Bad_NS"},
				LabelSelector: &LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "app", Operator: "In"}}}})
		}, want: []string{"FieldValueRequired " + pa + ".labelSelector.matchExpressions[0].values", "FieldValueInvalid " + pa + ".namespace"}},
		{name: "matchLabelKeys without selector", mutate: func(s *PodSpec) {
			s.Affinity = anti(PodAffinityTerm{TopologyKey: LabelHostname, MatchLabelKeys: []string{"a"}})
		}, want: []string{"FieldValueForbidden " + pa + ".matchLabelKeys"}},
		{name: "key in matchLabelKeys and mismatchLabelKeys", mutate: func(s *PodSpec) {
			s.Affinity = anti(PodAffinityTerm{TopologyKey: LabelHostname, LabelSelector: sel(), MatchLabelKeys: []string{"a"}, MismatchLabelKeys: []string{"a"}})
		}, want: []string{"FieldValueInvalid " + pa + ".matchLabelKeys[0]"}},
		{name: "preferred pod affinity weight 101", mutate: func(s *PodSpec) {
			s.Affinity = &Affinity{PodAffinity: &PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []WeightedPodAffinityTerm{{Weight: 101, PodAffinityTerm: PodAffinityTerm{TopologyKey: LabelHostname}}}}}
		}, want: []string{"FieldValueInvalid spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight"}},
		{name: "maxSkew 0", mutate: func(s *PodSpec) { c := tsc(); c.MaxSkew = 0; s.TopologySpreadConstraints = spread(c) },
			want: []string{"FieldValueInvalid spec.topologySpreadConstraints[0].maxSkew"}},
		{name: "spread without topologyKey", mutate: func(s *PodSpec) { c := tsc(); c.TopologyKey = ""; s.TopologySpreadConstraints = spread(c) },
			want: []string{"FieldValueRequired spec.topologySpreadConstraints[0].topologyKey"}},
		{name: "bad whenUnsatisfiable", mutate: func(s *PodSpec) { c := tsc(); c.WhenUnsatisfiable = "Maybe"; s.TopologySpreadConstraints = spread(c) },
			want: []string{"FieldValueNotSupported spec.topologySpreadConstraints[0].whenUnsatisfiable"}},
		{name: "repeated constraint", mutate: func(s *PodSpec) { s.TopologySpreadConstraints = []TopologySpreadConstraint{tsc(), tsc()} },
			want: []string{"FieldValueDuplicate spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}"}},
		{name: "minDomains 0 with ScheduleAnyway", mutate: func(s *PodSpec) {
			c := tsc()
			c.MinDomains, c.WhenUnsatisfiable = ptrTo[int32](0), ScheduleAnyway
			s.TopologySpreadConstraints = spread(c)
		}, want: []string{"FieldValueInvalid spec.topologySpreadConstraints[0].minDomains", "FieldValueInvalid spec.topologySpreadConstraints[0].minDomains"}},
		{name: "bad node policies", mutate: func(s *PodSpec) {
			c := tsc()
			c.NodeAffinityPolicy, c.NodeTaintsPolicy = policy("honor"), policy("x")
			s.TopologySpreadConstraints = spread(c)
		}, want: []string{"FieldValueNotSupported spec.topologySpreadConstraints[0].nodeAffinityPolicy", "FieldValueNotSupported spec.topologySpreadConstraints[0].nodeTaintsPolicy"}},
		{name: "spread matchLabelKeys in selector", mutate: func(s *PodSpec) {
			c := tsc()
			c.MatchLabelKeys = []string{"app"}
			s.TopologySpreadConstraints = spread(c)
		}, want: []string{"FieldValueInvalid spec.topologySpreadConstraints[0].matchLabelKeys[0]"}},
		{name: "spread matchLabelKeys without selector", mutate: func(s *PodSpec) {
			c := tsc()
			c.LabelSelector, c.MatchLabelKeys = nil, []string{"app"}
			s.TopologySpreadConstraints = spread(c)
		}, want: []string{"FieldValueForbidden spec.topologySpreadConstraints[0].matchLabelKeys"}},
		{name: "bad priorityClassName", mutate: func(s *PodSpec) { s.PriorityClassName = "High_Priority" },
			want: []string{"FieldValueInvalid spec.priorityClassName"}},
		{name: "bad preemptionPolicy", mutate: func(s *PodSpec) { s.PreemptionPolicy = ptrTo(PreemptionPolicy("Always")) },
			want: []string{"FieldValueNotSupported spec.preemptionPolicy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPod()
			tt.mutate(&p.Spec)
			checkErrs(t, ValidatePod(p), tt.want...)
		})
	}
}

func TestValidatePriorityClass(t *testing.T) {
	valid := func() *PriorityClass {
		pc := &PriorityClass{ObjectMeta: ObjectMeta{Name: "high"}, Value: 1000, Description: "d"}
		DefaultPriorityClass(pc)
		return pc
	}
	tests := []struct {
		name   string
		mutate func(*PriorityClass)
		want   []string
	}{
		{name: "valid", mutate: func(*PriorityClass) {}},
		{name: "negative value is fine", mutate: func(pc *PriorityClass) { pc.Value = -10 }},
		{name: "highest user value", mutate: func(pc *PriorityClass) { pc.Value = HighestUserDefinablePriority }},
		{name: "above the highest user value", mutate: func(pc *PriorityClass) { pc.Value = HighestUserDefinablePriority + 1 },
			want: []string{"FieldValueForbidden value"}},
		{name: "system class with its value", mutate: func(pc *PriorityClass) { pc.Name, pc.Value = SystemNodeCritical, 2000001000 }},
		{name: "system class with another value", mutate: func(pc *PriorityClass) { pc.Name, pc.Value = SystemClusterCritical, 5 },
			want: []string{"FieldValueForbidden metadata.name"}},
		{name: "system class as global default", mutate: func(pc *PriorityClass) {
			pc.Name, pc.Value, pc.GlobalDefault = SystemClusterCritical, 2000000000, true
		}, want: []string{"FieldValueForbidden metadata.name"}},
		{name: "unknown system- name", mutate: func(pc *PriorityClass) { pc.Name = "system-mine" },
			want: []string{"FieldValueForbidden metadata.name"}},
		{name: "bad name", mutate: func(pc *PriorityClass) { pc.Name = "High" }, want: []string{"FieldValueInvalid metadata.name"}},
		{name: "namespace set", mutate: func(pc *PriorityClass) { pc.Namespace = "default" }, want: []string{"FieldValueForbidden metadata.namespace"}},
		{name: "bad preemptionPolicy", mutate: func(pc *PriorityClass) { pc.PreemptionPolicy = ptrTo(PreemptionPolicy("Sometimes")) },
			want: []string{"FieldValueNotSupported preemptionPolicy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pc := valid()
			tt.mutate(pc)
			checkErrs(t, ValidatePriorityClass(pc), tt.want...)
		})
	}
	t.Run("defaults preemptionPolicy", func(t *testing.T) {
		if p := valid().PreemptionPolicy; p == nil || *p != PreemptLowerPriority {
			t.Fatalf("preemptionPolicy = %v", p)
		}
	})
	upd := []struct {
		name   string
		mutate func(*PriorityClass)
		want   []string
	}{
		{name: "description and globalDefault may change", mutate: func(pc *PriorityClass) { pc.Description, pc.GlobalDefault = "x", true }},
		{name: "value is immutable", mutate: func(pc *PriorityClass) { pc.Value = 7 }, want: []string{"FieldValueForbidden value"}},
		{name: "preemptionPolicy is immutable", mutate: func(pc *PriorityClass) { pc.PreemptionPolicy = ptrTo(PreemptNever) },
			want: []string{"FieldValueInvalid preemptionPolicy"}},
	}
	for _, tt := range upd {
		t.Run("update "+tt.name, func(t *testing.T) {
			old := valid()
			old.ResourceVersion = "1"
			pc := valid()
			pc.ResourceVersion = "1"
			tt.mutate(pc)
			checkErrs(t, ValidatePriorityClassUpdate(pc, old), tt.want...)
		})
	}
}

func TestPreparePodForUpdateKeepsPriority(t *testing.T) {
	old := validPod()
	old.Spec.Priority, old.Spec.PreemptionPolicy = ptrTo[int32](2000000000), ptrTo(PreemptLowerPriority)
	p := validPod()
	PreparePodForUpdate(p, old)
	if p.Spec.Priority == nil || *p.Spec.Priority != 2000000000 || p.Spec.PreemptionPolicy == nil || *p.Spec.PreemptionPolicy != PreemptLowerPriority {
		t.Fatalf("priority %v policy %v", p.Spec.Priority, p.Spec.PreemptionPolicy)
	}
	if errs := ValidatePodUpdate(p, old); len(errs) > 0 {
		t.Fatalf("update refused: %v", errs)
	}
}
