package deployment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/api"
)

// Labels and annotations, as upstream's deployment util names them.
const (
	// LabelPodTemplateHash is added to a new ReplicaSet's labels, selector
	// and pod template: the ComputeHash of the Deployment's template.
	LabelPodTemplateHash = "pod-template-hash"
	// AnnotationRevision is the revision of a ReplicaSet, and on the
	// Deployment the revision of its new ReplicaSet.
	AnnotationRevision = "deployment.kubernetes.io/revision"
	// AnnotationRevisionHistory lists, comma separated, the revisions a
	// ReplicaSet had before it became the newest again (a rollback).
	AnnotationRevisionHistory = "deployment.kubernetes.io/revision-history"
	// AnnotationDesiredReplicas is the Deployment's spec.replicas when the
	// ReplicaSet was last scaled by it.
	AnnotationDesiredReplicas = "deployment.kubernetes.io/desired-replicas"
	// AnnotationMaxReplicas is spec.replicas + maxSurge at that time.
	AnnotationMaxReplicas = "deployment.kubernetes.io/max-replicas"
	// AnnotationChangeCause is copied from the Deployment to its new
	// ReplicaSet; kubectl rollout history shows it.
	AnnotationChangeCause = "kubernetes.io/change-cause"
	// annotationLastApplied is never copied to ReplicaSets.
	annotationLastApplied = "kubectl.kubernetes.io/last-applied-configuration"
	// annotationDeprecatedRollbackTo is never copied to ReplicaSets.
	annotationDeprecatedRollbackTo = "deprecated.deployment.rollback.to"
	// maxRevHistoryLengthInChars bounds AnnotationRevisionHistory.
	maxRevHistoryLengthInChars = 2000
)

