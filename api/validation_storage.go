package api

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/skiff-dev/skiff/api/field"
)

// Validation of PersistentVolume, PersistentVolumeClaim and StorageClass,
// with upstream's field paths and messages (core/validation and
// storage/validation).

var (
	supportedAccessModes        = []string{ReadOnlyMany, ReadWriteMany, ReadWriteOnce, ReadWriteOncePod}
	supportedVolumeModes        = []string{PersistentVolumeBlock, PersistentVolumeFilesystem}
	supportedPVReclaimPolicies  = []string{PersistentVolumeReclaimDelete, PersistentVolumeReclaimRecycle, PersistentVolumeReclaimRetain}
	supportedSCReclaimPolicies  = []string{PersistentVolumeReclaimDelete, PersistentVolumeReclaimRetain}
	supportedVolumeBindingModes = []string{VolumeBindingImmediate, VolumeBindingWaitForFirstConsumer}
	supportedRetentionPolicies  = []string{DeletePersistentVolumeClaimRetentionPolicyType, RetainPersistentVolumeClaimRetentionPolicyType}
)

const (
	maxProvisionerParameterLen  = 512
	maxProvisionerParameterSize = 256 * (1 << 10)
)

// validateClassName checks a storage class name (a DNS subdomain), as
// upstream's ValidateClassName.
func validateClassName(name string, p *field.Path) field.ErrorList {
	return invalidEach(p, name, NameIsDNSSubdomain(name, false))
}

func validateAccessModes(modes []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rwop, other := false, false
	for _, m := range modes {
		if !slices.Contains(supportedAccessModes, m) {
			errs = append(errs, field.NotSupported(p, m, supportedAccessModes))
			continue
		}
		if m == ReadWriteOncePod {
			rwop = true
		} else {
			other = true
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

func validatePositiveQuantity(q Quantity, p *field.Path) field.ErrorList {
	v, err := ParseQuantity(q)
	if err != nil {
		return field.ErrorList{field.Invalid(p, string(q), err.Error())}
	}
	if v.Sign() <= 0 {
		return field.ErrorList{field.Invalid(p, string(q), "must be greater than zero")}
	}
	return nil
}

// ValidatePersistentVolume checks a PersistentVolume.
func ValidatePersistentVolume(pv *PersistentVolume) field.ErrorList {
	errs := ValidateObjectMeta(&pv.ObjectMeta, false, NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validatePersistentVolumeSpec(&pv.Spec, field.NewPath("spec"))...)
}

func validatePersistentVolumeSpec(s *PersistentVolumeSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), ""))
	}
	errs = append(errs, validateAccessModes(s.AccessModes, p.Child("accessModes"))...)
	cp := p.Child("capacity")
	if len(s.Capacity) == 0 {
		errs = append(errs, field.Required(cp, ""))
	}
	if _, ok := s.Capacity[ResourceStorage]; !ok || len(s.Capacity) > 1 {
		errs = append(errs, field.NotSupported(cp, s.Capacity, []string{ResourceStorage}))
	}
	for _, name := range sortedKeys(s.Capacity) {
		errs = append(errs, validatePositiveQuantity(s.Capacity[name], cp.Key(name))...)
	}
	if s.StorageClassName != "" {
		errs = append(errs, validateClassName(s.StorageClassName, p.Child("storageClassName"))...)
	}
	if s.VolumeMode != nil && !slices.Contains(supportedVolumeModes, *s.VolumeMode) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *s.VolumeMode, supportedVolumeModes))
	}
	if r := s.PersistentVolumeReclaimPolicy; r != "" && !slices.Contains(supportedPVReclaimPolicies, r) {
		errs = append(errs, field.NotSupported(p.Child("persistentVolumeReclaimPolicy"), r, supportedPVReclaimPolicies))
	}
	if s.ClaimRef != nil && s.ClaimRef.Name == "" {
		errs = append(errs, field.Required(p.Child("claimRef", "name"), ""))
	}
	affinity := false
	if s.NodeAffinity != nil {
		affinity = true
		ap := p.Child("nodeAffinity")
		if s.NodeAffinity.Required == nil {
			errs = append(errs, field.Required(ap.Child("required"), "must specify required node constraints"))
		} else {
			errs = append(errs, validateVolumeNodeSelector(s.NodeAffinity.Required, ap.Child("required"))...)
		}
	}
	errs = append(errs, validatePersistentVolumeSource(&s.PersistentVolumeSource, affinity, p)...)
	if s.HostPath != nil && path.Clean(s.HostPath.Path) == "/" && s.PersistentVolumeReclaimPolicy == PersistentVolumeReclaimRecycle {
		errs = append(errs, field.Forbidden(p.Child("persistentVolumeReclaimPolicy"), "may not be 'recycle' for a hostPath mount of '/'"))
	}
	return errs
}

