package deployment

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/skiff-dev/skiff/api"
)

// Input is everything one reconcile round looks at. Reconcile does not
// modify it.
type Input struct {
	// Deployment as stored.
	Deployment *api.Deployment
	// ReplicaSets are the Deployment's, after adoption and release.
	ReplicaSets []*api.ReplicaSet
	// OldPodsRunning (Recreate only) is whether a pod of an old
	// ReplicaSet is neither Succeeded nor Failed nor gone.
	OldPodsRunning bool
}

// Update is one ReplicaSet write: RS is the object to write (its
// resourceVersion is the cached one's, so a stale cache conflicts), From
// its spec.replicas before.
type Update struct {
	RS   *api.ReplicaSet
	From int32
}

// Plan is one round's writes, applied in order: Create, Updates, Delete.
// Revision is the Deployment's revision annotation to set ("" when it
// stays).
type Plan struct {
	Revision string
	Create   *api.ReplicaSet
	Updates  []Update
	Delete   []*api.ReplicaSet
	// New is the new ReplicaSet (the one created, or found), nil when the
	// Deployment has none; Old are the others; both as they are once the
	// plan is applied (status input).
	New *api.ReplicaSet
	Old []*api.ReplicaSet
	// Rollout: the status is computed as syncRolloutStatus does
	// (Progressing), else as syncDeploymentStatus (a paused Deployment, a
	// scaling event, a Deployment being deleted).
	Rollout bool
	// FoundNew: the new ReplicaSet existed and the Deployment has no
	// Progressing condition yet (FoundNewReplicaSet).
	FoundNew bool
}

// round is the working state of Reconcile: copies of the ReplicaSets that
// it scales in place, remembering which it changed.
type round struct {
	d     *api.Deployment
	b     bounds
	plan  Plan
	from  map[*api.ReplicaSet]int32
	dirty []*api.ReplicaSet
}

// Reconcile decides one round for a Deployment, as upstream's
// syncDeployment: a Deployment being deleted only gets its status; a
// paused Deployment or a scaling event only scales (and a paused one is
// cleaned up); otherwise the Recreate or RollingUpdate strategy runs one
// step. It is pure.
func Reconcile(in Input, b bounds) Plan {
	d := in.Deployment
	r := &round{d: d, b: b, from: map[*api.ReplicaSet]int32{}}
	rss := make([]*api.ReplicaSet, 0, len(in.ReplicaSets))
	for _, rs := range in.ReplicaSets {
		rss = append(rss, api.DeepCopy(rs))
	}
	slices.SortFunc(rss, cmpCreation)
	newRS := findNewReplicaSet(d, rss)
	var olds []*api.ReplicaSet
	for _, rs := range rss {
		if rs != newRS {
			olds = append(olds, rs)
		}
	}
	r.plan.New, r.plan.Old = newRS, olds
	switch {
	case d.DeletionTimestamp != nil:
		return r.plan
	case d.Spec.Paused || isScalingEvent(d, rss):
		r.syncRevision(false)
		r.scale()
		if d.Spec.Paused {
			r.cleanup()
		}
	case !isRolling(d):
		r.plan.Rollout = true
		r.recreate(in.OldPodsRunning)
	default:
		r.plan.Rollout = true
		r.rolling()
	}
	for _, rs := range r.dirty {
		from, ok := r.from[rs]
		if !ok {
			from = rsReplicas(rs)
		}
		r.plan.Updates = append(r.plan.Updates, Update{RS: rs, From: from})
	}
	return r.plan
}

// all is the new ReplicaSet (if any) and the old ones.
func (r *round) all() []*api.ReplicaSet {
	out := slices.Clone(r.plan.Old)
	if r.plan.New != nil {
		out = append(out, r.plan.New)
	}
	return out
}

// touch marks rs (a working copy, not the one being created) as to be
// written.
func (r *round) touch(rs *api.ReplicaSet) {
	if rs == r.plan.Create || slices.Contains(r.dirty, rs) {
		return
	}
	r.dirty = append(r.dirty, rs)
}

// setReplicas sets rs's size, remembering its size before.
func (r *round) setReplicas(rs *api.ReplicaSet, n int32) {
	if _, ok := r.from[rs]; !ok {
		r.from[rs] = rsReplicas(rs)
	}
	rs.Spec.Replicas = &n
}

