package statefulset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// Claims of a StatefulSet's pods, from spec.volumeClaimTemplates, as
// upstream's stateful_pod_control: the claim of template t for ordinal i
// is <t>-<set>-<i>, created before its pod and never updated after; its
// owner references follow spec.persistentVolumeClaimRetentionPolicy.

// ClaimName is the name of the claim of template for the pod of ordinal.
func ClaimName(set *api.StatefulSet, template string, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", template, set.Name, ordinal)
}

// newClaims are the claims of the pod of ordinal: each template's
// metadata and spec, named ClaimName, in the set's namespace, with the
// template's labels plus the set's selector matchLabels.
func newClaims(set *api.StatefulSet, ordinal int) []*api.PersistentVolumeClaim {
	out := make([]*api.PersistentVolumeClaim, 0, len(set.Spec.VolumeClaimTemplates))
	for i := range set.Spec.VolumeClaimTemplates {
		t := api.DeepCopy(&set.Spec.VolumeClaimTemplates[i])
		labels := maps.Clone(t.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		if set.Spec.Selector != nil {
			maps.Copy(labels, set.Spec.Selector.MatchLabels)
		}
		out = append(out, &api.PersistentVolumeClaim{
			TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			ObjectMeta: api.ObjectMeta{
				Name: ClaimName(set, t.Name, ordinal), Namespace: set.Namespace,
				Labels: labels, Annotations: t.Annotations,
			},
			Spec: t.Spec,
		})
	}
	return out
}

// setStorage points the pod's volumes named as claim templates at the
// ordinal's claims (replacing a template volume of that name, adding the
// others), as upstream's updateStorage.
func setStorage(set *api.StatefulSet, ordinal int, spec *api.PodSpec) {
	if len(set.Spec.VolumeClaimTemplates) == 0 {
		return
	}
	claims := map[string]string{}
	for _, t := range set.Spec.VolumeClaimTemplates {
		claims[t.Name] = ClaimName(set, t.Name, ordinal)
	}
	vols := make([]api.Volume, 0, len(spec.Volumes)+len(claims))
	for _, v := range spec.Volumes {
		if _, ok := claims[v.Name]; !ok {
			vols = append(vols, v)
		}
	}
	for _, t := range set.Spec.VolumeClaimTemplates {
		if _, ok := claims[t.Name]; !ok {
			continue
		}
		vols = append(vols, api.Volume{Name: t.Name, VolumeSource: api.VolumeSource{
			PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: claims[t.Name]}}})
		delete(claims, t.Name)
	}
	spec.Volumes = vols
}

func retentionOf(set *api.StatefulSet) (whenDeleted, whenScaled string) {
	whenDeleted, whenScaled = api.RetainPersistentVolumeClaimRetentionPolicyType, api.RetainPersistentVolumeClaimRetentionPolicyType
	if p := set.Spec.PersistentVolumeClaimRetentionPolicy; p != nil {
		if p.WhenDeleted == api.DeletePersistentVolumeClaimRetentionPolicyType {
			whenDeleted = p.WhenDeleted
		}
		if p.WhenScaled == api.DeletePersistentVolumeClaimRetentionPolicyType {
			whenScaled = p.WhenScaled
		}
	}
	return whenDeleted, whenScaled
}

// claimOwners is the owner references a claim of pod should have, as
// upstream's updateClaimOwnerRefForSetAndPod: with whenDeleted Delete the
// set owns it (so the garbage collector deletes it with the set); with
// whenScaled Delete the pod owns it once the pod's ordinal is out of range
// (so it goes with the condemned pod), and the set's reference is then
// dropped; with Retain for both it has neither. References to others are
// kept.
func claimOwners(set *api.StatefulSet, pod *api.Pod, ordinal int, have []api.OwnerReference) []api.OwnerReference {
	whenDeleted, whenScaled := retentionOf(set)
	start := startOrdinal(set)
	scaledDown := ordinal < start || ordinal >= start+replicasOf(set)
	const del = api.DeletePersistentVolumeClaimRetentionPolicyType
	wantSet := whenDeleted == del && !(whenScaled == del && scaledDown)
	wantPod := whenScaled == del && scaledDown && pod != nil && pod.UID != ""
	var out []api.OwnerReference
	for _, r := range have {
		if (r.UID == set.UID && r.Kind == "StatefulSet") || (pod != nil && r.UID == pod.UID && r.Kind == "Pod") {
			continue
		}
		out = append(out, r)
	}
	if wantSet {
		out = append(out, api.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: set.Name, UID: set.UID})
	}
	if wantPod {
		out = append(out, api.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID})
	}
	return out
}