func validatePersistentVolumeSource(s *PersistentVolumeSource, affinity bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	more := func(name string) bool {
		n++
		if n > 1 {
			errs = append(errs, field.Forbidden(p.Child(name), "may not specify more than 1 volume type"))
			return false
		}
		return true
	}
	required := func(v string, fp *field.Path) {
		if v == "" {
			errs = append(errs, field.Required(fp, ""))
		}
	}
	if s.HostPath != nil && more("hostPath") {
		errs = append(errs, validateHostPathVolumeSource(s.HostPath, p.Child("hostPath"))...)
	}
	if s.Glusterfs != nil && more("glusterfs") {
		required(s.Glusterfs.EndpointsName, p.Child("glusterfs", "endpoints"))
		required(s.Glusterfs.Path, p.Child("glusterfs", "path"))
	}
	if s.NFS != nil && more("nfs") {
		errs = append(errs, validateNFSVolumeSource(s.NFS, p.Child("nfs"))...)
	}
	if s.RBD != nil && more("rbd") {
		if len(s.RBD.CephMonitors) == 0 {
			errs = append(errs, field.Required(p.Child("rbd", "monitors"), ""))
		}
		required(s.RBD.RBDImage, p.Child("rbd", "image"))
	}
	if s.CephFS != nil && more("cephfs") {
		if len(s.CephFS.Monitors) == 0 {
			errs = append(errs, field.Required(p.Child("cephfs", "monitors"), ""))
		}
	}
	if s.ISCSI != nil && more("iscsi") {
		required(s.ISCSI.TargetPortal, p.Child("iscsi", "targetPortal"))
		required(s.ISCSI.IQN, p.Child("iscsi", "iqn"))
	}
	if s.FC != nil && more("fc") {
		if len(s.FC.TargetWWNs) == 0 && len(s.FC.WWIDs) == 0 {
			errs = append(errs, field.Required(p.Child("fc", "targetWWNs"), "must specify either targetWWNs or wwids, but not both"))
		}
	}
	if s.Local != nil && more("local") {
		lp := p.Child("local", "path")
		if s.Local.Path == "" {
			errs = append(errs, field.Required(lp, ""))
		} else {
			errs = append(errs, validatePathNoBacksteps(s.Local.Path, lp)...)
		}
		if !affinity {
			errs = append(errs, field.Required(p.Child("nodeAffinity"), "Local volume requires node affinity"))
		}
	}
	if s.CSI != nil && more("csi") {
		cp := p.Child("csi")
		if s.CSI.Driver == "" {
			errs = append(errs, field.Required(cp.Child("driver"), ""))
		} else {
			if len(s.CSI.Driver) > 63 {
				errs = append(errs, field.TooLong(cp.Child("driver"), s.CSI.Driver, 63))
			}
			errs = append(errs, invalidEach(cp.Child("driver"), s.CSI.Driver, ValidateDNS1123Subdomain(strings.ToLower(s.CSI.Driver)))...)
		}
		required(s.CSI.VolumeHandle, cp.Child("volumeHandle"))
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	return errs
}

func validateHostPathVolumeSource(h *HostPathVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	} else {
		errs = append(errs, validatePathNoBacksteps(h.Path, p.Child("path"))...)
	}
	if h.Type != nil && !slices.Contains(supportedHostPathTypes, *h.Type) {
		errs = append(errs, field.NotSupported(p.Child("type"), *h.Type, supportedHostPathTypes))
	}
	return errs
}

