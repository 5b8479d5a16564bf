package api

import (
	"strconv"
	"strings"

	"github.com/skiff-dev/skiff/api/field"
)

// ValidateDaemonSet checks a new DaemonSet (name a DNS subdomain).
func ValidateDaemonSet(d *DaemonSet) field.ErrorList {
	errs := ValidateObjectMeta(&d.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateDaemonSetSpec(&d.Spec, field.NewPath("spec"))...)
	return errs
}

// ValidateDaemonSetUpdate checks an update of a DaemonSet: the new one
// must be valid and spec.selector may not change.
func ValidateDaemonSetUpdate(d, old *DaemonSet) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, ValidateImmutableField(d.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
	errs = append(errs, validateDaemonSetSpec(&d.Spec, field.NewPath("spec"))...)
	return errs
}

// ValidateDaemonSetStatusUpdate checks a write to daemonsets/status: every
// count non-negative and collisionCount never decremented.
func ValidateDaemonSetStatusUpdate(d, old *DaemonSet) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st, p := &d.Status, field.NewPath("status")
	for _, c := range []struct {
		name string
		v    int64
	}{{"currentNumberScheduled", int64(st.CurrentNumberScheduled)}, {"numberMisscheduled", int64(st.NumberMisscheduled)},
		{"desiredNumberScheduled", int64(st.DesiredNumberScheduled)}, {"numberReady", int64(st.NumberReady)},
		{"observedGeneration", st.ObservedGeneration}, {"updatedNumberScheduled", int64(st.UpdatedNumberScheduled)},
		{"numberAvailable", int64(st.NumberAvailable)}, {"numberUnavailable", int64(st.NumberUnavailable)}} {
		errs = append(errs, ValidateNonnegativeField(c.v, p.Child(c.name))...)
	}
	if st.CollisionCount != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*st.CollisionCount), p.Child("collisionCount"))...)
	}
	if old.Status.CollisionCount != nil && (st.CollisionCount == nil || *st.CollisionCount < *old.Status.CollisionCount) {
		var v int32
		if st.CollisionCount != nil {
			v = *st.CollisionCount
		}
		errs = append(errs, field.Invalid(p.Child("collisionCount"), v, "cannot be decremented"))
	}
	return errs
}

func validateDaemonSetSpec(s *DaemonSetSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	sp := path.Child("selector")
	if s.Selector == nil {
		errs = append(errs, field.Required(sp, ""))
	} else {
		errs = append(errs, ValidateLabelSelector(s.Selector, sp)...)
		if len(s.Selector.MatchLabels)+len(s.Selector.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(sp, s.Selector, "empty selector is invalid for daemonset"))
		} else if !SelectorMatches(s.Selector, s.Template.Labels) {
			errs = append(errs, field.Invalid(path.Child("template", "metadata", "labels"), s.Template.Labels, "`selector` does not match template `labels`"))
		}
	}
	tp := path.Child("template")
	errs = append(errs, ValidatePodTemplateSpec(&s.Template, tp)...)
	if s.Template.Spec.RestartPolicy != RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), s.Template.Spec.RestartPolicy, []string{RestartPolicyAlways}))
	}
	if s.Template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(tp.Child("spec", "activeDeadlineSeconds"), *s.Template.Spec.ActiveDeadlineSeconds, "activeDeadlineSeconds must be nil for daemonset"))
	}
	errs = append(errs, ValidateNonnegativeField(int64(s.MinReadySeconds), path.Child("minReadySeconds"))...)
	errs = append(errs, validateDaemonSetUpdateStrategy(&s.UpdateStrategy, path.Child("updateStrategy"))...)
	if s.RevisionHistoryLimit != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*s.RevisionHistoryLimit), path.Child("revisionHistoryLimit"))...)
	}
	return errs
}

func validateDaemonSetUpdateStrategy(s *DaemonSetUpdateStrategy, path *field.Path) field.ErrorList {
	switch s.Type {
	case OnDeleteDaemonSetStrategyType:
		return nil
	case RollingUpdateDaemonSetStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(path.Child("rollingUpdate"), "")}
		}
		return validateRollingUpdateDaemonSet(s.RollingUpdate, path.Child("rollingUpdate"))
	}
	return field.ErrorList{field.NotSupported(path, s, []string{RollingUpdateDaemonSetStrategyType, OnDeleteDaemonSetStrategyType})}
}

// validateRollingUpdateDaemonSet: both bounds numbers or percents, neither
// over 100%, and exactly one of them non-zero.
func validateRollingUpdateDaemonSet(r *RollingUpdateDaemonSet, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, b := range []struct {
		name string
		v    *IntOrString
	}{{"maxUnavailable", r.MaxUnavailable}, {"maxSurge", r.MaxSurge}} {
		if b.v != nil {
			errs = append(errs, ValidatePositiveIntOrPercent(*b.v, path.Child(b.name))...)
			errs = append(errs, isNotMoreThan100Percent(*b.v, path.Child(b.name))...)
		}
	}
	hasUnavailable := intOrPercentValue(r.MaxUnavailable) != 0
	hasSurge := intOrPercentValue(r.MaxSurge) != 0
	switch {
	case hasUnavailable && hasSurge:
		errs = append(errs, field.Invalid(path.Child("maxSurge"), r.MaxSurge, "may not be set when maxUnavailable is non-zero"))
	case !hasUnavailable && !hasSurge:
		errs = append(errs, field.Required(path.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
	}
	return errs
}

// intOrPercentValue is the number of an int, or of a percent ("25%" is
// 25); 0 for nil or a malformed value.
func intOrPercentValue(v *IntOrString) int {
	if v == nil {
		return 0
	}
	if v.Type != String {
		return int(v.IntVal)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if err != nil || !strings.HasSuffix(v.StrVal, "%") {
		return 0
	}
	return n
}