// scaleRS is upstream's scaleReplicaSet: write the size and the replicas
// annotations when either changes. It reports whether the size changed.
func (r *round) scaleRS(rs *api.ReplicaSet, n int32) bool {
	sized := rsReplicas(rs) != n
	annotated := setReplicasAnnotations(rs, replicasOf(r.d), replicasOf(r.d)+r.b.surge)
	if sized {
		r.setReplicas(rs, n)
	}
	if sized || annotated {
		r.touch(rs)
	}
	return sized
}

// scaleIfNeeded is upstream's scaleReplicaSetAndRecordEvent: nothing when
// the size is right.
func (r *round) scaleIfNeeded(rs *api.ReplicaSet, n int32) bool {
	if rsReplicas(rs) == n {
		return false
	}
	return r.scaleRS(rs, n)
}

// syncRevision is upstream's getAllReplicaSetsAndSyncRevision: the new
// ReplicaSet gets revision max(old)+1 and the Deployment's annotations;
// when there is none and create is set, it is built (created by apply)
// with NewRSNewReplicas replicas. The Deployment's revision follows the
// new ReplicaSet's.
func (r *round) syncRevision(create bool) {
	d := r.d
	newRevision := maxRevision(r.plan.Old) + 1
	if rs := r.plan.New; rs != nil {
		if setNewReplicaSetAnnotations(d, rs, newRevision, true, r.b.surge) || rs.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			rs.Spec.MinReadySeconds = d.Spec.MinReadySeconds
			r.touch(rs)
		}
		if v := rs.Annotations[AnnotationRevision]; v != d.Annotations[AnnotationRevision] {
			r.plan.Revision = v
		}
		if hasProgressDeadline(d) && getCondition(&d.Status, api.DeploymentProgressing) == nil {
			r.plan.FoundNew = true
		}
		return
	}
	if !create {
		return
	}
	rs := newReplicaSet(d)
	zero := int32(0)
	rs.Spec.Replicas = &zero
	n := newRSNewReplicas(d, r.b, append(slices.Clone(r.plan.Old), rs), rs)
	rs.Spec.Replicas = &n
	setNewReplicaSetAnnotations(d, rs, newRevision, false, r.b.surge)
	r.plan.Create, r.plan.New = rs, rs
	r.plan.Revision = strconv.FormatInt(newRevision, 10)
	if d.Annotations[AnnotationRevision] == r.plan.Revision {
		r.plan.Revision = ""
	}
}

// newReplicaSet is the new ReplicaSet of d's template (0 replicas, no
// annotations): name <deployment>-<hash>, the hash label added to its
// labels, selector and template, d as controller.
func newReplicaSet(d *api.Deployment) *api.ReplicaSet {
	tmpl := copyJSON(&d.Spec.Template)
	hash := ComputeHash(&d.Spec.Template, d.Status.CollisionCount)
	labels := maps.Clone(d.Spec.Template.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelPodTemplateHash] = hash
	tmpl.Labels = labels
	sel := &api.LabelSelector{}
	if d.Spec.Selector != nil {
		sel = copyJSON(d.Spec.Selector)
	}
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	sel.MatchLabels[LabelPodTemplateHash] = hash
	return &api.ReplicaSet{
		TypeMeta: api.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: api.ObjectMeta{
			Name:            replicaSetName(d.Name, hash),
			Namespace:       d.Namespace,
			Labels:          maps.Clone(labels),
			OwnerReferences: []api.OwnerReference{ownerRef(d)},
		},
		Spec: api.ReplicaSetSpec{
			MinReadySeconds: d.Spec.MinReadySeconds,
			Selector:        sel,
			Template:        *tmpl,
		},
	}
}

// copyJSON deep-copies an API value through its JSON encoding (the API
// types always encode).
func copyJSON[T any](in *T) *T {
	out := new(T)
	if b, err := json.Marshal(in); err == nil {
		_ = json.Unmarshal(b, out)
	}
	return out
}

// ownerRef is the controller reference a Deployment's ReplicaSets carry.
func ownerRef(d *api.Deployment) api.OwnerReference {
	t := true
	return api.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID,
		Controller: &t, BlockOwnerDeletion: &t}
}

