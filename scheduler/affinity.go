package scheduler

import (
	"encoding/json"
	"strconv"

	"github.com/skiff-dev/skiff/api"
)

// Node affinity (Kubernetes' NodeAffinity plugin) and inter-pod affinity
// and anti-affinity (InterPodAffinity), the rules scheduler/doc.go lists.

// Failure reasons, worded as Kubernetes' plugins word them.
const (
	reasonExistingAntiAffinity = "node(s) didn't satisfy existing pods anti-affinity rules"
	reasonAntiAffinity         = "node(s) didn't match pod anti-affinity rules"
	reasonAffinity             = "node(s) didn't match pod affinity rules"
)

// hardPodAffinityWeight is the score an existing pod's required affinity
// term adds for a pod it matches (Kubernetes' default, 1).
const hardPodAffinityWeight = 1

// labelNamespaceName is the label every namespace carries with its name.
const labelNamespaceName = "kubernetes.io/metadata.name"

// podMatcher selects pods by namespace and labels, as an affinity term or
// a spread constraint does.
type podMatcher struct {
	allNS bool            // every namespace
	ns    map[string]bool // these namespaces (with nsSel: or those it selects)
	nsSel *api.LabelSelector
	sel   *api.LabelSelector // nil matches nothing
	key   string             // canonical form: equal matchers, equal keys
}

func (m *podMatcher) matches(p *podInfo) bool {
	if !m.allNS && !m.ns[p.ns] && (m.nsSel == nil || !api.SelectorMatches(m.nsSel, map[string]string{labelNamespaceName: p.ns})) {
		return false
	}
	return api.SelectorMatches(m.sel, p.labels)
}

// newTermMatcher resolves a pod affinity term of a pod in namespace ns:
// namespaces plus namespaceSelector (an empty one selects every
// namespace), the pod's own namespace when both are unset; matchLabelKeys
// and mismatchLabelKeys become In / NotIn requirements on the pod's own
// values, as Kubernetes merges them into the selector.
func newTermMatcher(t *api.PodAffinityTerm, ns string, labels map[string]string) podMatcher {
	m := podMatcher{ns: map[string]bool{}}
	for _, n := range t.Namespaces {
		m.ns[n] = true
	}
	switch {
	case t.NamespaceSelector != nil && len(t.NamespaceSelector.MatchLabels) == 0 && len(t.NamespaceSelector.MatchExpressions) == 0:
		m.allNS = true
	case t.NamespaceSelector != nil:
		m.nsSel = t.NamespaceSelector
	case len(t.Namespaces) == 0:
		m.ns[ns] = true
	}
	m.sel = mergeLabelKeys(t.LabelSelector, labels, t.MatchLabelKeys, t.MismatchLabelKeys)
	m.key = matcherKey(&m)
	return m
}

// mergeLabelKeys adds key In (value) for each matchLabelKeys key and key
// NotIn (value) for each mismatchLabelKeys key the pod has.
func mergeLabelKeys(sel *api.LabelSelector, labels map[string]string, match, mismatch []string) *api.LabelSelector {
	if sel == nil || (len(match) == 0 && len(mismatch) == 0) {
		return sel
	}
	out := &api.LabelSelector{MatchLabels: sel.MatchLabels, MatchExpressions: append([]api.LabelSelectorRequirement(nil), sel.MatchExpressions...)}
	for _, k := range match {
		if v, ok := labels[k]; ok {
			out.MatchExpressions = append(out.MatchExpressions, api.LabelSelectorRequirement{Key: k, Operator: api.LabelSelectorOpIn, Values: []string{v}})
		}
	}
	for _, k := range mismatch {
		if v, ok := labels[k]; ok {
			out.MatchExpressions = append(out.MatchExpressions, api.LabelSelectorRequirement{Key: k, Operator: api.LabelSelectorOpNotIn, Values: []string{v}})
		}
	}
	return out
}

func matcherKey(m *podMatcher) string {
	b, _ := json.Marshal(struct {
		All   bool               `json:"a,omitempty"`
		NS    map[string]bool    `json:"n,omitempty"`
		NSSel *api.LabelSelector `json:"s,omitempty"`
		Sel   *api.LabelSelector `json:"l"`
	}{m.allNS, m.ns, m.nsSel, m.sel})
	return string(b)
}

