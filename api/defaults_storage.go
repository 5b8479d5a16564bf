package api

// DefaultPersistentVolume sets reclaim policy Retain, volume mode
// Filesystem and an empty hostPath type, as upstream's
// SetDefaults_PersistentVolume (the Pending phase is set on create by
// PrepareForCreate, as the strategy does).
func DefaultPersistentVolume(pv *PersistentVolume) {
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		pv.Spec.VolumeMode = ptrTo(PersistentVolumeFilesystem)
	}
	if pv.Spec.HostPath != nil && pv.Spec.HostPath.Type == nil {
		pv.Spec.HostPath.Type = ptrTo("")
	}
	if pv.Status.Phase == "" {
		pv.Status.Phase = VolumePending
	}
}

// DefaultPersistentVolumeClaim sets volume mode Filesystem and phase
// Pending, as upstream's SetDefaults_PersistentVolumeClaim.
func DefaultPersistentVolumeClaim(c *PersistentVolumeClaim) {
	if c.Spec.VolumeMode == nil {
		c.Spec.VolumeMode = ptrTo(PersistentVolumeFilesystem)
	}
	if c.Status.Phase == "" {
		c.Status.Phase = ClaimPending
	}
}

// DefaultStorageClass sets reclaim policy Delete and binding mode
// Immediate, as upstream's SetDefaults_StorageClass.
func DefaultStorageClass(sc *StorageClass) {
	if sc.ReclaimPolicy == nil {
		sc.ReclaimPolicy = ptrTo(PersistentVolumeReclaimDelete)
	}
	if sc.VolumeBindingMode == nil {
		sc.VolumeBindingMode = ptrTo(VolumeBindingImmediate)
	}
}

// defaultStatefulSetClaims defaults a StatefulSet's claim templates as
// claims and its retention policy to Retain/Retain, as upstream.
func defaultStatefulSetClaims(s *StatefulSet) {
	for i := range s.Spec.VolumeClaimTemplates {
		DefaultPersistentVolumeClaim(&s.Spec.VolumeClaimTemplates[i])
	}
	p := s.Spec.PersistentVolumeClaimRetentionPolicy
	if p == nil {
		p = &StatefulSetPersistentVolumeClaimRetentionPolicy{}
		s.Spec.PersistentVolumeClaimRetentionPolicy = p
	}
	if p.WhenDeleted == "" {
		p.WhenDeleted = RetainPersistentVolumeClaimRetentionPolicyType
	}
	if p.WhenScaled == "" {
		p.WhenScaled = RetainPersistentVolumeClaimRetentionPolicyType
	}
}