// replicasOf is spec.replicas (defaulted to 1 by the server).
func replicasOf(d *api.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// rsReplicas is a ReplicaSet's spec.replicas (defaulted to 1).
func rsReplicas(rs *api.ReplicaSet) int32 {
	if rs.Spec.Replicas == nil {
		return 1
	}
	return *rs.Spec.Replicas
}

func isRolling(d *api.Deployment) bool {
	return d.Spec.Strategy.Type != api.RecreateDeploymentStrategyType
}

// bounds are a Deployment's resolved rolling-update bounds.
type bounds struct {
	surge       int32 // pods allowed above replicas
	unavailable int32 // pods allowed below replicas
}

// resolveBounds is upstream's ResolveFenceposts with MaxSurge and
// MaxUnavailable: maxSurge rounds up and maxUnavailable down against
// spec.replicas; if both resolve to 0, maxUnavailable is 1; maxUnavailable
// is at most replicas, and 0 when replicas is 0. Recreate has no bounds.
func resolveBounds(d *api.Deployment) (bounds, error) {
	if !isRolling(d) {
		return bounds{}, nil
	}
	s := d.Spec.Strategy
	replicas := int(replicasOf(d))
	var surge, unavail int
	var err error
	if s.RollingUpdate != nil && s.RollingUpdate.MaxSurge != nil {
		if surge, err = s.RollingUpdate.MaxSurge.ScaledValue(replicas, true); err != nil {
			return bounds{}, fmt.Errorf("deployment: spec.strategy.rollingUpdate.maxSurge: %w", err)
		}
	}
	if s.RollingUpdate != nil && s.RollingUpdate.MaxUnavailable != nil {
		if unavail, err = s.RollingUpdate.MaxUnavailable.ScaledValue(replicas, false); err != nil {
			return bounds{}, fmt.Errorf("deployment: spec.strategy.rollingUpdate.maxUnavailable: %w", err)
		}
	}
	surge, unavail = max(surge, 0), max(unavail, 0)
	if surge == 0 && unavail == 0 {
		unavail = 1
	}
	if replicas == 0 {
		unavail = 0
	}
	unavail = min(unavail, replicas)
	return bounds{surge: int32(surge), unavailable: int32(unavail)}, nil
}

// revisionOf is a ReplicaSet's revision annotation (0 when absent or
// unreadable).
func revisionOf(rs *api.ReplicaSet) int64 {
	v, err := strconv.ParseInt(rs.Annotations[AnnotationRevision], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// maxRevision is the highest revision among rss.
func maxRevision(rss []*api.ReplicaSet) int64 {
	var m int64
	for _, rs := range rss {
		m = max(m, revisionOf(rs))
	}
	return m
}

// templateJSONWithoutHash encodes t without the pod-template-hash label.
func templateJSONWithoutHash(t *api.PodTemplateSpec) []byte {
	c := *t
	if _, ok := c.Labels[LabelPodTemplateHash]; ok {
		c.Labels = maps.Clone(c.Labels)
		delete(c.Labels, LabelPodTemplateHash)
	}
	if len(c.Labels) == 0 {
		c.Labels = nil
	}
	b, _ := json.Marshal(&c)
	return b
}

// equalIgnoreHash is upstream's EqualIgnoreHash: the templates are equal
// once the pod-template-hash label is taken out of both.
func equalIgnoreHash(a, b *api.PodTemplateSpec) bool {
	return bytes.Equal(templateJSONWithoutHash(a), templateJSONWithoutHash(b))
}

// cmpCreation orders ReplicaSets oldest first, ties by name
// (ReplicaSetsByCreationTimestamp).
func cmpCreation(a, b *api.ReplicaSet) int {
	if !a.CreationTimestamp.Equal(b.CreationTimestamp.Time) {
		if a.CreationTimestamp.Before(b.CreationTimestamp.Time) {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Name, b.Name)
}

// cmpRevision orders ReplicaSets by revision, ties by creation
// (ReplicaSetsByRevision).
func cmpRevision(a, b *api.ReplicaSet) int {
	ra, rb := revisionOf(a), revisionOf(b)
	if ra != rb {
		if ra < rb {
			return -1
		}
		return 1
	}
	return cmpCreation(a, b)
}

// cmpSizeNewer orders larger first, ties newer first (ReplicaSetsBySizeNewer).
func cmpSizeNewer(a, b *api.ReplicaSet) int {
	if ra, rb := rsReplicas(a), rsReplicas(b); ra != rb {
		return int(rb) - int(ra)
	}
	return -cmpCreation(a, b)
}

// cmpSizeOlder orders larger first, ties older first (ReplicaSetsBySizeOlder).
func cmpSizeOlder(a, b *api.ReplicaSet) int {
	if ra, rb := rsReplicas(a), rsReplicas(b); ra != rb {
		return int(rb) - int(ra)
	}
	return cmpCreation(a, b)
}

// findNewReplicaSet is upstream's FindNewReplicaSet: the oldest ReplicaSet
// whose template equals the Deployment's, ignoring the hash label.
func findNewReplicaSet(d *api.Deployment, rss []*api.ReplicaSet) *api.ReplicaSet {
	sorted := slices.Clone(rss)
	slices.SortFunc(sorted, cmpCreation)
	for _, rs := range sorted {
		if equalIgnoreHash(&rs.Spec.Template, &d.Spec.Template) {
			return rs
		}
	}
	return nil
}

// skipCopyAnnotation: annotations of the Deployment that are not copied to
// its ReplicaSets.
func skipCopyAnnotation(k string) bool {
	switch k {
	case annotationLastApplied, AnnotationRevision, AnnotationRevisionHistory,
		AnnotationDesiredReplicas, AnnotationMaxReplicas, annotationDeprecatedRollbackTo:
		return true
	}
	return false
}

// copyDeploymentAnnotations copies d's annotations (but the skipped ones)
// onto rs, reporting whether any changed.
func copyDeploymentAnnotations(d *api.Deployment, rs *api.ReplicaSet) bool {
	changed := false
	for k, v := range d.Annotations {
		if skipCopyAnnotation(k) {
			continue
		}
		if cur, ok := rs.Annotations[k]; ok && cur == v {
			continue
		}
		if rs.Annotations == nil {
			rs.Annotations = map[string]string{}
		}
		rs.Annotations[k] = v
		changed = true
	}
	return changed
}

// setNewReplicaSetAnnotations is upstream's SetNewReplicaSetAnnotations:
// copy d's annotations, raise the revision to newRevision (keeping the old
// one in the revision history when it was set: a rollback), and on a
// ReplicaSet about to be created set the replicas annotations.
func setNewReplicaSetAnnotations(d *api.Deployment, rs *api.ReplicaSet, newRevision int64, exists bool, maxSurge int32) bool {
	changed := copyDeploymentAnnotations(d, rs)
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	oldRevision, hadRevision := rs.Annotations[AnnotationRevision]
	oldInt, err := strconv.ParseInt(oldRevision, 10, 64)
	if err != nil {
		oldInt = 0
	}
	if oldInt < newRevision {
		rs.Annotations[AnnotationRevision] = strconv.FormatInt(newRevision, 10)
		changed = true
		if hadRevision && oldRevision != "" {
			hist := rs.Annotations[AnnotationRevisionHistory]
			if hist == "" {
				rs.Annotations[AnnotationRevisionHistory] = oldRevision
			} else {
				parts := strings.Split(hist, ",")
				total := len(hist) + len(oldRevision) + 1
				start := 0
				for total > maxRevHistoryLengthInChars && start < len(parts) {
					total -= len(parts[start]) + 1
					start++
				}
				if total <= maxRevHistoryLengthInChars {
					rs.Annotations[AnnotationRevisionHistory] = strings.Join(append(parts[start:], oldRevision), ",")
				}
			}
		}
	}
	if !exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d)+maxSurge) {
		changed = true
	}
	return changed
}

// setReplicasAnnotations sets desired-replicas and max-replicas,
// reporting whether they changed.
func setReplicasAnnotations(rs *api.ReplicaSet, desired, maxReplicas int32) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	d, m := strconv.Itoa(int(desired)), strconv.Itoa(int(maxReplicas))
	if rs.Annotations[AnnotationDesiredReplicas] == d && rs.Annotations[AnnotationMaxReplicas] == m {
		return false
	}
	rs.Annotations[AnnotationDesiredReplicas] = d
	rs.Annotations[AnnotationMaxReplicas] = m
	return true
}

// intAnnotation reads an int32 annotation of rs.
func intAnnotation(rs *api.ReplicaSet, key string) (int32, bool) {
	v, ok := rs.Annotations[key]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// sumReplicas is the sum of spec.replicas (GetReplicaCountForReplicaSets).
func sumReplicas(rss []*api.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rsReplicas(rs)
		}
	}
	return n
}

