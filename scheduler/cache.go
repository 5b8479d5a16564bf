package scheduler

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// podState is one pod counted on a node: bound (seen bound by the
// informer) or assumed (placed by this scheduler, not yet seen bound).
type podState struct {
	info    *podInfo
	node    string
	assumed bool
	// bindDone: the bind call succeeded; an assumed pod then expires at
	// expires unless the informer confirms it first.
	bindDone bool
	expires  time.Time
}

// cache is the scheduler's per-node state, fed by the informers and by its
// own assumptions. Every method takes mu; one scheduling decision holds it
// from the first filter to the assumption, so consecutive decisions always
// see each other's load.
type cache struct {
	mu    sync.Mutex
	nodes map[string]*nodeInfo // by name, including pod-only names (exists false)
	order []*nodeInfo          // existing nodes, sorted by name
	pods  map[string]*podState // by namespace/name
	next  int                  // round-robin start of the next decision

	// Inter-pod affinity and spread counts (topology.go).
	groups  map[string]*matchGroup   // by matcher key
	carried map[string]*carriedEntry // by carried term id
}

func newCache() *cache {
	return &cache{nodes: map[string]*nodeInfo{}, pods: map[string]*podState{},
		groups: map[string]*matchGroup{}, carried: map[string]*carriedEntry{}}
}

// nodeLocked returns the entry for name, creating a pod-only one.
func (c *cache) nodeLocked(name string) *nodeInfo {
	n, ok := c.nodes[name]
	if !ok {
		n = &nodeInfo{name: name, owners: map[string]int{}}
		c.nodes[name] = n
	}
	return n
}

func (c *cache) reorderLocked() {
	c.order = c.order[:0]
	for _, n := range c.nodes {
		if n.exists {
			c.order = append(c.order, n)
		}
	}
	slices.SortFunc(c.order, func(a, b *nodeInfo) int { return strings.Compare(a.name, b.name) })
}

// setNode records a Node's scheduling fields. It reports whether the
// change may let a waiting pod fit (a new node, or a change of readiness,
// schedulability, taints, labels or allocatable), so heartbeats that only
// touch timestamps do not wake unschedulable pods.
func (c *cache) setNode(node *api.Node) (relevant bool) {
	cpu, mem, pods := nodeAllocatable(&node.Status)
	ready := nodeReady(node)
	taints := schedulingTaints(node.Spec.Taints)
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodeLocked(node.Name)
	relevant = !n.exists || n.ready != ready || n.unschedulable != node.Spec.Unschedulable ||
		n.allocCPU != cpu || n.allocMem != mem || n.allocPods != pods ||
		!maps.Equal(n.labels, node.Labels) || !taintsEqual(n.taints, taints)
	if !relevant {
		return false
	}
	added := !n.exists
	n.exists, n.ready, n.unschedulable = true, ready, node.Spec.Unschedulable
	n.taints = taints
	n.labels = maps.Clone(node.Labels)
	n.allocCPU, n.allocMem, n.allocPods = cpu, mem, pods
	if added {
		c.reorderLocked()
	}
	return true
}

func taintsEqual(a, b []api.Taint) bool {
	return slices.EqualFunc(a, b, func(x, y api.Taint) bool {
		return x.Key == y.Key && x.Value == y.Value && x.Effect == y.Effect
	})
}

// removeNode forgets a deleted Node. Pods still bound to the name stay
// counted under it, so a node that comes back has its load.
func (c *cache) removeNode(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.nodes[name]
	if !ok {
		return
	}
	if n.pods == 0 {
		delete(c.nodes, name)
	} else {
		*n = nodeInfo{name: name, reqCPU: n.reqCPU, reqMem: n.reqMem, nzCPU: n.nzCPU, nzMem: n.nzMem, pods: n.pods, owners: n.owners}
	}
	c.reorderLocked()
}

func (c *cache) addLoadLocked(p *podInfo, node string) {
	n := c.nodeLocked(node)
	n.reqCPU += p.cpu
	n.reqMem += p.mem
	n.nzCPU += p.nzCPU
	n.nzMem += p.nzMem
	n.pods++
	if p.owner != "" {
		n.owners[p.owner]++
	}
	c.countTopologyLocked(p, node, 1)
}