// ownersEqual compares owner references by uid and kind, in any order.
func ownersEqual(a, b []api.OwnerReference) bool {
	key := func(r api.OwnerReference) string { return r.Kind + "/" + string(r.UID) }
	ka, kb := make([]string, 0, len(a)), make([]string, 0, len(b))
	for _, r := range a {
		ka = append(ka, key(r))
	}
	for _, r := range b {
		kb = append(kb, key(r))
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}

// createClaims creates the missing claims of the pod of ordinal before
// the pod; a claim being deleted fails the create (the pod would mount a
// claim about to go), as upstream.
func (c *Controller) createClaims(ctx context.Context, set *api.StatefulSet, ordinal int) error {
	if c.claims == nil {
		return nil
	}
	var errs []error
	for _, claim := range newClaims(set, ordinal) {
		if obj, ok := c.claims.Get(claim.Namespace, claim.Name); ok {
			if obj.GetObjectMeta().DeletionTimestamp != nil {
				errs = append(errs, fmt.Errorf("statefulset: %s/%s: pvc %s is being deleted", set.Namespace, set.Name, claim.Name))
			}
			continue
		}
		claim.OwnerReferences = claimOwners(set, nil, ordinal, nil)
		err := c.client.Create(ctx, c.claimsInfo, claim.Namespace, claim)
		switch {
		case err == nil:
			c.log.Info("created claim", "statefulset", keyOf(&set.ObjectMeta), "claim", claim.Name)
			c.event(set, api.EventTypeNormal, EventSuccessfulCreate, "create Claim %s Pod %s in StatefulSet %s success",
				claim.Name, podName(set.Name, ordinal), set.Name)
		case client.IsAlreadyExists(err):
			// A cache behind our own create: the claim is there.
		default:
			c.event(set, api.EventTypeWarning, EventFailedCreate, "create Claim %s for Pod %s in StatefulSet %s failed error: %v",
				claim.Name, podName(set.Name, ordinal), set.Name, err)
			errs = append(errs, fmt.Errorf("statefulset: %s/%s: create claim %s: %w", set.Namespace, set.Name, claim.Name, err))
		}
	}
	return errors.Join(errs...)
}

// syncClaimOwners brings the owner references of the claims of the set's
// pods in line with the retention policy (before the plan deletes
// condemned pods, so that with whenScaled Delete a condemned pod already
// owns its claims when it goes). Each write is guarded by the claim's
// resourceVersion. wait says the plan must not run yet: an owner was
// just written (the cache has not seen it), or a claim of a pod that may
// own it is missing from the cache but exists; the set is synced again.
func (c *Controller) syncClaimOwners(ctx context.Context, set *api.StatefulSet, pods []*api.Pod) (wait bool, err error) {
	if c.claims == nil || len(set.Spec.VolumeClaimTemplates) == 0 || set.DeletionTimestamp != nil {
		return false, nil
	}
	var errs []error
	for _, p := range pods {
		ord, ok := ordinalOf(set.Name, p.Name)
		if !ok {
			continue
		}
		for _, t := range set.Spec.VolumeClaimTemplates {
			name := ClaimName(set, t.Name, ord)
			obj, ok := c.claims.Get(set.Namespace, name)
			if !ok {
				if len(claimOwners(set, p, ord, nil)) > 0 && c.claimExists(ctx, set.Namespace, name) {
					wait = true // created, not yet in the cache
				}
				continue
			}
			claim := obj.(*api.PersistentVolumeClaim)
			if claim.DeletionTimestamp != nil {
				continue
			}
			want := claimOwners(set, p, ord, claim.OwnerReferences)
			if ownersEqual(want, claim.OwnerReferences) {
				continue
			}
			upd := api.DeepCopy(claim)
			upd.OwnerReferences = want
			if err := c.client.Update(ctx, c.claimsInfo, upd.Namespace, upd); err != nil && !client.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("statefulset: %s/%s: claim %s owners: %w", set.Namespace, set.Name, claim.Name, err))
			}
			wait = true
		}
	}
	return wait, errors.Join(errs...)
}

// claimExists asks the API whether a claim the cache lacks exists (an
// error counts as yes: wait rather than delete a pod before its claim
// is owned).
func (c *Controller) claimExists(ctx context.Context, ns, name string) bool {
	err := c.client.Get(ctx, c.claimsInfo, ns, name, &api.PersistentVolumeClaim{})
	return !client.IsNotFound(err)
}
