package printers

import (
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// ---- PersistentVolumes, PersistentVolumeClaims, StorageClasses ----

func persistentVolumeColumns() []Column {
	return []Column{
		nameColumn,
		col("Capacity", "capacity is the description of the persistent volume's resources and capacity."),
		col("Access Modes", "accessModes contains all ways the volume can be mounted."),
		col("Reclaim Policy", "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim."),
		col("Status", "phase indicates if a volume is available, bound to a claim, or released by a claim."),
		col("Claim", "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim."),
		col("StorageClass", "storageClassName is the name of StorageClass to which this persistent volume belongs."),
		col("VolumeAttributesClass", "Name of VolumeAttributesClass to which this persistent volume belongs."),
		col("Reason", "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI."),
		ageColumn,
		wide(col("VolumeMode", "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.")),
	}
}

// AccessModes is kubectl's short form of access modes, in its fixed order
// RWO, ROX, RWX, RWOP, each once, joined by ",".
func AccessModes(modes []string) string {
	var out []string
	for _, m := range []struct{ mode, short string }{
		{api.ReadWriteOnce, "RWO"}, {api.ReadOnlyMany, "ROX"}, {api.ReadWriteMany, "RWX"}, {api.ReadWriteOncePod, "RWOP"},
	} {
		for _, have := range modes {
			if have == m.mode {
				out = append(out, m.short)
				break
			}
		}
	}
	return strings.Join(out, ",")
}

func unsetOr(s *string) string {
	if s == nil || *s == "" {
		return "<unset>"
	}
	return *s
}

func volumeModeCell(m *string) string {
	if m == nil {
		return "<unset>"
	}
	return *m
}

// PersistentVolumeCells is a PersistentVolume's row: NAME CAPACITY ACCESS
// MODES RECLAIM POLICY STATUS CLAIM STORAGECLASS VOLUMEATTRIBUTESCLASS
// REASON AGE, then (wide) VOLUMEMODE. STATUS is Terminating while deleted.
func PersistentVolumeCells(pv *api.PersistentVolume, now time.Time) []any {
	claim := ""
	if r := pv.Spec.ClaimRef; r != nil {
		claim = r.Namespace + "/" + r.Name
	}
	phase := pv.Status.Phase
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	return []any{
		pv.Name, string(pv.Spec.Capacity[api.ResourceStorage]), AccessModes(pv.Spec.AccessModes),
		pv.Spec.PersistentVolumeReclaimPolicy, phase, claim, pv.Spec.StorageClassName,
		unsetOr(pv.Spec.VolumeAttributesClassName), pv.Status.Reason, Age(pv.CreationTimestamp.Time, now),
		volumeModeCell(pv.Spec.VolumeMode),
	}
}

func persistentVolumeClaimColumns() []Column {
	return []Column{
		nameColumn,
		col("Status", "phase represents the current phase of PersistentVolumeClaim."),
		col("Volume", "volumeName is the binding reference to the PersistentVolume backing this claim."),
		col("Capacity", "capacity represents the actual resources of the underlying volume."),
		col("Access Modes", "accessModes contains the desired access modes the volume should have."),
		col("StorageClass", "storageClassName is the name of the StorageClass required by the claim."),
		col("VolumeAttributesClass", "volumeAttributesClassName may be used to set the VolumeAttributesClass used by this claim."),
		ageColumn,
		wide(col("VolumeMode", "volumeMode defines what type of volume is required by the claim.")),
	}
}

// PersistentVolumeClaimCells is a claim's row: NAME STATUS VOLUME CAPACITY
// ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE, then (wide)
// VOLUMEMODE. Capacity and access modes come from the status, and only
// once the claim names a volume, as kubectl prints them.
func PersistentVolumeClaimCells(c *api.PersistentVolumeClaim, now time.Time) []any {
	phase := c.Status.Phase
	if c.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	capacity, modes := "", ""
	if c.Spec.VolumeName != "" {
		modes = AccessModes(c.Status.AccessModes)
		capacity = string(c.Status.Capacity[api.ResourceStorage])
	}
	return []any{
		c.Name, phase, c.Spec.VolumeName, capacity, modes, api.ClaimClass(c),
		unsetOr(c.Spec.VolumeAttributesClassName), Age(c.CreationTimestamp.Time, now),
		volumeModeCell(c.Spec.VolumeMode),
	}
}

func storageClassColumns() []Column {
	return []Column{
		nameColumn,
		col("Provisioner", "provisioner indicates the type of the provisioner."),
		col("ReclaimPolicy", "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class."),
		col("VolumeBindingMode", "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound."),
		{Name: "AllowVolumeExpansion", Type: "string", Description: "allowVolumeExpansion shows whether the storage class allow volume expand."},
		ageColumn,
	}
}

// StorageClassCells is a StorageClass's row: NAME (with " (default)" on
// the default class) PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE
// ALLOWVOLUMEEXPANSION AGE.
func StorageClassCells(sc *api.StorageClass, now time.Time) []any {
	name := sc.Name
	if api.IsDefaultStorageClass(sc) {
		name += " (default)"
	}
	reclaim, mode, expand := api.PersistentVolumeReclaimDelete, api.VolumeBindingImmediate, false
	if sc.ReclaimPolicy != nil {
		reclaim = *sc.ReclaimPolicy
	}
	if sc.VolumeBindingMode != nil {
		mode = *sc.VolumeBindingMode
	}
	if sc.AllowVolumeExpansion != nil {
		expand = *sc.AllowVolumeExpansion
	}
	return []any{name, sc.Provisioner, reclaim, mode, expand, Age(sc.CreationTimestamp.Time, now)}
}
