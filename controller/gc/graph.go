package gc

import (
	"slices"
	"strings"
	"sync"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/controller/internal/reflector"
)

// node is one object of the graph.
type node struct {
	ref        objectRef
	owners     []api.OwnerReference
	finalizers []string
	deleting   bool
}

func (n *node) deletingDependents() bool {
	return n.deleting && slices.Contains(n.finalizers, FinalizerForeground)
}

// needsSyncLocked reports whether a change to n calls for a sync of n: it
// is an owner being deleted in the foreground or with orphaning, or one of
// its owners is not in the graph (maybe never seen, maybe gone) or is being
// deleted. A dependent whose owners are all present and alive is not synced
// now; its owners' deletion will sync it. g.mu must be held.
func (g *graph) needsSyncLocked(n *node) bool {
	if n.deleting && (slices.Contains(n.finalizers, FinalizerForeground) || slices.Contains(n.finalizers, FinalizerOrphan)) {
		return true
	}
	for _, ref := range n.owners {
		if o := g.nodes[ref.UID]; o == nil || o.deleting {
			return true
		}
	}
	return false
}

// sameState reports whether a and b agree on everything the collector reads.
func sameState(a, b *node) bool {
	return a.deleting == b.deleting && slices.Equal(a.finalizers, b.finalizers) &&
		slices.EqualFunc(a.owners, b.owners, func(x, y api.OwnerReference) bool {
			return x.UID == y.UID && x.Name == y.Name && x.Kind == y.Kind && x.APIVersion == y.APIVersion &&
				blocks(x) == blocks(y)
		})
}

func blocks(ref api.OwnerReference) bool {
	return ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion
}

func resourceKey(info *api.ResourceInfo) string { return info.Group + "/" + info.Resource }

// graph is the collector's view of every object. Its methods return the
// uids that must be synced because of the change.
type graph struct {
	// mu protects every field below.
	mu         sync.Mutex
	nodes      map[string]*node               // uid -> object
	dependents map[string]map[string]struct{} // owner uid -> dependent uids
	byResource map[string]map[string]struct{} // resourceKey -> uids
}

func newGraph() *graph {
	return &graph{
		nodes:      map[string]*node{},
		dependents: map[string]map[string]struct{}{},
		byResource: map[string]map[string]struct{}{},
	}
}

func newNode(info *api.ResourceInfo, m reflector.Meta) *node {
	return &node{
		ref:        objectRef{Info: info, Namespace: m.Namespace, Name: m.Name, UID: m.UID},
		owners:     slices.Clone(m.OwnerReferences),
		finalizers: slices.Clone(m.Finalizers),
		deleting:   m.DeletionTimestamp != nil,
	}
}

// upsert records n and returns the uids to sync. g.mu must be held.
func (g *graph) upsertLocked(n *node) []string {
	uid := n.ref.UID
	old := g.nodes[uid]
	if old != nil && sameState(old, n) {
		g.nodes[uid] = n
		return nil
	}
	if old != nil {
		g.unlinkLocked(old)
	}
	g.nodes[uid] = n
	for _, ref := range n.owners {
		deps := g.dependents[ref.UID]
		if deps == nil {
			deps = map[string]struct{}{}
			g.dependents[ref.UID] = deps
		}
		deps[uid] = struct{}{}
	}
	rk := resourceKey(n.ref.Info)
	if g.byResource[rk] == nil {
		g.byResource[rk] = map[string]struct{}{}
	}
	g.byResource[rk][uid] = struct{}{}

	var out []string
	if g.needsSyncLocked(n) {
		out = append(out, uid)
	}
	// Becoming a foreground owner: every dependent must check whether it
	// still has a live owner.
	if n.deletingDependents() && (old == nil || !old.deletingDependents()) {
		for d := range g.dependents[uid] {
			out = append(out, d)
		}
	}
	// An owner that waits for its dependents may be done once a reference
	// to it goes away or stops blocking.
	if old != nil {
		for _, was := range old.owners {
			i := slices.IndexFunc(n.owners, func(r api.OwnerReference) bool { return r.UID == was.UID })
			if i >= 0 && blocks(n.owners[i]) == blocks(was) {
				continue
			}
			if o := g.nodes[was.UID]; o != nil && o.deleting {
				out = append(out, was.UID)
			}
		}
	}
	return out
}

