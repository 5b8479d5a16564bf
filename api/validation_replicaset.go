package api

import (
	"github.com/skiff-dev/skiff/api/field"
)

// DefaultReplicaSet sets replicas 1 (apps/v1 does not default the selector
// from the template, unlike ReplicationController) and the pod template
// defaults.
func DefaultReplicaSet(rs *ReplicaSet) {
	if rs.Spec.Replicas == nil {
		rs.Spec.Replicas = ptrTo[int32](1)
	}
	DefaultPodTemplateSpec(&rs.Spec.Template)
}

// DefaultReplicationController sets, as core/v1 does, spec.selector and
// (when empty) metadata.labels from the template's labels, replicas 1, and
// the pod template defaults.
func DefaultReplicationController(rc *ReplicationController) {
	if t := rc.Spec.Template; t != nil && t.Labels != nil {
		if len(rc.Spec.Selector) == 0 {
			rc.Spec.Selector = copyStringMap(t.Labels)
		}
		if len(rc.Labels) == 0 {
			rc.Labels = copyStringMap(t.Labels)
		}
	}
	if rc.Spec.Replicas == nil {
		rc.Spec.Replicas = ptrTo[int32](1)
	}
	if rc.Spec.Template != nil {
		DefaultPodTemplateSpec(rc.Spec.Template)
	}
}

func copyStringMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ValidateReplicaSet checks a new ReplicaSet as apps/v1 does: a DNS-1123
// subdomain name, replicas and minReadySeconds >= 0, a required non-empty
// selector that matches the template's labels, and a template with
// restartPolicy Always and no activeDeadlineSeconds.
func ValidateReplicaSet(rs *ReplicaSet) field.ErrorList {
	errs := ValidateObjectMeta(&rs.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
	return errs
}

func validateReplicaSetSpec(s *ReplicaSetSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Replicas != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*s.Replicas), path.Child("replicas"))...)
	}
	errs = append(errs, ValidateNonnegativeField(int64(s.MinReadySeconds), path.Child("minReadySeconds"))...)
	// Kubernetes shares the Deployment's wording here ("empty selector is
	// invalid for deployment", "activeDeadlineSeconds in ReplicaSet is not
	// Supported").
	errs = append(errs, validateWorkloadSelector(s.Selector, &s.Template, "deployment", path)...)
	return errs
}

// ValidateReplicaSetUpdate checks an update of a ReplicaSet: the new one
// must be valid and spec.selector may not change (apps/v1).
func ValidateReplicaSetUpdate(rs, old *ReplicaSet) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
	errs = append(errs, ValidateImmutableField(rs.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
	return errs
}

// ValidateReplicaSetStatusUpdate checks a write to replicasets/status.
func ValidateReplicaSetStatusUpdate(rs, old *ReplicaSet) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st := &rs.Status
	errs = append(errs, validateReplicaCounts(st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas,
		st.AvailableReplicas, st.ObservedGeneration, field.NewPath("status"))...)
	if st.TerminatingReplicas != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*st.TerminatingReplicas), field.NewPath("status", "terminatingReplicas"))...)
	}
	return errs
}

// validateReplicaCounts is Kubernetes' ValidateReplicaSetStatus and
// ValidateReplicationControllerStatus: every count >= 0 and none above
// status.replicas; availableReplicas not above readyReplicas.
func validateReplicaCounts(replicas, fullyLabeled, ready, available int32, observedGeneration int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, ValidateNonnegativeField(int64(replicas), p.Child("replicas"))...)
	errs = append(errs, ValidateNonnegativeField(int64(fullyLabeled), p.Child("fullyLabeledReplicas"))...)
	errs = append(errs, ValidateNonnegativeField(int64(ready), p.Child("readyReplicas"))...)
	errs = append(errs, ValidateNonnegativeField(int64(available), p.Child("availableReplicas"))...)
	errs = append(errs, ValidateNonnegativeField(observedGeneration, p.Child("observedGeneration"))...)
	const msg = "cannot be greater than status.replicas"
	if fullyLabeled > replicas {
		errs = append(errs, field.Invalid(p.Child("fullyLabeledReplicas"), fullyLabeled, msg))
	}
	if ready > replicas {
		errs = append(errs, field.Invalid(p.Child("readyReplicas"), ready, msg))
	}
	if available > replicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), available, msg))
	}
	if available > ready {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), available, "cannot be greater than readyReplicas"))
	}
	return errs
}

// ValidateReplicationController checks a new ReplicationController as
// core/v1 does: a DNS-1123 subdomain name, replicas and minReadySeconds >=
// 0, a required non-empty selector (valid labels) that matches a required
// template's labels; the template with restartPolicy Always and no
// activeDeadlineSeconds.
func ValidateReplicationController(rc *ReplicationController) field.ErrorList {
	errs := ValidateObjectMeta(&rc.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateReplicationControllerSpec(&rc.Spec, field.NewPath("spec"))...)
	return errs
}

func validateReplicationControllerSpec(s *ReplicationControllerSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, ValidateNonnegativeField(int64(s.MinReadySeconds), path.Child("minReadySeconds"))...)
	sp := path.Child("selector")
	if len(s.Selector) == 0 {
		errs = append(errs, field.Required(sp, ""))
	} else {
		errs = append(errs, ValidateLabels(s.Selector, sp)...)
	}
	if s.Replicas != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*s.Replicas), path.Child("replicas"))...)
	}
	tp := path.Child("template")
	t := s.Template
	if t == nil {
		return append(errs, field.Required(tp, ""))
	}
	if len(s.Selector) > 0 && !MapSelectorMatches(s.Selector, t.Labels) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, ValidatePodTemplateSpec(t, tp)...)
	if t.Spec.RestartPolicy != RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []string{RestartPolicyAlways}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return errs
}

// MapSelectorMatches reports whether every key=value of an equality
// selector (a ReplicationController's or Service's) is among labels. An
// empty selector matches everything.
func MapSelectorMatches(sel, labels map[string]string) bool {
	for k, v := range sel {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	return true
}

// ValidateReplicationControllerUpdate checks an update of a
// ReplicationController: the new one must be valid (its selector may
// change, unlike a ReplicaSet's).
func ValidateReplicationControllerUpdate(rc, old *ReplicationController) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateReplicationControllerSpec(&rc.Spec, field.NewPath("spec"))...)
	return errs
}

// ValidateReplicationControllerStatusUpdate checks a write to
// replicationcontrollers/status.
func ValidateReplicationControllerStatusUpdate(rc, old *ReplicationController) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&rc.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st := &rc.Status
	errs = append(errs, validateReplicaCounts(st.Replicas, st.FullyLabeledReplicas, st.ReadyReplicas,
		st.AvailableReplicas, st.ObservedGeneration, field.NewPath("status"))...)
	return errs
}