func validateNFSVolumeSource(n *NFSVolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n.Server == "" {
		errs = append(errs, field.Required(p.Child("server"), ""))
	}
	if n.Path == "" {
		errs = append(errs, field.Required(p.Child("path"), ""))
	}
	if !path.IsAbs(n.Path) {
		errs = append(errs, field.Invalid(p.Child("path"), n.Path, "must be an absolute path"))
	}
	return errs
}

// validateVolumeNodeSelector checks a node selector as upstream's
// ValidateNodeSelector: at least one term; label requirements with the
// label selector operators plus Gt and Lt; field requirements on
// metadata.name only.
func validateVolumeNodeSelector(ns *NodeSelector, p *field.Path) field.ErrorList {
	tp := p.Child("nodeSelectorTerms")
	if len(ns.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(tp, "must have at least one node selector term")}
	}
	var errs field.ErrorList
	for i, t := range ns.NodeSelectorTerms {
		for j, r := range t.MatchExpressions {
			errs = append(errs, validateNodeSelectorReq(r, tp.Index(i).Child("matchExpressions").Index(j))...)
		}
		for j, r := range t.MatchFields {
			errs = append(errs, validateNodeFieldSelectorReq(r, tp.Index(i).Child("matchFields").Index(j))...)
		}
	}
	return errs
}