// activeOnly keeps ReplicaSets with spec.replicas > 0 (FilterActiveReplicaSets).
func activeOnly(rss []*api.ReplicaSet) []*api.ReplicaSet {
	var out []*api.ReplicaSet
	for _, rs := range rss {
		if rs != nil && rsReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// newRSNewReplicas is upstream's NewRSNewReplicas: Recreate wants all
// replicas at once; a rolling update grows the new ReplicaSet up to
// replicas + maxSurge pods in all, and never past replicas. Unlike
// upstream, which sums spec.replicas, each ReplicaSet counts
// max(spec.replicas, status.replicas): a ReplicaSet just scaled down
// still has the pods its controller has not deleted yet, and growing the
// new one by them would run more than replicas + maxSurge pods.
func newRSNewReplicas(d *api.Deployment, b bounds, all []*api.ReplicaSet, newRS *api.ReplicaSet) int32 {
	if !isRolling(d) {
		return replicasOf(d)
	}
	var current int32
	for _, rs := range all {
		if rs != nil {
			current += max(rsReplicas(rs), rs.Status.Replicas)
		}
	}
	maxTotal := replicasOf(d) + b.surge
	if current >= maxTotal {
		return rsReplicas(newRS)
	}
	up := min(maxTotal-current, replicasOf(d)-rsReplicas(newRS))
	return rsReplicas(newRS) + up
}

// replicaSetFraction is upstream's getReplicaSetFraction: the change of
// rs's size that keeps its share of the Deployment when the Deployment
// scales to replicas + maxSurge (its max-replicas annotation, or the
// stored status.replicas, being the old total).
func replicaSetFraction(rs *api.ReplicaSet, d *api.Deployment, b bounds) int32 {
	if replicasOf(d) == 0 {
		return -rsReplicas(rs)
	}
	deploymentReplicas := replicasOf(d) + b.surge
	annotated, ok := intAnnotation(rs, AnnotationMaxReplicas)
	if !ok {
		annotated = d.Status.Replicas
	}
	if annotated == 0 {
		return 0
	}
	size := float64(rsReplicas(rs)*deploymentReplicas) / float64(annotated)
	return int32(math.Round(size)) - rsReplicas(rs)
}

// proportion is upstream's GetProportion.
func proportion(rs *api.ReplicaSet, d *api.Deployment, b bounds, toAdd, added int32) int32 {
	if rs == nil || rsReplicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	frac := replicaSetFraction(rs, d, b)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(frac, allowed)
	}
	return max(frac, allowed)
}
