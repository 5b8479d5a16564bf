package scheduler

import (
	"testing"

	"github.com/skiff-dev/skiff/api"
)

// decide runs one decision through the cache's counts (the pure filter and
// score step, without assuming the pod) and returns the node or the
// failure message.
func decide(nodes []*api.Node, bound []*api.Pod, p *api.Pod) (string, string) {
	c := cacheWith(nodes, bound)
	info := newPodInfo(p)
	d := scheduleWith(info, c.order, 0, c.topoStateLocked(info))
	if d.node == nil {
		return "", d.message()
	}
	return d.node.name, ""
}

func zoned(zone string) func(*api.Node) {
	return func(n *api.Node) { n.Labels[api.LabelTopologyZone] = zone }
}

func labeled(kv ...string) func(*api.Pod) {
	return func(p *api.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func nodeLabel(k, v string) func(*api.Node) { return func(n *api.Node) { n.Labels[k] = v } }

func requiredNode(terms ...api.NodeSelectorTerm) func(*api.Pod) {
	return func(p *api.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &api.Affinity{}
		}
		p.Spec.Affinity.NodeAffinity = &api.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &api.NodeSelector{NodeSelectorTerms: terms}}
	}
}

func term(key string, op api.NodeSelectorOperator, vals ...string) api.NodeSelectorTerm {
	return api.NodeSelectorTerm{MatchExpressions: []api.NodeSelectorRequirement{{Key: key, Operator: op, Values: vals}}}
}

func appSel(app string) *api.LabelSelector {
	return &api.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

func podAff(anti bool, required bool, weight int32, t api.PodAffinityTerm) func(*api.Pod) {
	return func(p *api.Pod) {
		if p.Spec.Affinity == nil {
			p.Spec.Affinity = &api.Affinity{}
		}
		a := p.Spec.Affinity
		var req *[]api.PodAffinityTerm
		var pref *[]api.WeightedPodAffinityTerm
		if anti {
			if a.PodAntiAffinity == nil {
				a.PodAntiAffinity = &api.PodAntiAffinity{}
			}
			req, pref = &a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, &a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		} else {
			if a.PodAffinity == nil {
				a.PodAffinity = &api.PodAffinity{}
			}
			req, pref = &a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, &a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		}
		if required {
			*req = append(*req, t)
		} else {
			*pref = append(*pref, api.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: t})
		}
	}
}

