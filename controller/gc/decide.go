package gc

import (
	"slices"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// Finalizers the API server adds for delete propagation.
const (
	FinalizerForeground = "foregroundDeletion"
	FinalizerOrphan     = "orphan"
)

// objectRef identifies one object.
type objectRef struct {
	Info      *api.ResourceInfo
	Namespace string
	Name      string
	UID       string
}

func (r objectRef) String() string {
	res := "?"
	if r.Info != nil {
		res = r.Info.Resource
	}
	if r.Namespace == "" {
		return res + "/" + r.Name
	}
	return res + "/" + r.Namespace + "/" + r.Name
}

// item is the live state of the object being synced.
type item struct {
	Ref        objectRef
	Owners     []api.OwnerReference
	Finalizers []string
	Deleting   bool   // deletionTimestamp is set
	Version    string // the resourceVersion the decision was made on
}

// dependent is one object that refers to the item as an owner.
type dependent struct {
	Ref objectRef
	// Blocking: its reference to the item has blockOwnerDeletion=true.
	Blocking bool
	Deleting bool
	// DeletingDependents: it is itself being deleted in the foreground.
	DeletingDependents bool
}

// ownerState is what a live lookup found for one owner reference.
type ownerState int

const (
	// ownerSolid: the owner exists (or cannot be resolved) and is not
	// waiting for its dependents. It is the zero value: an owner that was
	// not looked up is never taken for absent.
	ownerSolid ownerState = iota
	// ownerAbsent: no object has the referenced uid.
	ownerAbsent
	// ownerWaiting: the owner exists and is being deleted in the foreground.
	ownerWaiting
)

// plan is what a sync does, in this order.
type plan struct {
	// Orphan: remove the item's ownerReference from these dependents.
	Orphan []objectRef
	// RemoveFinalizer: remove this finalizer from the item (after Orphan).
	RemoveFinalizer string
	// Enqueue: sync these uids.
	Enqueue []string
	// RemoveOwners: remove the item's ownerReferences with these uids.
	RemoveOwners []string
	// UnblockOwners: set blockOwnerDeletion=false on the item's references.
	UnblockOwners bool
	// Delete: delete the item with this propagation policy.
	Delete string
}

func (p plan) empty() bool {
	return len(p.Orphan) == 0 && p.RemoveFinalizer == "" && len(p.Enqueue) == 0 &&
		len(p.RemoveOwners) == 0 && !p.UnblockOwners && p.Delete == ""
}

// needsOwners reports whether decide will read owner states for it, so the
// caller looks owners up only then.
func needsOwners(it item) bool { return !it.Deleting && len(it.Owners) > 0 }

// decide computes the plan for an item from its live state, the states of
// its owners (by uid; missing entries count as solid) and its dependents.
func decide(it item, owners map[string]ownerState, deps []dependent) plan {
	if it.Deleting {
		switch {
		case slices.Contains(it.Finalizers, FinalizerOrphan):
			var p plan
			for _, d := range deps {
				p.Orphan = append(p.Orphan, d.Ref)
			}
			p.RemoveFinalizer = FinalizerOrphan
			return p
		case slices.Contains(it.Finalizers, FinalizerForeground):
			var p plan
			blocking := false
			for _, d := range deps {
				if !d.Blocking {
					continue
				}
				blocking = true
				if !d.DeletingDependents {
					p.Enqueue = append(p.Enqueue, d.Ref.UID)
				}
			}
			if !blocking {
				p.RemoveFinalizer = FinalizerForeground
			}
			return p
		}
		return plan{} // being deleted by someone else
	}
	if len(it.Owners) == 0 {
		return plan{}
	}

	var solid, dangling, waiting []string
	for _, ref := range it.Owners {
		switch owners[ref.UID] {
		case ownerAbsent:
			dangling = append(dangling, ref.UID)
		case ownerWaiting:
			waiting = append(waiting, ref.UID)
		default:
			solid = append(solid, ref.UID)
		}
	}
	switch {
	case len(solid) > 0:
		if len(dangling)+len(waiting) == 0 {
			return plan{}
		}
		return plan{RemoveOwners: append(dangling, waiting...)}
	case len(waiting) > 0 && len(deps) > 0:
		// Deleted in the foreground so that the waiting owner also waits
		// for this item's own dependents.
		p := plan{Delete: client.DeletePropagationForeground}
		for _, d := range deps {
			if d.DeletingDependents {
				// A dependent of the item waits for the item, which is
				// about to wait for it: break the cycle.
				p.UnblockOwners = true
				break
			}
		}
		return p
	default:
		return plan{Delete: propagationFor(it.Finalizers)}
	}
}

// propagationFor is the policy that keeps the finalizers an object already
// asks for.
func propagationFor(finalizers []string) string {
	switch {
	case slices.Contains(finalizers, FinalizerOrphan):
		return client.DeletePropagationOrphan
	case slices.Contains(finalizers, FinalizerForeground):
		return client.DeletePropagationForeground
	default:
		return client.DeletePropagationBackground
	}
}