func validateNodeSelectorReq(r NodeSelectorRequirement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case NodeSelectorOpIn, NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case NodeSelectorOpExists, NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			errs = append(errs, field.Forbidden(p.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case NodeSelectorOpGt, NodeSelectorOpLt:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(p.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		}
	default:
		errs = append(errs, field.Invalid(p.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	errs = append(errs, ValidateLabelName(r.Key, p.Child("key"))...)
	for i, v := range r.Values {
		errs = append(errs, invalidEach(p.Child("values").Index(i), v, ValidateLabelValue(v))...)
	}
	return errs
}

func validateNodeFieldSelectorReq(r NodeSelectorRequirement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case NodeSelectorOpIn, NodeSelectorOpNotIn:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(p.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	default:
		errs = append(errs, field.Invalid(p.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	if r.Key != "metadata.name" {
		errs = append(errs, field.Invalid(p.Child("key"), r.Key, "not a valid field selector key"))
	} else {
		for i, v := range r.Values {
			errs = append(errs, invalidEach(p.Child("values").Index(i), v, NameIsDNSSubdomain(v, false))...)
		}
	}
	return errs
}

// ValidatePersistentVolumeUpdate checks an update: the new volume must be
// valid, its source is immutable, volumeMode is immutable, and a set
// nodeAffinity may not change.
func ValidatePersistentVolumeUpdate(pv, old *PersistentVolume) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&pv.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, ValidatePersistentVolume(pv)...)
	if !semanticEqual(pv.Spec.PersistentVolumeSource, old.Spec.PersistentVolumeSource) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"), "spec.persistentvolumesource is immutable after creation"))
	}
	errs = append(errs, ValidateImmutableField(pv.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if old.Spec.NodeAffinity != nil {
		errs = append(errs, ValidateImmutableField(pv.Spec.NodeAffinity, old.Spec.NodeAffinity, field.NewPath("nodeAffinity"))...)
	}
	return errs
}

// ValidatePersistentVolumeStatusUpdate checks a write to
// persistentvolumes/status.
func ValidatePersistentVolumeStatusUpdate(pv, old *PersistentVolume) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&pv.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	switch pv.Status.Phase {
	case "", VolumePending, VolumeAvailable, VolumeBound, VolumeReleased, VolumeFailed:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("status", "phase"), pv.Status.Phase,
			[]string{VolumeAvailable, VolumeBound, VolumeFailed, VolumePending, VolumeReleased}))
	}
	return errs
}

// ValidatePersistentVolumeClaim checks a claim.
func ValidatePersistentVolumeClaim(c *PersistentVolumeClaim) field.ErrorList {
	errs := ValidateObjectMeta(&c.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, ValidatePersistentVolumeClaimSpec(&c.Spec, field.NewPath("spec"))...)
}

// ValidatePersistentVolumeClaimSpec checks a claim's spec (also of a
// StatefulSet's claim templates): access modes and a positive storage
// request required, class name, volume mode and data source.
func ValidatePersistentVolumeClaimSpec(s *PersistentVolumeClaimSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), "at least 1 access mode is required"))
	}
	if s.Selector != nil {
		errs = append(errs, ValidateLabelSelector(s.Selector, p.Child("selector"))...)
	}
	errs = append(errs, validateAccessModes(s.AccessModes, p.Child("accessModes"))...)
	// Upstream's path for the request is spec.resources[storage].
	sp := p.Child("resources").Key(ResourceStorage)
	if q, ok := s.Resources.Requests[ResourceStorage]; !ok {
		errs = append(errs, field.Required(sp, ""))
	} else {
		errs = append(errs, validatePositiveQuantity(q, sp)...)
	}
	if s.StorageClassName != nil && *s.StorageClassName != "" {
		errs = append(errs, validateClassName(*s.StorageClassName, p.Child("storageClassName"))...)
	}
	if s.VolumeMode != nil && !slices.Contains(supportedVolumeModes, *s.VolumeMode) {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *s.VolumeMode, supportedVolumeModes))
	}
	if ds := s.DataSource; ds != nil {
		dp := p.Child("dataSource")
		if ds.Name == "" {
			errs = append(errs, field.Required(dp.Child("name"), ""))
		}
		if ds.Kind == "" {
			errs = append(errs, field.Required(dp.Child("kind"), ""))
		}
		group := ""
		if ds.APIGroup != nil {
			group = *ds.APIGroup
		}
		if group == "" && ds.Kind != "PersistentVolumeClaim" {
			errs = append(errs, field.Invalid(dp, ds.Kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
		}
		if group != "" {
			errs = append(errs, invalidEach(dp.Child("apiGroup"), group, ValidateDNS1123Subdomain(group))...)
		}
	}
	if r := s.DataSourceRef; r != nil {
		rp := p.Child("dataSourceRef")
		if r.Name == "" {
			errs = append(errs, field.Required(rp.Child("name"), ""))
		}
		if r.Kind == "" {
			errs = append(errs, field.Required(rp.Child("kind"), ""))
		}
		if ds := s.DataSource; ds != nil && (ds.Kind != r.Kind || ds.Name != r.Name || !semanticEqual(ds.APIGroup, r.APIGroup)) {
			errs = append(errs, field.Invalid(p, p.Child("dataSource").String(), "must match dataSourceRef"))
		}
	}
	return errs
}

// ValidatePersistentVolumeClaimUpdate checks a claim update as upstream:
// the spec is immutable except spec.volumeName (settable once, by the
// binder), spec.storageClassName (settable once from unset, by the
// default-class assignment) and, for bound claims, a growth of
// resources.requests.storage; the storage request may never shrink.
func ValidatePersistentVolumeClaimUpdate(c, old *PersistentVolumeClaim) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, ValidatePersistentVolumeClaim(c)...)
	ns, os := c.Spec, old.Spec
	if os.VolumeName == "" {
		os.VolumeName = ns.VolumeName
	}
	if os.StorageClassName == nil && old.Annotations[AnnBetaStorageClass] == "" &&
		ns.StorageClassName != nil && *ns.StorageClassName != "" {
		os.StorageClassName = ns.StorageClassName
	}
	errs = append(errs, ValidateImmutableField(c.Annotations[AnnBetaStorageClass], old.Annotations[AnnBetaStorageClass],
		field.NewPath("metadata", "annotations").Key(AnnBetaStorageClass))...)
	newSize, oldSize := ns.Resources.Requests[ResourceStorage], os.Resources.Requests[ResourceStorage]
	if old.Status.Phase == ClaimBound {
		req := ResourceList{}
		for k, v := range ns.Resources.Requests {
			req[k] = v
		}
		if _, ok := os.Resources.Requests[ResourceStorage]; ok {
			req[ResourceStorage] = oldSize
		}
		ns.Resources.Requests = req
	}
	if !semanticEqual(ns, os) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"))
	}
	if n, err1 := ParseQuantity(newSize); err1 == nil {
		if o, err2 := ParseQuantity(oldSize); err2 == nil && n.Cmp(o) < 0 {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than previous value"))
		}
	}
	errs = append(errs, ValidateImmutableField(c.Spec.VolumeMode, old.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	return errs
}

// ValidatePersistentVolumeClaimStatusUpdate checks a write to
// persistentvolumeclaims/status: a known phase, valid access modes and
// capacity quantities.
func ValidatePersistentVolumeClaimStatusUpdate(c, old *PersistentVolumeClaim) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&c.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	sp := field.NewPath("status")
	switch c.Status.Phase {
	case "", ClaimPending, ClaimBound, ClaimLost:
	default:
		errs = append(errs, field.NotSupported(sp.Child("phase"), c.Status.Phase, []string{ClaimBound, ClaimLost, ClaimPending}))
	}
	errs = append(errs, validateAccessModes(c.Status.AccessModes, sp.Child("accessModes"))...)
	for _, k := range sortedKeys(c.Status.Capacity) {
		errs = append(errs, validateQuantity(c.Status.Capacity[k], sp.Child("capacity").Key(k))...)
	}
	return errs
}