// isScalingEvent is upstream's: an active ReplicaSet's desired-replicas
// annotation differs from spec.replicas.
func isScalingEvent(d *api.Deployment, rss []*api.ReplicaSet) bool {
	for _, rs := range activeOnly(rss) {
		if desired, ok := intAnnotation(rs, AnnotationDesiredReplicas); ok && desired != replicasOf(d) {
			return true
		}
	}
	return false
}

// scale is upstream's scale: with one active ReplicaSet (or none) that
// one (or the newest) gets spec.replicas; a saturated new ReplicaSet
// scales the old ones to 0; otherwise, in a rolling update, the
// difference to replicas + maxSurge is spread over the active
// ReplicaSets in proportion to their size (proportional scaling), the
// rounding leftover going to the largest.
func (r *round) scale() {
	d := r.d
	want := replicasOf(d)
	if rs := r.activeOrLatest(); rs != nil {
		if rsReplicas(rs) != want {
			r.scaleRS(rs, want)
		}
		return
	}
	if newRS := r.plan.New; newRS != nil && isSaturated(d, newRS) {
		for _, rs := range activeOnly(r.plan.Old) {
			r.scaleRS(rs, 0)
		}
		return
	}
	if !isRolling(d) {
		return
	}
	all := activeOnly(r.all())
	allowed := int32(0)
	if want > 0 {
		allowed = want + r.b.surge
	}
	toAdd := allowed - sumReplicas(all)
	switch {
	case toAdd > 0:
		slices.SortFunc(all, cmpSizeNewer)
	case toAdd < 0:
		slices.SortFunc(all, cmpSizeOlder)
	}
	added := int32(0)
	size := make([]int32, len(all))
	for i, rs := range all {
		size[i] = rsReplicas(rs)
		if toAdd != 0 {
			p := proportion(rs, d, r.b, toAdd, added)
			size[i] += p
			added += p
		}
	}
	for i, rs := range all {
		if i == 0 && toAdd != 0 {
			size[i] = max(size[i]+toAdd-added, 0)
		}
		r.scaleRS(rs, size[i])
	}
}

// activeOrLatest is upstream's FindActiveOrLatest: the only active
// ReplicaSet; with none, the new one or else the newest old one; nil with
// several active.
func (r *round) activeOrLatest() *api.ReplicaSet {
	if r.plan.New == nil && len(r.plan.Old) == 0 {
		return nil
	}
	olds := slices.Clone(r.plan.Old)
	slices.SortFunc(olds, cmpCreation)
	active := activeOnly(append(slices.Clone(olds), r.plan.New))
	switch len(active) {
	case 0:
		if r.plan.New != nil {
			return r.plan.New
		}
		return olds[len(olds)-1]
	case 1:
		return active[0]
	}
	return nil
}

// isSaturated: the new ReplicaSet has all replicas, desired by the
// current spec.replicas, all available.
func isSaturated(d *api.Deployment, rs *api.ReplicaSet) bool {
	desired, ok := intAnnotation(rs, AnnotationDesiredReplicas)
	return ok && rsReplicas(rs) == replicasOf(d) && desired == replicasOf(d) &&
		rs.Status.AvailableReplicas == replicasOf(d)
}

// rolling is upstream's rolloutRolling: scale the new ReplicaSet up (or
// down to replicas); if it did not change, scale old ones down; if
// neither changed and the stored status says complete, clean up.
func (r *round) rolling() {
	r.syncRevision(true)
	if r.reconcileNew() {
		return
	}
	if r.reconcileOld() {
		return
	}
	if deploymentComplete(r.d, &r.d.Status) {
		r.cleanup()
	}
}

func (r *round) reconcileNew() bool {
	newRS, want := r.plan.New, replicasOf(r.d)
	switch n := rsReplicas(newRS); {
	case n == want:
		return false
	case n > want:
		return r.scaleIfNeeded(newRS, want)
	}
	return r.scaleIfNeeded(newRS, newRSNewReplicas(r.d, r.b, r.all(), newRS))
}