func (c *cache) removeLoadLocked(p *podInfo, node string) {
	n, ok := c.nodes[node]
	if !ok {
		return
	}
	n.reqCPU -= p.cpu
	n.reqMem -= p.mem
	n.nzCPU -= p.nzCPU
	n.nzMem -= p.nzMem
	n.pods--
	c.countTopologyLocked(p, node, -1)
	if p.owner != "" {
		if n.owners[p.owner]--; n.owners[p.owner] <= 0 {
			delete(n.owners, p.owner)
		}
	}
	if !n.exists && n.pods == 0 {
		delete(c.nodes, node)
	}
}

// removeLocked drops a pod's load; it reports whether one was counted.
func (c *cache) removeLocked(key string) bool {
	ps, ok := c.pods[key]
	if !ok {
		return false
	}
	c.removeLoadLocked(ps.info, ps.node)
	delete(c.pods, key)
	return true
}

// setBoundPod records a pod the informer shows with spec.nodeName: it
// confirms an assumption, or counts a pod bound elsewhere. A terminal pod
// is dropped. freed reports that load left a node.
func (c *cache) setBoundPod(pod *api.Pod) (freed bool) {
	key := pod.Namespace + "/" + pod.Name
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[key]
	if podIsTerminal(pod) {
		return c.removeLocked(key)
	}
	if ok && ps.info.uid == pod.UID && ps.node == pod.Spec.NodeName {
		ps.assumed, ps.bindDone = false, false
		return false
	}
	if ok {
		freed = c.removeLocked(key)
	}
	info := newPodInfo(pod)
	c.pods[key] = &podState{info: info, node: pod.Spec.NodeName}
	c.addLoadLocked(info, pod.Spec.NodeName)
	return freed
}

// removePod drops a deleted pod (bound or assumed) with the given uid.
func (c *cache) removePod(key, uid string) (freed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[key]; !ok || ps.info.uid != uid {
		return false
	}
	return c.removeLocked(key)
}

// placed reports whether the pod with this key and uid is already counted
// on a node (assumed or bound), so it must not be scheduled again.
func (c *cache) placed(key, uid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[key]
	return ok && ps.info.uid == uid
}

// scheduleAndAssume decides p's node and, when there is one, counts p on
// it as assumed before releasing the lock.
func (c *cache) scheduleAndAssume(p *podInfo) decision {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.order) > 0 {
		c.next = (c.next + 1) % len(c.order)
	}
	d := scheduleWith(p, c.order, c.next, c.topoStateLocked(p))
	if d.node != nil {
		if old, ok := c.pods[p.key]; ok {
			c.removeLoadLocked(old.info, old.node)
		}
		c.pods[p.key] = &podState{info: p, node: d.node.name, assumed: true}
		c.addLoadLocked(p, d.node.name)
	}
	return d
}

// bindDone starts the expiry of an assumption once its bind succeeded.
func (c *cache) bindDone(key, uid string, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[key]; ok && ps.assumed && ps.info.uid == uid {
		ps.bindDone, ps.expires = true, expires
	}
}

// forget drops an assumption whose bind failed; a pod the informer has
// meanwhile shown bound stays.
func (c *cache) forget(key, uid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[key]; ok && ps.assumed && ps.info.uid == uid {
		c.removeLocked(key)
	}
}

// expire drops bound assumptions the informer has not confirmed by their
// deadline and returns how many.
func (c *cache) expire(now time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for key, ps := range c.pods {
		if ps.assumed && ps.bindDone && !now.Before(ps.expires) {
			c.removeLocked(key)
			n++
		}
	}
	return n
}

// nodeLoad is a snapshot of one node's counted load (tests).
type nodeLoad struct {
	Pods           int64
	CPU, Mem       int64
	Owners         map[string]int
	AssumedPods    int
	ConfirmedPods  int
	ExistsAsObject bool
}

func (c *cache) load(name string) nodeLoad {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.nodes[name]
	if !ok {
		return nodeLoad{}
	}
	l := nodeLoad{Pods: n.pods, CPU: n.reqCPU, Mem: n.reqMem, Owners: maps.Clone(n.owners), ExistsAsObject: n.exists}
	for _, ps := range c.pods {
		if ps.node != name {
			continue
		}
		if ps.assumed {
			l.AssumedPods++
		} else {
			l.ConfirmedPods++
		}
	}
	return l
}