// ValidateStorageClass checks a StorageClass as upstream's
// ValidateStorageClass.
func ValidateStorageClass(sc *StorageClass) field.ErrorList {
	errs := ValidateObjectMeta(&sc.ObjectMeta, false, NameIsDNSSubdomain, field.NewPath("metadata"))
	pp := field.NewPath("provisioner")
	if sc.Provisioner == "" {
		errs = append(errs, field.Required(pp, ""))
	} else {
		errs = append(errs, ValidateQualifiedNameField(strings.ToLower(sc.Provisioner), pp)...)
	}
	errs = append(errs, validateStorageClassParameters(sc.Parameters, field.NewPath("parameters"))...)
	if r := sc.ReclaimPolicy; r != nil && *r != "" && !slices.Contains(supportedSCReclaimPolicies, *r) {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), *r, supportedSCReclaimPolicies))
	}
	bp := field.NewPath("volumeBindingMode")
	if sc.VolumeBindingMode == nil {
		errs = append(errs, field.Required(bp, ""))
	} else if !slices.Contains(supportedVolumeBindingModes, *sc.VolumeBindingMode) {
		errs = append(errs, field.NotSupported(bp, *sc.VolumeBindingMode, supportedVolumeBindingModes))
	}
	tp := field.NewPath("allowedTopologies")
	for i, t := range sc.AllowedTopologies {
		ep := tp.Index(i).Child("matchLabelExpressions")
		if len(t.MatchLabelExpressions) == 0 {
			errs = append(errs, field.Required(ep, "must contain at least one requirement"))
		}
		keys := map[string]bool{}
		for j, r := range t.MatchLabelExpressions {
			rp := ep.Index(j)
			errs = append(errs, ValidateLabelName(r.Key, rp.Child("key"))...)
			if keys[r.Key] {
				errs = append(errs, field.Duplicate(rp.Child("key"), r.Key))
			}
			keys[r.Key] = true
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), "must specify as least one value"))
			}
			for k, v := range r.Values {
				errs = append(errs, invalidEach(rp.Child("values").Index(k), v, ValidateLabelValue(v))...)
			}
		}
	}
	return errs
}

func validateStorageClassParameters(params map[string]string, p *field.Path) field.ErrorList {
	if len(params) > maxProvisionerParameterLen {
		return field.ErrorList{field.TooLong(p, "Provisioner Parameters exceeded max allowed", maxProvisionerParameterLen)}
	}
	var errs field.ErrorList
	total := 0
	for _, k := range sortedKeys(params) {
		if k == "" {
			errs = append(errs, field.Invalid(p, k, "field can not be empty."))
		}
		total += len(k) + len(params[k])
	}
	if total > maxProvisionerParameterSize {
		errs = append(errs, field.TooLong(p, "", maxProvisionerParameterSize))
	}
	return errs
}

