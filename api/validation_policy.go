package api

import "github.com/skiff-dev/skiff/api/field"

// ValidatePodDisruptionBudget checks a new PodDisruptionBudget: name a DNS
// subdomain, at most one of minAvailable and maxUnavailable, each a
// non-negative number or a percent of at most 100%, a valid selector and
// a known unhealthyPodEvictionPolicy.
func ValidatePodDisruptionBudget(p *PodDisruptionBudget) field.ErrorList {
	errs := ValidateObjectMeta(&p.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validatePodDisruptionBudgetSpec(&p.Spec, field.NewPath("spec"))...)
}

// ValidatePodDisruptionBudgetUpdate checks an update: the spec is mutable
// (since Kubernetes 1.15) and checked as on create.
func ValidatePodDisruptionBudgetUpdate(p, old *PodDisruptionBudget) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&p.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validatePodDisruptionBudgetSpec(&p.Spec, field.NewPath("spec"))...)
}

// ValidatePodDisruptionBudgetStatusUpdate checks a write to
// poddisruptionbudgets/status: conditions valid, counts non-negative.
func ValidatePodDisruptionBudgetStatusUpdate(p, old *PodDisruptionBudget) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&p.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st, sp := &p.Status, field.NewPath("status")
	errs = append(errs, ValidateConditions(st.Conditions, sp.Child("conditions"))...)
	for _, c := range []struct {
		name string
		v    int32
	}{{"disruptionsAllowed", st.DisruptionsAllowed}, {"currentHealthy", st.CurrentHealthy},
		{"desiredHealthy", st.DesiredHealthy}, {"expectedPods", st.ExpectedPods}} {
		errs = append(errs, ValidateNonnegativeField(int64(c.v), sp.Child(c.name))...)
	}
	return errs
}

func validatePodDisruptionBudgetSpec(s *PodDisruptionBudgetSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.MinAvailable != nil && s.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(path, s, "minAvailable and maxUnavailable cannot be both set"))
	}
	for _, b := range []struct {
		name string
		v    *IntOrString
	}{{"minAvailable", s.MinAvailable}, {"maxUnavailable", s.MaxUnavailable}} {
		if b.v != nil {
			errs = append(errs, ValidatePositiveIntOrPercent(*b.v, path.Child(b.name))...)
			errs = append(errs, isNotMoreThan100Percent(*b.v, path.Child(b.name))...)
		}
	}
	if s.Selector != nil {
		errs = append(errs, ValidateLabelSelector(s.Selector, path.Child("selector"))...)
	}
	if p := s.UnhealthyPodEvictionPolicy; p != nil && *p != IfHealthyBudgetPolicy && *p != AlwaysAllowPolicy {
		errs = append(errs, field.NotSupported(path.Child("unhealthyPodEvictionPolicy"), *p, []string{AlwaysAllowPolicy, IfHealthyBudgetPolicy}))
	}
	return errs
}
