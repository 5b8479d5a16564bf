package scheduler

import (
	"math"

	"github.com/skiff-dev/skiff/api"
)

// Pod topology spread (Kubernetes' PodTopologySpread plugin), the rules
// scheduler/doc.go lists.

const (
	reasonSpread             = "node(s) didn't match pod topology spread constraints"
	reasonSpreadMissingLabel = "node(s) didn't match pod topology spread constraints (missing required label)"
)

// spreadConstraint is one resolved topologySpreadConstraint.
type spreadConstraint struct {
	m            podMatcher // the pod's namespace, labelSelector + matchLabelKeys
	topologyKey  string
	maxSkew      int32
	minDomains   int32 // 0: unset
	hard         bool  // DoNotSchedule
	honorNodeAff bool  // nodeAffinityPolicy Honor (the default)
	honorTaints  bool  // nodeTaintsPolicy Honor (default Ignore)
	selfMatch    int   // 1 when the pod matches its own selector
}

func (p *podInfo) setSpread(cs []api.TopologySpreadConstraint) {
	for i := range cs {
		c := &cs[i]
		m := podMatcher{ns: map[string]bool{p.ns: true}, sel: mergeLabelKeys(c.LabelSelector, p.labels, c.MatchLabelKeys, nil)}
		m.key = matcherKey(&m)
		sc := spreadConstraint{m: m, topologyKey: c.TopologyKey, maxSkew: c.MaxSkew,
			hard:         c.WhenUnsatisfiable == api.DoNotSchedule,
			honorNodeAff: c.NodeAffinityPolicy == nil || *c.NodeAffinityPolicy == api.NodeInclusionPolicyHonor,
			honorTaints:  c.NodeTaintsPolicy != nil && *c.NodeTaintsPolicy == api.NodeInclusionPolicyHonor,
		}
		if c.MinDomains != nil {
			sc.minDomains = *c.MinDomains
		}
		if m.matches(p) {
			sc.selfMatch = 1
		}
		p.spread = append(p.spread, sc)
	}
}

// spreadCounts is one constraint's matching pods per domain over the
// eligible nodes.
type spreadCounts struct {
	c      *spreadConstraint
	counts map[string]int
	min    int // smallest count of a domain (0 below minDomains)
	weight float64
}

// spreadState is what the PodTopologySpread filter and score need for one
// pod, computed once per decision.
type spreadState struct {
	hard, soft []spreadCounts
}

// eligible reports whether n's pods count for c: n has every key in keys,
// and passes the pod's node affinity and taints when the policies say so.
func spreadEligible(p *podInfo, c *spreadConstraint, keys []string, n *nodeInfo) bool {
	for _, k := range keys {
		if _, ok := n.labels[k]; !ok {
			return false
		}
	}
	if c.honorNodeAff && !matchesNodeAffinity(p, n) {
		return false
	}
	if c.honorTaints {
		for i := range n.taints {
			if !tolerated(&n.taints[i], p.tolerations) {
				return false
			}
		}
	}
	return true
}

// newSpreadCounts counts, per domain of c's key, the pods that perNode
// holds on the eligible nodes.
func newSpreadCounts(p *podInfo, c *spreadConstraint, keys []string, perNode map[string]int, nodes []*nodeInfo) spreadCounts {
	sc := spreadCounts{c: c, counts: map[string]int{}}
	for _, n := range nodes {
		if !spreadEligible(p, c, keys, n) {
			continue
		}
		sc.counts[n.labels[c.topologyKey]] += perNode[n.name]
	}
	sc.min = math.MaxInt32
	for _, v := range sc.counts {
		sc.min = min(sc.min, v)
	}
	if c.minDomains > 0 && len(sc.counts) < int(c.minDomains) {
		sc.min = 0
	}
	// Kubernetes weighs a soft constraint by log(domains + 2).
	sc.weight = math.Log(float64(len(sc.counts) + 2))
	return sc
}

// fits is the PodTopologySpread filter for n: for every DoNotSchedule
// constraint n has the key, and matching pods in n's domain plus the pod
// itself stay within maxSkew of the least loaded domain.
func (s *spreadState) fits(n *nodeInfo) string {
	for i := range s.hard {
		h := &s.hard[i]
		v, ok := n.labels[h.c.topologyKey]
		if !ok {
			return reasonSpreadMissingLabel
		}
		if skew := h.counts[v] + h.c.selfMatch - h.min; skew > int(h.c.maxSkew) {
			return reasonSpread
		}
	}
	return ""
}

// scoreNode is the raw ScheduleAnyway score of n (lower is better) and
// whether n has every soft constraint's key.
func (s *spreadState) scoreNode(n *nodeInfo) (float64, bool) {
	var out float64
	for i := range s.soft {
		c := &s.soft[i]
		v, ok := n.labels[c.c.topologyKey]
		if !ok {
			return 0, false
		}
		out += float64(c.counts[v]+int(c.c.maxSkew)-1) * c.weight
	}
	return out, true
}