// affinityTerm is one resolved pod affinity term: the pods it selects and
// the node label whose values are its topology domains.
type affinityTerm struct {
	m           podMatcher
	topologyKey string
	weight      int32 // preferred terms; negative for anti-affinity
}

// carriedKind is how a counted pod's own term acts on pods scheduled
// after it (the symmetric half of InterPodAffinity).
type carriedKind int

const (
	carriedRequiredAnti carriedKind = iota // forbids its domain to pods it matches
	carriedScore                           // adds weight in its domain to pods it matches
)

// carriedTerm is a term of a counted pod, deduplicated in the cache by id.
type carriedTerm struct {
	affinityTerm
	kind carriedKind
	id   string
}

func carried(kind carriedKind, t affinityTerm) carriedTerm {
	return carriedTerm{affinityTerm: t, kind: kind,
		id: strconv.Itoa(int(kind)) + "|" + strconv.Itoa(int(t.weight)) + "|" + t.topologyKey + "|" + t.m.key}
}

// setAffinity fills p's affinity fields from the pod's spec.
func (p *podInfo) setAffinity(a *api.Affinity) {
	if a == nil {
		return
	}
	if na := a.NodeAffinity; na != nil {
		p.nodeAffinity = na.RequiredDuringSchedulingIgnoredDuringExecution
		p.preferredNode = na.PreferredDuringSchedulingIgnoredDuringExecution
	}
	term := func(t *api.PodAffinityTerm, w int32) affinityTerm {
		return affinityTerm{m: newTermMatcher(t, p.ns, p.labels), topologyKey: t.TopologyKey, weight: w}
	}
	if pa := a.PodAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			t := term(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i], hardPodAffinityWeight)
			p.affinity = append(p.affinity, t)
			p.carried = append(p.carried, carried(carriedScore, t))
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			w := &pa.PreferredDuringSchedulingIgnoredDuringExecution[i]
			t := term(&w.PodAffinityTerm, w.Weight)
			p.preferred = append(p.preferred, t)
			p.carried = append(p.carried, carried(carriedScore, t))
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		for i := range pa.RequiredDuringSchedulingIgnoredDuringExecution {
			t := term(&pa.RequiredDuringSchedulingIgnoredDuringExecution[i], 0)
			p.antiAffinity = append(p.antiAffinity, t)
			p.carried = append(p.carried, carried(carriedRequiredAnti, t))
		}
		for i := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			w := &pa.PreferredDuringSchedulingIgnoredDuringExecution[i]
			t := term(&w.PodAffinityTerm, -w.Weight)
			p.preferred = append(p.preferred, t)
			p.carried = append(p.carried, carried(carriedScore, t))
		}
	}
}

// matchesNodeSelectorTerms is Kubernetes' required node affinity: the
// terms are ORed, a term's requirements ANDed, and a term without any
// requirement matches nothing.
func matchesNodeSelectorTerms(terms []api.NodeSelectorTerm, n *nodeInfo) bool {
	for i := range terms {
		if matchesNodeSelectorTerm(&terms[i], n) {
			return true
		}
	}
	return false
}

func matchesNodeSelectorTerm(t *api.NodeSelectorTerm, n *nodeInfo) bool {
	if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
		return false
	}
	for i := range t.MatchExpressions {
		r := &t.MatchExpressions[i]
		v, ok := n.labels[r.Key]
		if !matchesRequirement(r, v, ok) {
			return false
		}
	}
	for i := range t.MatchFields {
		r := &t.MatchFields[i]
		if r.Key != api.NodeFieldSelectorKeyNodeName || !matchesRequirement(r, n.name, true) {
			return false
		}
	}
	return true
}

