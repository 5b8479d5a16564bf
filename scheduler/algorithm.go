package scheduler

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// Well-known taints the scheduler and the node lifecycle controller share.
const (
	// TaintNodeUnschedulable is the taint a pod must tolerate to be placed
	// on a node with spec.unschedulable.
	TaintNodeUnschedulable = "node.kubernetes.io/unschedulable"
)

// Failure reasons, worded as Kubernetes' scheduler plugins word them.
const (
	reasonUnschedulable    = "node(s) were unschedulable"
	reasonNotReady         = "node(s) were not ready"
	reasonSelector         = "node(s) didn't match Pod's node affinity/selector"
	reasonTooManyPods      = "Too many pods"
	reasonInsufficientCPU  = "Insufficient cpu"
	reasonInsufficientMem  = "Insufficient memory"
	reasonNoNodesAvailable = "no nodes available to schedule pods"
)

// maxScore is the least-requested score of an empty node (Kubernetes uses
// 100; millionths keep more nodes apart before the tie-break).
const maxScore = 1_000_000

// podInfo is what the scheduler needs of a pod, computed once per pod.
type podInfo struct {
	key   string // namespace/name
	uid   string
	owner string // uid of the controller ownerReference, "" for none
	// cpu (millicores) and mem (bytes) are the requests used to filter;
	// nzCPU and nzMem the non-zero requests used to score.
	cpu, mem     int64
	nzCPU, nzMem int64
	selector     map[string]string
	tolerations  []api.Toleration
	volumes      *volumeCheck // volumes.go; nil without claims

	// Affinity, spread and priority (affinity.go, spread.go).
	ns            string
	labels        map[string]string
	priority      int32
	nodeAffinity  *api.NodeSelector
	preferredNode []api.PreferredSchedulingTerm
	affinity      []affinityTerm // required pod affinity
	antiAffinity  []affinityTerm // required pod anti-affinity
	preferred     []affinityTerm // preferred, weight < 0 for anti-affinity
	spread        []spreadConstraint
	// carried are the pod's terms that act on pods scheduled after it
	// while it is counted on a node.
	carried []carriedTerm
}

// nodeInfo is the scheduler's view of one node: the Node's fields that
// matter, precomputed, and the load of the pods bound or assumed on it.
type nodeInfo struct {
	name string
	// exists is false for a name that only pods refer to (no Node object).
	exists        bool
	ready         bool
	unschedulable bool
	taints        []api.Taint // NoSchedule and NoExecute only
	labels        map[string]string
	// allocatable: cpu millicores, memory bytes, pod count.
	allocCPU, allocMem, allocPods int64

	// Load of the pods counted on the node.
	reqCPU, reqMem int64
	nzCPU, nzMem   int64
	pods           int64
	owners         map[string]int // controller uid -> pods on this node
}

