package scheduler

import (
	"testing"

	"github.com/skiff-dev/skiff/api"
)

func spreadBy(key string, skew int32, action api.UnsatisfiableConstraintAction, mods ...func(*api.TopologySpreadConstraint)) func(*api.Pod) {
	return func(p *api.Pod) {
		c := api.TopologySpreadConstraint{MaxSkew: skew, TopologyKey: key, WhenUnsatisfiable: action, LabelSelector: appSel("web")}
		for _, m := range mods {
			m(&c)
		}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c)
	}
}

func TestPodTopologySpread(t *testing.T) {
	web := func(name, node string) *api.Pod { return pod(name, boundTo(node), labeled("app", "web")) }
	zones := func() []*api.Node {
		return []*api.Node{node("a", zoned("z1")), node("b", zoned("z1")), node("c", zoned("z2")), node("d", zoned("z2"))}
	}
	honor := api.NodeInclusionPolicyHonor
	ignore := api.NodeInclusionPolicyIgnore
	tests := []struct {
		name  string
		nodes []*api.Node
		bound []*api.Pod
		pod   *api.Pod
		want  string
		msg   string
	}{
		{name: "DoNotSchedule keeps the skew within maxSkew", nodes: zones(),
			bound: []*api.Pod{web("w1", "a"), web("w2", "b")},
			pod:   pod("p", labeled("app", "web"), spreadBy(api.LabelTopologyZone, 1, api.DoNotSchedule)), want: "c"},
		{name: "maxSkew 2 allows one more in the fuller zone", nodes: []*api.Node{node("a", zoned("z1")), node("c", zoned("z2"))},
			bound: []*api.Pod{web("w1", "a")},
			pod:   pod("p", labeled("app", "web"), requests("", ""), spreadBy(api.LabelTopologyZone, 2, api.DoNotSchedule), func(p *api.Pod) { p.Spec.NodeName = "" }),
			want:  "c"}, // both allowed; c is emptier
		{name: "every zone too full: message", nodes: []*api.Node{node("a", zoned("z1")), node("c", zoned("z2")), node("e", zoned("z3"))},
			bound: []*api.Pod{web("w1", "a"), web("w2", "c")},
			pod: pod("p", labeled("app", "web"), spreadBy(api.LabelTopologyZone, 1, api.DoNotSchedule),
				requiredNode(term(api.LabelTopologyZone, api.NodeSelectorOpIn, "z1", "z2"))),
			// z3 is not a domain, so the minimum is 1 and z1 takes a second pod.
			want: "a"},
		{name: "nodeAffinityPolicy Ignore counts the excluded zone", nodes: []*api.Node{node("a", zoned("z1")), node("c", zoned("z2")), node("e", zoned("z3"))},
			bound: []*api.Pod{web("w1", "a"), web("w2", "c")},
			pod: pod("p", labeled("app", "web"), spreadBy(api.LabelTopologyZone, 1, api.DoNotSchedule, func(c *api.TopologySpreadConstraint) { c.NodeAffinityPolicy = &ignore }),
				requiredNode(term(api.LabelTopologyZone, api.NodeSelectorOpIn, "z1", "z2"))),
			msg: "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) didn't match pod topology spread constraints."},
		{name: "a node without the key fails", nodes: []*api.Node{node("a")},
			pod: pod("p", labeled("app", "web"), spreadBy(api.LabelTopologyZone, 1, api.DoNotSchedule)),
			msg: "0/1 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label)."},
		{name: "minDomains above the domain count makes the minimum 0", nodes: []*api.Node{node("a", zoned("z1")), node("c", zoned("z2"))},
			bound: []*api.Pod{web("w1", "a"), web("w2", "c")},
			pod:   pod("p", labeled("app", "web"), spreadBy(api.LabelTopologyZone, 1, api.DoNotSchedule, func(c *api.TopologySpreadConstraint) { c.MinDomains = ptr[int32](3) })),
			msg:   "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints."},
		{name: "minDomains met behaves as without", nodes: []*api.Node{node("a", zoned("z1")), node("c", zoned("z2"))},
			bound: []*api.Pod{web("w1", "a"), web("w2", "c")},
			pod:   pod("p", labeled("app", "web"), spreadBy(api.LabelTopologyZone, 1, api.DoNotSchedule, func(c *api.TopologySpreadConstraint) { c.MinDomains = ptr[int32](2) })),
			want:  "a"},
		{name: "a pod the selector does not match adds no skew of its own", nodes: []*api.Node{node("a", zoned("z1")), node("c", zoned("z2"))},
			bound: []*api.Pod{web("w1", "a")},
			pod:   pod("p", labeled("app", "db"), requests("", ""), spreadBy(api.LabelTopologyZone, 1, api.DoNotSchedule), requiredNode(term(api.LabelTopologyZone, api.NodeSelectorOpIn, "z1"))),
			want:  "a"},
		{name: "pods of other namespaces do not count", nodes: []*api.Node{node("a", zoned("z1")), node("c", zoned("z2"))},
			bound: []*api.Pod{web("w1", "c"), web("w2", "c"), pod("o", boundTo("a"), labeled("app", "web"), func(p *api.Pod) { p.Namespace = "other" })},
			pod:   pod("p", labeled("app", "web"), spreadBy(api.LabelTopologyZone, 1, api.DoNotSchedule)), want: "a"},
		{name: "nodeTaintsPolicy Honor leaves tainted nodes out of the domains",
			nodes: []*api.Node{node("a", zoned("z1")), node("c", zoned("z2"), func(n *api.Node) { n.Spec.Taints = []api.Taint{{Key: "k", Effect: "NoSchedule"}} })},
			bound: []*api.Pod{web("w1", "a")},
			pod:   pod("p", labeled("app", "web"), spreadBy(api.LabelTopologyZone, 1, api.DoNotSchedule, func(c *api.TopologySpreadConstraint) { c.NodeTaintsPolicy = &honor })),
			want:  "a"},
		{name: "nodeTaintsPolicy Ignore (default) counts the tainted zone", nodes: []*api.Node{node("a", zoned("z1")),
			node("c", zoned("z2"), func(n *api.Node) { n.Spec.Taints = []api.Taint{{Key: "k", Effect: "NoSchedule"}} })},
			bound: []*api.Pod{web("w1", "a")},
			pod:   pod("p", labeled("app", "web"), spreadBy(api.LabelTopologyZone, 1, api.DoNotSchedule)),
			msg:   "0/2 nodes are available: 1 node(s) didn't match pod topology spread constraints, 1 node(s) had untolerated taint {k: }."},
		{name: "matchLabelKeys spreads each revision on its own", nodes: []*api.Node{node("a", zoned("z1")), node("c", zoned("z2"))},
			bound: []*api.Pod{pod("old", boundTo("c"), labeled("app", "web", "rev", "1"))},
			pod: pod("p", labeled("app", "web", "rev", "2"), spreadBy(api.LabelHostname, 1, api.DoNotSchedule, func(c *api.TopologySpreadConstraint) { c.MatchLabelKeys = []string{"rev"} }),
				requiredNode(term(api.LabelTopologyZone, api.NodeSelectorOpIn, "z2"))),
			want: "c"},
		{name: "ScheduleAnyway prefers the emptier zone over least requested", nodes: zones(),
			bound: []*api.Pod{web("w1", "a"), web("w2", "b"), pod("big", boundTo("c"), requests("3", "")), pod("big2", boundTo("d"), requests("3", ""))},
			pod:   pod("p", labeled("app", "web"), spreadBy(api.LabelTopologyZone, 1, api.ScheduleAnyway)), want: "c"},
		{name: "ScheduleAnyway never filters", nodes: []*api.Node{node("a", zoned("z1"))},
			bound: []*api.Pod{web("w1", "a"), web("w2", "a")},
			pod:   pod("p", labeled("app", "web"), spreadBy(api.LabelTopologyZone, 1, api.ScheduleAnyway)), want: "a"},
		{name: "ScheduleAnyway: a node without the key scores lowest", nodes: []*api.Node{node("a"), node("b", zoned("z1"))},
			bound: []*api.Pod{web("w1", "b"), pod("x", boundTo("b"), requests("2", ""))},
			pod:   pod("p", labeled("app", "web"), spreadBy(api.LabelTopologyZone, 1, api.ScheduleAnyway)), want: "b"},
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

func ptr[T any](v T) *T { return &v }