// matchesRequirement evaluates one requirement on a label value (ok: the
// label exists). Gt and Lt compare integers; a value that is not one does
// not match.
func matchesRequirement(r *api.NodeSelectorRequirement, v string, ok bool) bool {
	switch r.Operator {
	case api.NodeSelectorOpIn:
		return ok && contains(r.Values, v)
	case api.NodeSelectorOpNotIn:
		return !ok || !contains(r.Values, v)
	case api.NodeSelectorOpExists:
		return ok
	case api.NodeSelectorOpDoesNotExist:
		return !ok
	case api.NodeSelectorOpGt, api.NodeSelectorOpLt:
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == api.NodeSelectorOpGt {
			return have > want
		}
		return have < want
	}
	return false
}

func contains(vals []string, v string) bool {
	for _, x := range vals {
		if x == v {
			return true
		}
	}
	return false
}

// matchesNodeAffinity is the NodeAffinity filter: nodeSelector and the
// required node affinity both hold.
func matchesNodeAffinity(p *podInfo, n *nodeInfo) bool {
	for k, v := range p.selector {
		if lv, ok := n.labels[k]; !ok || lv != v {
			return false
		}
	}
	return p.nodeAffinity == nil || matchesNodeSelectorTerms(p.nodeAffinity.NodeSelectorTerms, n)
}

// nodeAffinityScore is the sum of the weights of the preferred terms n
// matches.
func nodeAffinityScore(p *podInfo, n *nodeInfo) int64 {
	var s int64
	for i := range p.preferredNode {
		if matchesNodeSelectorTerm(&p.preferredNode[i].Preference, n) {
			s += int64(p.preferredNode[i].Weight)
		}
	}
	return s
}

// domainCounts sums perNode (pods per node name) into the values of key
// over the existing nodes that have that label. It walks perNode, which
// holds only nodes with pods, so it is O(min(nodes, len(perNode))).
func domainCounts(perNode map[string]int, key string, nodes map[string]*nodeInfo) map[string]int {
	out := make(map[string]int, len(perNode))
	for name, c := range perNode {
		n := nodes[name]
		if n == nil || !n.exists || c <= 0 {
			continue
		}
		if v, ok := n.labels[key]; ok {
			out[v] += c
		}
	}
	return out
}

// termCounts are one term's matching pods per value of its topology key.
type termCounts struct {
	key    string
	weight int64
	counts map[string]int
}

// interPodState is what the InterPodAffinity filter and score need for one
// pod, computed once per decision from the cache's incremental counts.
type interPodState struct {
	affinity []termCounts // the pod's required affinity terms
	// affinityNone: no pod anywhere matches any required affinity term.
	affinityNone bool
	selfAffine   bool         // the pod matches all its own affinity terms
	anti         []termCounts // the pod's required anti-affinity terms
	existingAnti []termCounts // counted pods' required anti-affinity terms that match the pod
	score        []termCounts // weighted: the pod's preferred terms and counted pods' terms that match it
	hasFilter    bool
	hasScore     bool
}

// fits is the InterPodAffinity filter for node n, in upstream's order:
// the pod's required affinity, its required anti-affinity, then the
// counted pods' required anti-affinity.
func (s *interPodState) fits(n *nodeInfo) string {
	exist := true
	for i := range s.affinity {
		t := &s.affinity[i]
		v, ok := n.labels[t.key]
		if !ok {
			return reasonAffinity
		}
		if t.counts[v] <= 0 {
			exist = false
		}
	}
	if !exist && !(s.affinityNone && s.selfAffine) {
		return reasonAffinity
	}
	for i := range s.anti {
		t := &s.anti[i]
		if v, ok := n.labels[t.key]; ok && t.counts[v] > 0 {
			return reasonAntiAffinity
		}
	}
	for i := range s.existingAnti {
		t := &s.existingAnti[i]
		if v, ok := n.labels[t.key]; ok && t.counts[v] > 0 {
			return reasonExistingAntiAffinity
		}
	}
	return ""
}

// score is the raw InterPodAffinity score of n: weight times matching pods
// in n's domain, summed over the weighted terms.
func (s *interPodState) scoreNode(n *nodeInfo) int64 {
	var out int64
	for i := range s.score {
		t := &s.score[i]
		if v, ok := n.labels[t.key]; ok {
			out += t.weight * int64(t.counts[v])
		}
	}
	return out
}