func TestNodeAffinity(t *testing.T) {
	ab := []*api.Node{node("a", nodeLabel("disk", "hdd"), nodeLabel("cores", "4")), node("b", nodeLabel("disk", "ssd"), nodeLabel("cores", "16"))}
	tests := []struct {
		name  string
		nodes []*api.Node
		pod   *api.Pod
		want  string
		msg   string
	}{
		{name: "In", nodes: ab, pod: pod("p", requiredNode(term("disk", api.NodeSelectorOpIn, "ssd"))), want: "b"},
		{name: "NotIn", nodes: ab, pod: pod("p", requiredNode(term("disk", api.NodeSelectorOpNotIn, "hdd"))), want: "b"},
		{name: "NotIn matches a node without the label", nodes: []*api.Node{node("a")},
			pod: pod("p", requiredNode(term("disk", api.NodeSelectorOpNotIn, "hdd"))), want: "a"},
		{name: "Exists", nodes: []*api.Node{node("a"), node("b", nodeLabel("gpu", ""))},
			pod: pod("p", requiredNode(term("gpu", api.NodeSelectorOpExists))), want: "b"},
		{name: "DoesNotExist", nodes: []*api.Node{node("a", nodeLabel("gpu", "")), node("b")},
			pod: pod("p", requiredNode(term("gpu", api.NodeSelectorOpDoesNotExist))), want: "b"},
		{name: "Gt", nodes: ab, pod: pod("p", requiredNode(term("cores", api.NodeSelectorOpGt, "8"))), want: "b"},
		{name: "Lt", nodes: ab, pod: pod("p", requiredNode(term("cores", api.NodeSelectorOpLt, "8"))), want: "a"},
		{name: "Gt on a value that is not a number matches nothing", nodes: []*api.Node{node("a", nodeLabel("cores", "many"))},
			pod: pod("p", requiredNode(term("cores", api.NodeSelectorOpGt, "1"))),
			msg: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."},
		{name: "terms are ORed", nodes: ab,
			pod: pod("p", requiredNode(term("disk", api.NodeSelectorOpIn, "nvme"), term("cores", api.NodeSelectorOpIn, "4"))), want: "a"},
		{name: "expressions in a term are ANDed", nodes: ab,
			pod: pod("p", requiredNode(api.NodeSelectorTerm{MatchExpressions: []api.NodeSelectorRequirement{
				{Key: "disk", Operator: api.NodeSelectorOpIn, Values: []string{"ssd"}}, {Key: "cores", Operator: api.NodeSelectorOpIn, Values: []string{"4"}}}})),
			msg: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."},
		{name: "an empty term matches nothing", nodes: ab, pod: pod("p", requiredNode(api.NodeSelectorTerm{})),
			msg: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."},
		{name: "matchFields metadata.name", nodes: ab,
			pod: pod("p", requiredNode(api.NodeSelectorTerm{MatchFields: []api.NodeSelectorRequirement{{Key: "metadata.name", Operator: api.NodeSelectorOpIn, Values: []string{"b"}}}})), want: "b"},
		{name: "nodeSelector and affinity both apply", nodes: ab,
			pod: pod("p", requiredNode(term("disk", api.NodeSelectorOpIn, "ssd")), func(p *api.Pod) { p.Spec.NodeSelector = map[string]string{"cores": "4"} }),
			msg: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."},
		{name: "preferred weights win over least requested", nodes: ab,
			pod: pod("p", func(p *api.Pod) {
				p.Spec.Affinity = &api.Affinity{NodeAffinity: &api.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []api.PreferredSchedulingTerm{
					{Weight: 10, Preference: term("disk", api.NodeSelectorOpIn, "hdd")}, {Weight: 50, Preference: term("cores", api.NodeSelectorOpGt, "8")}}}}
			}), want: "b"},
		{name: "preferred weights add up", nodes: []*api.Node{node("a", nodeLabel("x", "1")), node("b", nodeLabel("y", "1"), nodeLabel("z", "1"))},
			pod: pod("p", func(p *api.Pod) {
				p.Spec.Affinity = &api.Affinity{NodeAffinity: &api.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []api.PreferredSchedulingTerm{
					{Weight: 50, Preference: term("x", api.NodeSelectorOpExists)}, {Weight: 30, Preference: term("y", api.NodeSelectorOpExists)},
					{Weight: 30, Preference: term("z", api.NodeSelectorOpExists)}}}}
			}), want: "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := decide(tt.nodes, nil, tt.pod)
			if got != tt.want || msg != tt.msg {
				t.Fatalf("got node %q message %q, want %q %q", got, msg, tt.want, tt.msg)
			}
		})
	}
}

func TestInterPodAffinity(t *testing.T) {
	host := func(sel *api.LabelSelector) api.PodAffinityTerm {
		return api.PodAffinityTerm{LabelSelector: sel, TopologyKey: api.LabelHostname}
	}
	zone := func(sel *api.LabelSelector) api.PodAffinityTerm {
		return api.PodAffinityTerm{LabelSelector: sel, TopologyKey: api.LabelTopologyZone}
	}
	three := func() []*api.Node {
		return []*api.Node{node("a", zoned("z1")), node("b", zoned("z1")), node("c", zoned("z2"))}
	}
	tests := []struct {
		name  string
		nodes []*api.Node
		bound []*api.Pod
		pod   *api.Pod
		want  string
		msg   string
	}{
		{name: "required affinity to a zone with a matching pod", nodes: three(),
			bound: []*api.Pod{pod("db", boundTo("c"), labeled("app", "db"))},
			pod:   pod("p", podAff(false, true, 0, zone(appSel("db")))), want: "c"},
		{name: "required affinity by zone allows the other node of the zone", nodes: three(),
			bound: []*api.Pod{pod("db", boundTo("a"), labeled("app", "db"))},
			pod:   pod("p", podAff(false, true, 0, zone(appSel("db")))), want: "b"},
		{name: "required affinity, no matching pod anywhere", nodes: three(),
			pod: pod("p", podAff(false, true, 0, zone(appSel("db")))),
			msg: "0/3 nodes are available: 3 node(s) didn't match pod affinity rules."},
		{name: "required affinity to itself: the first pod goes anywhere", nodes: three(),
			pod: pod("p", labeled("app", "web"), podAff(false, true, 0, zone(appSel("web")))), want: "a"},
		{name: "required affinity: a node without the topology label fails", nodes: []*api.Node{node("a")},
			pod: pod("p", labeled("app", "web"), podAff(false, true, 0, zone(appSel("web")))),
			msg: "0/1 nodes are available: 1 node(s) didn't match pod affinity rules."},
		{name: "affinity term in another namespace does not see the pod", nodes: three(),
			bound: []*api.Pod{pod("db", boundTo("c"), labeled("app", "db"), func(p *api.Pod) { p.Namespace = "other" })},
			pod:   pod("p", podAff(false, true, 0, zone(appSel("db")))),
			msg:   "0/3 nodes are available: 3 node(s) didn't match pod affinity rules."},
		{name: "affinity term namespaces list", nodes: three(),
			bound: []*api.Pod{pod("db", boundTo("c"), labeled("app", "db"), func(p *api.Pod) { p.Namespace = "other" })},
			pod:   pod("p", podAff(false, true, 0, api.PodAffinityTerm{LabelSelector: appSel("db"), TopologyKey: api.LabelTopologyZone, Namespaces: []string{"other"}})),
			want:  "c"},
		{name: "affinity term empty namespaceSelector: every namespace", nodes: three(),
			bound: []*api.Pod{pod("db", boundTo("c"), labeled("app", "db"), func(p *api.Pod) { p.Namespace = "other" })},
			pod:   pod("p", podAff(false, true, 0, api.PodAffinityTerm{LabelSelector: appSel("db"), TopologyKey: api.LabelTopologyZone, NamespaceSelector: &api.LabelSelector{}})),
			want:  "c"},
		{name: "required anti-affinity by hostname", nodes: three(),
			bound: []*api.Pod{pod("w1", boundTo("a"), labeled("app", "web")), pod("w2", boundTo("c"), labeled("app", "web"))},
			pod:   pod("p", labeled("app", "web"), podAff(true, true, 0, host(appSel("web")))), want: "b"},
		{name: "required anti-affinity by zone", nodes: three(),
			bound: []*api.Pod{pod("w1", boundTo("a"), labeled("app", "web"))},
			pod:   pod("p", labeled("app", "web"), podAff(true, true, 0, zone(appSel("web")))), want: "c"},
		{name: "required anti-affinity: every domain taken", nodes: three(),
			bound: []*api.Pod{pod("w1", boundTo("a"), labeled("app", "web")), pod("w2", boundTo("c"), labeled("app", "web"))},
			pod:   pod("p", labeled("app", "web"), podAff(true, true, 0, zone(appSel("web")))),
			msg:   "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."},
		{name: "required anti-affinity: a node without the label passes", nodes: []*api.Node{node("a", zoned("z1")), node("b")},
			bound: []*api.Pod{pod("w1", boundTo("a"), labeled("app", "web"))},
			pod:   pod("p", labeled("app", "web"), podAff(true, true, 0, zone(appSel("web")))), want: "b"},
		{name: "existing pod's anti-affinity keeps a matching pod out", nodes: three(),
			bound: []*api.Pod{pod("solo", boundTo("a"), labeled("app", "solo"), podAff(true, true, 0, zone(appSel("web"))))},
			pod:   pod("p", labeled("app", "web"), requests("", "")), want: "c"},
		{name: "existing pod's anti-affinity: message", nodes: []*api.Node{node("a", zoned("z1"))},
			bound: []*api.Pod{pod("solo", boundTo("a"), podAff(true, true, 0, zone(appSel("web"))))},
			pod:   pod("p", labeled("app", "web")),
			msg:   "0/1 nodes are available: 1 node(s) didn't satisfy existing pods anti-affinity rules."},
		{name: "existing pod's anti-affinity does not stop a pod it does not select", nodes: []*api.Node{node("a", zoned("z1"))},
			bound: []*api.Pod{pod("solo", boundTo("a"), podAff(true, true, 0, zone(appSel("web"))))},
			pod:   pod("p", labeled("app", "db")), want: "a"},
		{name: "matchLabelKeys narrows the term to the pod's own value", nodes: []*api.Node{node("a")},
			bound: []*api.Pod{pod("old", boundTo("a"), labeled("app", "web", "rev", "1"))},
			pod: pod("p", labeled("app", "web", "rev", "2"),
				podAff(true, true, 0, api.PodAffinityTerm{LabelSelector: appSel("web"), TopologyKey: api.LabelHostname, MatchLabelKeys: []string{"rev"}})),
			want: "a"},
		{name: "mismatchLabelKeys excludes the pod's own value", nodes: []*api.Node{node("a"), node("b")},
			bound: []*api.Pod{pod("t1", boundTo("a"), labeled("app", "x", "tenant", "t1")), pod("t2", boundTo("b"), labeled("app", "x", "tenant", "t2"))},
			pod: pod("p", labeled("app", "x", "tenant", "t1"),
				podAff(true, true, 0, api.PodAffinityTerm{LabelSelector: &api.LabelSelector{}, TopologyKey: api.LabelHostname, MismatchLabelKeys: []string{"tenant"}})),
			want: "a"},
		{name: "preferred affinity draws the pod to its peer", nodes: three(),
			bound: []*api.Pod{pod("db", boundTo("c"), labeled("app", "db"), requests("2", ""))},
			pod:   pod("p", podAff(false, false, 50, host(appSel("db")))), want: "c"},
		{name: "preferred anti-affinity pushes the pod away", nodes: []*api.Node{node("a"), node("b")},
			bound: []*api.Pod{pod("w", boundTo("a"), labeled("app", "web"))},
			pod:   pod("p", labeled("app", "web"), requests("", ""), podAff(true, false, 50, host(appSel("web")))), want: "b"},
		{name: "an existing pod's preferred affinity draws a pod it selects", nodes: []*api.Node{node("a"), node("b")},
			bound: []*api.Pod{pod("cache", boundTo("b"), podAff(false, false, 100, host(appSel("web")))), pod("x", boundTo("a"))},
			pod:   pod("p", labeled("app", "web"), requests("", "")), want: "b"},
		{name: "an existing pod's required affinity scores for a pod it selects", nodes: []*api.Node{node("a"), node("b")},
			bound: []*api.Pod{pod("cache", boundTo("b"), labeled("app", "web"), podAff(false, true, 0, host(appSel("web"))))},
			pod:   pod("p", labeled("app", "web")), want: "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := decide(tt.nodes, tt.bound, tt.pod)
			if got != tt.want || msg != tt.msg {
				t.Fatalf("got node %q message %q, want %q %q", got, msg, tt.want, tt.msg)
			}
		})
	}
}