// fits reports why p cannot go to n; nil means it fits. The checks run in
// Kubernetes' plugin order and stop at the first failing one, except the
// resource check, which reports every insufficient resource.
func fits(p *podInfo, n *nodeInfo) []string {
	if n.unschedulable && !toleratesUnschedulable(p.tolerations) {
		return []string{reasonUnschedulable}
	}
	for i := range n.taints {
		if !tolerated(&n.taints[i], p.tolerations) {
			return []string{fmt.Sprintf("node(s) had untolerated taint {%s: %s}", n.taints[i].Key, n.taints[i].Value)}
		}
	}
	if !n.ready {
		return []string{reasonNotReady}
	}
	if !matchesNodeAffinity(p, n) {
		return []string{reasonSelector}
	}
	var out []string
	if n.pods+1 > n.allocPods {
		out = append(out, reasonTooManyPods)
	}
	if p.cpu > 0 && n.reqCPU+p.cpu > n.allocCPU {
		out = append(out, reasonInsufficientCPU)
	}
	if p.mem > 0 && n.reqMem+p.mem > n.allocMem {
		out = append(out, reasonInsufficientMem)
	}
	if len(out) == 0 {
		if r := p.volumes.fits(n); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// tolerated reports whether one of tols tolerates taint (Kubernetes'
// Toleration.ToleratesTaint).
func tolerated(taint *api.Taint, tols []api.Toleration) bool {
	for i := range tols {
		t := &tols[i]
		if t.Effect != "" && t.Effect != taint.Effect {
			continue
		}
		if t.Key != "" && t.Key != taint.Key {
			continue
		}
		switch t.Operator {
		case "", "Equal":
			if t.Value == taint.Value {
				return true
			}
		case "Exists":
			return true
		}
	}
	return false
}

// toleratesUnschedulable: a pod that tolerates the unschedulable taint may
// go to a cordoned node, as in Kubernetes' NodeUnschedulable plugin.
func toleratesUnschedulable(tols []api.Toleration) bool {
	t := api.Taint{Key: TaintNodeUnschedulable, Effect: api.TaintEffectNoSchedule}
	return tolerated(&t, tols)
}

// leastRequested is Kubernetes' LeastAllocated score: the mean over cpu
// and memory of the fraction left free once p is added, counting the
// non-zero requests; 0..maxScore.
func leastRequested(p *podInfo, n *nodeInfo) int64 {
	return (freeScore(n.nzCPU+p.nzCPU, n.allocCPU) + freeScore(n.nzMem+p.nzMem, n.allocMem)) / 2
}

func freeScore(requested, capacity int64) int64 {
	if capacity <= 0 || requested > capacity {
		return 0
	}
	// Scale in floating point: capacity in bytes times maxScore overflows.
	return int64(float64(capacity-requested) / float64(capacity) * maxScore)
}

// better reports whether candidate a (owner pods ao, score as) beats b.
func better(ao int, as int64, bo int, bs int64) bool {
	if ao != bo {
		return ao < bo
	}
	return as > bs
}

// decision is the outcome of placing one pod.
type decision struct {
	node *nodeInfo // nil when the pod fits nowhere
	// nodes is how many nodes were considered; reasons counts, per
	// reason, the nodes that failed with it.
	nodes   int
	reasons map[string]int
}

// schedule picks the node for p among nodes with the default plugins
// only (no affinity or spread state); see scheduleWith.
func schedule(p *podInfo, nodes []*nodeInfo, start int) decision {
	return scheduleWith(p, nodes, start, nil)
}

// scheduleWith picks the node for p among nodes: the feasible node with
// the fewest pods of p's owner, then the highest least-requested score;
// ties go to the first candidate found scanning from index start (so
// callers rotate start for round-robin). x, when not nil, adds the
// PodTopologySpread and InterPodAffinity filters and, when it scores,
// ranks candidates first by the NodeAffinity, InterPodAffinity and
// PodTopologySpread scores (pickScored). It is O(len(nodes)) and, without
// x, allocates only on failures.
func scheduleWith(p *podInfo, nodes []*nodeInfo, start int, x *topoState) decision {
	d := decision{}
	var bestOwners int
	var bestScore int64
	var cands []candidate
	scoring := x != nil && x.scoring
	nn := len(nodes)
	for i := range nn {
		n := nodes[(start+i)%nn]
		if !n.exists {
			continue
		}
		d.nodes++
		why := fits(p, n)
		if len(why) == 0 && x != nil {
			if r := x.fits(n); r != "" {
				why = []string{r}
			}
		}
		if len(why) > 0 {
			if d.reasons == nil {
				d.reasons = map[string]int{}
			}
			for _, r := range why {
				d.reasons[r]++
			}
			continue
		}
		owners := 0
		if p.owner != "" {
			owners = n.owners[p.owner]
		}
		score := leastRequested(p, n)
		if scoring {
			c := candidate{n: n, owners: owners, least: score, na: nodeAffinityScore(p, n), ipa: x.ip.scoreNode(n)}
			c.pts, c.ptsOK = x.sp.scoreNode(n)
			cands = append(cands, c)
			continue
		}
		if d.node == nil || better(owners, score, bestOwners, bestScore) {
			d.node, bestOwners, bestScore = n, owners, score
		}
	}
	if scoring {
		d.node = pickScored(cands)
	}
	return d
}

// message is Kubernetes' FitError text: "0/3 nodes are available: 1
// node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu."
func (d decision) message() string {
	if d.nodes == 0 {
		return "0/0 nodes are available: " + reasonNoNodesAvailable + "."
	}
	parts := make([]string, 0, len(d.reasons))
	for r, n := range d.reasons {
		parts = append(parts, strconv.Itoa(n)+" "+r)
	}
	sort.Strings(parts)
	return fmt.Sprintf("0/%d nodes are available: %s.", d.nodes, strings.Join(parts, ", "))
}