// ValidateStorageClassUpdate checks an update: parameters, provisioner,
// reclaimPolicy and volumeBindingMode are immutable.
func ValidateStorageClassUpdate(sc, old *StorageClass) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&sc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, ValidateStorageClass(sc)...)
	if !semanticEqual(sc.Parameters, old.Parameters) {
		errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	if sc.Provisioner != old.Provisioner {
		errs = append(errs, field.Forbidden(field.NewPath("provisioner"), "updates to provisioner are forbidden."))
	}
	if deref(sc.ReclaimPolicy) != deref(old.ReclaimPolicy) {
		errs = append(errs, field.Forbidden(field.NewPath("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
	}
	errs = append(errs, ValidateImmutableField(sc.VolumeBindingMode, old.VolumeBindingMode, field.NewPath("volumeBindingMode"))...)
	return errs
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// validateStatefulSetClaims checks a StatefulSet's claim templates and
// retention policy.
func validateStatefulSetClaims(s *StatefulSetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if rp := s.PersistentVolumeClaimRetentionPolicy; rp != nil {
		pp := p.Child("persistentVolumeClaimRetentionPolicy")
		if !slices.Contains(supportedRetentionPolicies, rp.WhenDeleted) {
			errs = append(errs, field.NotSupported(pp.Child("whenDeleted"), rp.WhenDeleted, supportedRetentionPolicies))
		}
		if !slices.Contains(supportedRetentionPolicies, rp.WhenScaled) {
			errs = append(errs, field.NotSupported(pp.Child("whenScaled"), rp.WhenScaled, supportedRetentionPolicies))
		}
	}
	tp := p.Child("volumeClaimTemplates")
	names := map[string]bool{}
	for i := range s.VolumeClaimTemplates {
		c := &s.VolumeClaimTemplates[i]
		ip := tp.Index(i)
		np := ip.Child("metadata", "name")
		if c.Name == "" {
			errs = append(errs, field.Required(np, ""))
		} else {
			errs = append(errs, ValidateDNS1123LabelField(c.Name, np)...)
			if names[c.Name] {
				errs = append(errs, field.Duplicate(np, c.Name))
			}
			names[c.Name] = true
		}
		errs = append(errs, ValidateLabels(c.Labels, ip.Child("metadata", "labels"))...)
		errs = append(errs, ValidateAnnotations(c.Annotations, ip.Child("metadata", "annotations"))...)
		errs = append(errs, ValidatePersistentVolumeClaimSpec(&c.Spec, ip.Child("spec"))...)
	}
	return errs
}

// statefulSetPodTemplate is the template as the StatefulSet controller
// turns it into a pod: each claim template becomes a persistentVolumeClaim
// volume of its name (replacing a template volume of the same name), so
// that volume mounts of claim templates validate.
func statefulSetPodTemplate(s *StatefulSetSpec) *PodTemplateSpec {
	if len(s.VolumeClaimTemplates) == 0 {
		return &s.Template
	}
	t := s.Template
	vols := make([]Volume, 0, len(t.Spec.Volumes)+len(s.VolumeClaimTemplates))
	claims := map[string]bool{}
	for _, c := range s.VolumeClaimTemplates {
		claims[c.Name] = true
	}
	for _, v := range t.Spec.Volumes {
		if !claims[v.Name] {
			vols = append(vols, v)
		}
	}
	for _, c := range s.VolumeClaimTemplates {
		if c.Name == "" || !claims[c.Name] {
			continue
		}
		claims[c.Name] = false
		vols = append(vols, Volume{Name: c.Name, VolumeSource: VolumeSource{
			PersistentVolumeClaim: &PersistentVolumeClaimVolumeSource{ClaimName: fmt.Sprintf("%s-claim", c.Name)},
		}})
	}
	t.Spec.Volumes = vols
	return &t
}