// reconcileOld is upstream's reconcileOldReplicaSets: at most
// all - (replicas - maxUnavailable) - (new not yet available) pods go,
// unavailable old ones first (cleanupUnhealthyReplicas), then old ones
// while available pods stay above replicas - maxUnavailable, oldest
// ReplicaSet first. A ReplicaSet's available pods count at most its
// spec.replicas: the ReplicaSet controller writes the status of the pods
// it saw before deleting the surplus (upstream's calculateStatus), so
// right after a scale-down the status still counts pods that are going;
// upstream sums the status alone and, when the ReplicaSet's next status
// write comes later than a new pod's readiness, scales down below
// replicas - maxUnavailable.
func (r *round) reconcileOld() bool {
	olds := activeOnly(r.plan.Old)
	if sumReplicas(olds) == 0 {
		return false
	}
	newRS := r.plan.New
	minAvailable := replicasOf(r.d) - r.b.unavailable
	newUnavailable := rsReplicas(newRS) - newRS.Status.AvailableReplicas
	maxScaledDown := sumReplicas(r.all()) - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false
	}
	slices.SortFunc(olds, cmpCreation)
	total := int32(0)
	for _, rs := range olds {
		if total >= maxScaledDown {
			break
		}
		n := rsReplicas(rs)
		if n == 0 || n == rs.Status.AvailableReplicas {
			continue
		}
		down := min(maxScaledDown-total, n-rs.Status.AvailableReplicas)
		if down <= 0 {
			continue
		}
		r.scaleIfNeeded(rs, n-down)
		total += down
	}
	var available int32
	for _, rs := range r.all() {
		available += min(rs.Status.AvailableReplicas, rsReplicas(rs))
	}
	if available > minAvailable {
		want := available - minAvailable
		done := int32(0)
		for _, rs := range olds {
			if done >= want {
				break
			}
			n := rsReplicas(rs)
			if n == 0 {
				continue
			}
			down := min(n, want-done)
			r.scaleIfNeeded(rs, n-down)
			done += down
		}
		total += done
	}
	return total > 0
}

// recreate is upstream's rolloutRecreate: scale every old ReplicaSet to
// 0; once no old pod runs, create (or scale) the new one to replicas.
func (r *round) recreate(oldPodsRunning bool) {
	r.syncRevision(false)
	scaled := false
	for _, rs := range activeOnly(r.plan.Old) {
		if r.scaleIfNeeded(rs, 0) {
			scaled = true
		}
	}
	if scaled {
		return
	}
	for _, rs := range r.plan.Old {
		if rs.Status.Replicas > 0 {
			oldPodsRunning = true
		}
	}
	if oldPodsRunning {
		return
	}
	if r.plan.New == nil {
		r.syncRevision(true)
	}
	r.scaleIfNeeded(r.plan.New, replicasOf(r.d))
	if deploymentComplete(r.d, &r.d.Status) {
		r.cleanup()
	}
}

// cleanup is upstream's cleanupDeployment: beyond revisionHistoryLimit,
// the oldest old ReplicaSets that have no replicas (spec and status) and
// whose status is current are deleted.
func (r *round) cleanup() {
	d := r.d
	if d.Spec.RevisionHistoryLimit == nil {
		return
	}
	var alive []*api.ReplicaSet
	for _, rs := range r.plan.Old {
		if rs.DeletionTimestamp == nil {
			alive = append(alive, rs)
		}
	}
	diff := len(alive) - int(*d.Spec.RevisionHistoryLimit)
	if diff <= 0 {
		return
	}
	slices.SortFunc(alive, cmpRevision)
	for _, rs := range alive[:diff] {
		if rs.Status.Replicas != 0 || rsReplicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration ||
			slices.Contains(r.dirty, rs) {
			continue
		}
		r.plan.Delete = append(r.plan.Delete, rs)
	}
	r.plan.Old = slices.DeleteFunc(r.plan.Old, func(rs *api.ReplicaSet) bool { return slices.Contains(r.plan.Delete, rs) })
}

// deploymentComplete is upstream's DeploymentComplete.
func deploymentComplete(d *api.Deployment, st *api.DeploymentStatus) bool {
	n := replicasOf(d)
	return st.UpdatedReplicas == n && st.Replicas == n && st.AvailableReplicas == n &&
		st.ObservedGeneration >= d.Generation
}