// unlinkLocked removes n's edges and index entries (not n itself).
func (g *graph) unlinkLocked(n *node) {
	uid := n.ref.UID
	for _, ref := range n.owners {
		if deps := g.dependents[ref.UID]; deps != nil {
			delete(deps, uid)
			if len(deps) == 0 {
				delete(g.dependents, ref.UID)
			}
		}
	}
	if set := g.byResource[resourceKey(n.ref.Info)]; set != nil {
		delete(set, uid)
	}
}

// removeLocked forgets uid and returns the uids to sync: its dependents
// (their owner may be gone) and its deleting owners (they may have been
// waiting for it). g.mu must be held.
func (g *graph) removeLocked(uid string) []string {
	var out []string
	for d := range g.dependents[uid] {
		out = append(out, d)
	}
	n := g.nodes[uid]
	if n == nil {
		return out
	}
	g.unlinkLocked(n)
	delete(g.nodes, uid)
	for _, ref := range n.owners {
		if o := g.nodes[ref.UID]; o != nil && o.deleting {
			out = append(out, ref.UID)
		}
	}
	return out
}

// upsert records an added or modified object.
func (g *graph) upsert(info *api.ResourceInfo, m reflector.Meta) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.upsertLocked(newNode(info, m))
}

// remove forgets a deleted object.
func (g *graph) remove(uid string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.removeLocked(uid)
}

// replace makes objs the complete set of info's objects.
func (g *graph) replace(info *api.ResourceInfo, objs []reflector.Meta) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	seen := make(map[string]struct{}, len(objs))
	for _, m := range objs {
		seen[m.UID] = struct{}{}
	}
	var out []string
	for uid := range g.byResource[resourceKey(info)] {
		if _, ok := seen[uid]; !ok {
			out = append(out, g.removeLocked(uid)...)
		}
	}
	for _, m := range objs {
		out = append(out, g.upsertLocked(newNode(info, m))...)
	}
	return out
}

// snapshot returns a copy of uid's node and its dependents.
func (g *graph) snapshot(uid string) (objectRef, []dependent, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.nodes[uid]
	if n == nil {
		return objectRef{}, nil, false
	}
	var deps []dependent
	for d := range g.dependents[uid] {
		dn := g.nodes[d]
		if dn == nil {
			continue
		}
		deps = append(deps, dependentOf(uid, dn))
	}
	sortDependents(deps)
	return n.ref, deps, true
}

// dependentOf describes dn as a dependent of the owner with that uid.
func dependentOf(owner string, dn *node) dependent {
	dep := dependent{Ref: dn.ref, Deleting: dn.deleting, DeletingDependents: dn.deletingDependents()}
	for _, ref := range dn.owners {
		if ref.UID == owner && blocks(ref) {
			dep.Blocking = true
		}
	}
	return dep
}

func sortDependents(deps []dependent) {
	slices.SortFunc(deps, func(a, b dependent) int { return strings.Compare(a.Ref.UID, b.Ref.UID) })
}

// learn records an object a live list found, unless the graph already
// holds it: the watch keeps known objects current, and a listed state may
// be older than what the watch has delivered since. It reports whether the
// object was new and returns the uids to sync.
func (g *graph) learn(info *api.ResourceInfo, m reflector.Meta) (bool, []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.nodes[m.UID]; ok {
		return false, nil
	}
	return true, g.upsertLocked(newNode(info, m))
}

// size is the number of objects in the graph.
func (g *graph) size() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.nodes)
}
