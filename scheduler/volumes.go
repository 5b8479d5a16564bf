package scheduler

import (
	"fmt"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// The volume filter, upstream's VolumeBinding plugin cut to what Skiff's
// binder needs (controller/persistentvolume):
//
//   - a claim the pod uses must exist and not be being deleted;
//   - a bound claim's volume must exist, and the pod goes only to a node
//     its nodeAffinity admits ("node(s) had volume node affinity
//     conflict");
//   - an unbound claim of an Immediate class (or of no class) makes the
//     pod unschedulable until the binder binds it ("pod has unbound
//     immediate PersistentVolumeClaims");
//   - an unbound WaitForFirstConsumer claim fits any node when its class
//     has a provisioner (Skiff's local-path provisions wherever the pod
//     goes; the binder learns the node from the scheduled pod and
//     provisions there), and only a node with an Available volume that
//     satisfies the claim when the class is kubernetes.io/no-provisioner
//     ("node(s) didn't find available persistent volumes to bind").
//
// Without the claim, volume and class caches (Deps.Claims, Volumes,
// Classes nil) the filter is off.

// Volume filter reasons, worded as upstream's.
const (
	reasonVolumeNodeConflict = "node(s) had volume node affinity conflict"
	reasonUnboundImmediate   = "pod has unbound immediate PersistentVolumeClaims"
	reasonNoVolumeToBind     = "node(s) didn't find available persistent volumes to bind"
)

const noProvisioner = "kubernetes.io/no-provisioner"

// volumeCaches are the informers the filter reads.
type volumeCaches struct {
	claims, volumes, classes Cache
	// list lists the volumes (for static WaitForFirstConsumer claims);
	// nil when the volumes cache cannot list.
	list func() []api.Object
}

// volumeLister is the optional List of a volumes cache.
type volumeLister interface{ List() []api.Object }

// newVolumeCaches wires the filter's caches (nil when any is missing) and
// wakes unschedulable pods when a claim, volume or class changes.
func (s *Scheduler) newVolumeCaches(d Deps) *volumeCaches {
	if d.Claims == nil || d.Volumes == nil || d.Classes == nil {
		return nil
	}
	vc := &volumeCaches{claims: d.Claims, volumes: d.Volumes, classes: d.Classes}
	if l, ok := d.Volumes.(volumeLister); ok {
		vc.list = l.List
	}
	wake := client.HandlerFuncs{
		AddFunc:    func(api.Object) { s.wakeUnschedulable() },
		UpdateFunc: func(_, _ api.Object) { s.wakeUnschedulable() },
	}
	for _, c := range []Cache{d.Claims, d.Volumes, d.Classes} {
		c.AddEventHandler(wake)
	}
	return vc
}

func (vc *volumeCaches) synced() bool {
	return vc == nil || (vc.claims.HasSynced() && vc.volumes.HasSynced() && vc.classes.HasSynced())
}

// volumeCheck is the filter's view of one pod: a reason every node fails
// with, or the node affinities of its bound volumes and its unbound
// static claims to match per node.
type volumeCheck struct {
	podReason  string
	affinities []*api.PersistentVolume
	static     []*api.PersistentVolumeClaim
	volumes    []*api.PersistentVolume
}

// forPod computes the pod's volume check; nil when the pod uses no claim.
func (vc *volumeCaches) forPod(pod *api.Pod) *volumeCheck {
	if vc == nil {
		return nil
	}
	var chk *volumeCheck
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		if chk == nil {
			chk = &volumeCheck{}
		}
		name := v.PersistentVolumeClaim.ClaimName
		obj, ok := vc.claims.Get(pod.Namespace, name)
		if !ok {
			chk.podReason = fmt.Sprintf("persistentvolumeclaim %q not found", name)
			return chk
		}
		claim := obj.(*api.PersistentVolumeClaim)
		if claim.DeletionTimestamp != nil {
			chk.podReason = fmt.Sprintf("persistentvolumeclaim %q is being deleted", name)
			return chk
		}
		if claim.Spec.VolumeName != "" {
			pvObj, ok := vc.volumes.Get("", claim.Spec.VolumeName)
			if !ok {
				chk.podReason = fmt.Sprintf("persistentvolume %q not found", claim.Spec.VolumeName)
				return chk
			}
			chk.affinities = append(chk.affinities, pvObj.(*api.PersistentVolume))
			continue
		}
		var sc *api.StorageClass
		if cls := api.ClaimClass(claim); cls != "" {
			if o, ok := vc.classes.Get("", cls); ok {
				sc = o.(*api.StorageClass)
			}
		}
		if sc == nil || sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != api.VolumeBindingWaitForFirstConsumer {
			chk.podReason = reasonUnboundImmediate
			return chk
		}
		if sc.Provisioner == noProvisioner {
			chk.static = append(chk.static, claim)
		}
	}
	if chk != nil && len(chk.static) > 0 && vc.list != nil {
		for _, o := range vc.list() {
			if pv, ok := o.(*api.PersistentVolume); ok {
				chk.volumes = append(chk.volumes, pv)
			}
		}
	}
	return chk
}

// fits is "" when the pod's volumes allow node n, else the reason.
func (chk *volumeCheck) fits(n *nodeInfo) string {
	if chk == nil {
		return ""
	}
	if chk.podReason != "" {
		return chk.podReason
	}
	for _, pv := range chk.affinities {
		if !api.VolumeNodeAffinityMatches(pv, n.labels, n.name) {
			return reasonVolumeNodeConflict
		}
	}
	for _, claim := range chk.static {
		if !chk.staticVolumeOn(claim, n) {
			return reasonNoVolumeToBind
		}
	}
	return ""
}

// staticVolumeOn reports whether an Available, unclaimed (or pre-bound to
// the claim) volume that satisfies the claim may be used on n.
func (chk *volumeCheck) staticVolumeOn(claim *api.PersistentVolumeClaim, n *nodeInfo) bool {
	for _, pv := range chk.volumes {
		if pv.DeletionTimestamp != nil || !api.VolumeNodeAffinityMatches(pv, n.labels, n.name) {
			continue
		}
		if r := pv.Spec.ClaimRef; r != nil {
			if r.Namespace != claim.Namespace || r.Name != claim.Name || (r.UID != "" && r.UID != claim.UID) {
				continue
			}
		} else if pv.Status.Phase != api.VolumeAvailable {
			continue
		}
		if api.CheckVolumeForClaim(pv, claim) == nil {
			return true
		}
	}
	return false
}
