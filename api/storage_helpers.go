package api

import (
	"fmt"
	"slices"
	"strconv"
)

// Storage helpers shared by the volume binder (controller/persistentvolume),
// the scheduler's volume filter and the node agent.

// ClaimClass is a claim's storage class as upstream's
// GetPersistentVolumeClaimClass: the beta annotation when present, else
// spec.storageClassName ("" for none).
func ClaimClass(c *PersistentVolumeClaim) string {
	if v, ok := c.Annotations[AnnBetaStorageClass]; ok {
		return v
	}
	if c.Spec.StorageClassName != nil {
		return *c.Spec.StorageClassName
	}
	return ""
}

// VolumeClass is a volume's storage class: the beta annotation when
// present, else spec.storageClassName.
func VolumeClass(pv *PersistentVolume) string {
	if v, ok := pv.Annotations[AnnBetaStorageClass]; ok {
		return v
	}
	return pv.Spec.StorageClassName
}

// IsDefaultStorageClass reports whether sc carries the default-class
// annotation (or its beta form) set to "true".
func IsDefaultStorageClass(sc *StorageClass) bool {
	return sc.Annotations[AnnIsDefaultStorageClass] == "true" ||
		sc.Annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true"
}

// DefaultStorageClassOf is the default class among classes, as upstream's
// GetDefaultClass: of several, the newest (then the first by name); nil
// when none is marked default.
func DefaultStorageClassOf(classes []*StorageClass) *StorageClass {
	var best *StorageClass
	for _, sc := range classes {
		if !IsDefaultStorageClass(sc) {
			continue
		}
		if best == nil || sc.CreationTimestamp.After(best.CreationTimestamp.Time) ||
			(sc.CreationTimestamp.Equal(best.CreationTimestamp.Time) && sc.Name < best.Name) {
			best = sc
		}
	}
	return best
}

// volumeModeOf is a mode with its default (Filesystem) applied.
func volumeModeOf(m *string) string {
	if m == nil || *m == "" {
		return PersistentVolumeFilesystem
	}
	return *m
}

// CheckVolumeForClaim reports why pv cannot satisfy claim, as upstream's
// checkVolumeSatisfyClaim: the volume's capacity must be at least the
// request, the classes equal, the volume modes equal, and every access
// mode of the claim among the volume's. The claim's selector is checked
// too (upstream checks it while searching). nil means it can.
func CheckVolumeForClaim(pv *PersistentVolume, claim *PersistentVolumeClaim) error {
	req, err := ParseQuantity(claim.Spec.Resources.Requests[ResourceStorage])
	if err != nil {
		return fmt.Errorf("claim %s/%s has no valid storage request", claim.Namespace, claim.Name)
	}
	capacity, err := ParseQuantity(pv.Spec.Capacity[ResourceStorage])
	if err != nil {
		return fmt.Errorf("volume %s has no valid storage capacity", pv.Name)
	}
	if capacity.Cmp(req) < 0 {
		return fmt.Errorf("requested PV is too small")
	}
	if VolumeClass(pv) != ClaimClass(claim) {
		return fmt.Errorf("storageClassName does not match")
	}
	if volumeModeOf(pv.Spec.VolumeMode) != volumeModeOf(claim.Spec.VolumeMode) {
		return fmt.Errorf("incompatible volumeMode")
	}
	for _, m := range claim.Spec.AccessModes {
		if !slices.Contains(pv.Spec.AccessModes, m) {
			return fmt.Errorf("incompatible accessMode")
		}
	}
	if claim.Spec.Selector != nil && !SelectorMatches(claim.Spec.Selector, pv.Labels) {
		return fmt.Errorf("volume labels do not match the claim's selector")
	}
	return nil
}

// NodeSelectorMatches reports whether a node (its labels and name) matches
// ns: any term matches when all its expressions (on labels) and fields
// (metadata.name) do; a term with neither matches nothing, as upstream's
// node affinity.
func NodeSelectorMatches(ns *NodeSelector, labels map[string]string, nodeName string) bool {
	if ns == nil {
		return true
	}
	for _, t := range ns.NodeSelectorTerms {
		if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
			continue
		}
		ok := true
		for _, r := range t.MatchExpressions {
			v, has := labels[r.Key]
			if !nodeRequirementMatches(r, v, has) {
				ok = false
				break
			}
		}
		for _, r := range t.MatchFields {
			if !ok {
				break
			}
			if r.Key != "metadata.name" || !nodeRequirementMatches(r, nodeName, true) {
				ok = false
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func nodeRequirementMatches(r NodeSelectorRequirement, v string, has bool) bool {
	switch r.Operator {
	case NodeSelectorOpIn:
		return has && slices.Contains(r.Values, v)
	case NodeSelectorOpNotIn:
		return !has || !slices.Contains(r.Values, v)
	case NodeSelectorOpExists:
		return has
	case NodeSelectorOpDoesNotExist:
		return !has
	case NodeSelectorOpGt, NodeSelectorOpLt:
		if !has || len(r.Values) != 1 {
			return false
		}
		a, err1 := strconv.ParseInt(v, 10, 64)
		b, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.Operator == NodeSelectorOpGt {
			return a > b
		}
		return a < b
	}
	return false
}

// VolumeNodeAffinityMatches reports whether pv may be used on the node:
// true without a nodeAffinity.
func VolumeNodeAffinityMatches(pv *PersistentVolume, labels map[string]string, nodeName string) bool {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return true
	}
	return NodeSelectorMatches(pv.Spec.NodeAffinity.Required, labels, nodeName)
}
