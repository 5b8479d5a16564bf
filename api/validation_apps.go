package api

import (
	"fmt"

	"github.com/skiff-dev/skiff/api/field"
)

// ValidateDeployment checks a new Deployment.
func ValidateDeployment(d *Deployment) field.ErrorList {
	errs := ValidateObjectMeta(&d.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, validateDeploymentSpec(&d.Spec, field.NewPath("spec"))...)
	return errs
}

// ValidateDeploymentUpdate checks an update of a Deployment: the new one
// must be valid and spec.selector may not change (apps/v1).
func ValidateDeploymentUpdate(d, old *Deployment) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateDeploymentSpec(&d.Spec, field.NewPath("spec"))...)
	errs = append(errs, ValidateImmutableField(d.Spec.Selector, old.Spec.Selector, field.NewPath("spec", "selector"))...)
	return errs
}

// ValidateDeploymentStatusUpdate checks a write to deployments/status.
func ValidateDeploymentStatusUpdate(d, old *Deployment) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&d.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st, p := &d.Status, field.NewPath("status")
	errs = append(errs, ValidateNonnegativeField(st.ObservedGeneration, p.Child("observedGeneration"))...)
	for _, c := range []struct {
		name string
		v    int32
	}{{"replicas", st.Replicas}, {"updatedReplicas", st.UpdatedReplicas}, {"readyReplicas", st.ReadyReplicas},
		{"availableReplicas", st.AvailableReplicas}, {"unavailableReplicas", st.UnavailableReplicas}} {
		errs = append(errs, ValidateNonnegativeField(int64(c.v), p.Child(c.name))...)
	}
	if st.CollisionCount != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*st.CollisionCount), p.Child("collisionCount"))...)
	}
	if st.AvailableReplicas > st.Replicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than status.replicas"))
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than readyReplicas"))
	}
	return errs
}

func validateDeploymentSpec(s *DeploymentSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Replicas != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*s.Replicas), path.Child("replicas"))...)
	}
	errs = append(errs, validateWorkloadSelector(s.Selector, &s.Template, "deployment", path)...)
	errs = append(errs, validateDeploymentStrategy(&s.Strategy, path.Child("strategy"))...)
	errs = append(errs, ValidateNonnegativeField(int64(s.MinReadySeconds), path.Child("minReadySeconds"))...)
	if s.RevisionHistoryLimit != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*s.RevisionHistoryLimit), path.Child("revisionHistoryLimit"))...)
	}
	if s.ProgressDeadlineSeconds != nil {
		errs = append(errs, ValidatePositiveField(int64(*s.ProgressDeadlineSeconds), path.Child("progressDeadlineSeconds"))...)
		if *s.ProgressDeadlineSeconds <= s.MinReadySeconds {
			errs = append(errs, field.Invalid(path.Child("progressDeadlineSeconds"), *s.ProgressDeadlineSeconds, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

// validateWorkloadSelector checks a Deployment's or StatefulSet's selector
// (required, non-empty, valid, matching the template's labels) and the
// template (valid, restartPolicy Always, no activeDeadlineSeconds).
func validateWorkloadSelector(sel *LabelSelector, t *PodTemplateSpec, kind string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sel == nil {
		errs = append(errs, field.Required(path.Child("selector"), ""))
	} else {
		errs = append(errs, ValidateLabelSelector(sel, path.Child("selector"))...)
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(path.Child("selector"), sel, "empty selector is invalid for "+kind))
		}
	}
	tp := path.Child("template")
	if sel != nil && len(sel.MatchLabels)+len(sel.MatchExpressions) > 0 && !SelectorMatches(sel, t.Labels) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, ValidatePodTemplateSpec(t, tp)...)
	if t.Spec.RestartPolicy != "" && t.Spec.RestartPolicy != RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []string{RestartPolicyAlways}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in "+kindTitle(kind)+" is not Supported"))
	}
	return errs
}

func kindTitle(kind string) string {
	switch kind {
	case "deployment":
		return "ReplicaSet"
	case "statefulset":
		return "StatefulSet"
	}
	return kind
}

func validateDeploymentStrategy(s *DeploymentStrategy, path *field.Path) field.ErrorList {
	switch s.Type {
	case RecreateDeploymentStrategyType:
		if s.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(path.Child("rollingUpdate"), "may not be specified when strategy `type` is '"+RecreateDeploymentStrategyType+"'")}
		}
	case RollingUpdateDeploymentStrategyType:
		if s.RollingUpdate == nil {
			return field.ErrorList{field.Required(path.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		return validateRollingUpdateDeployment(s.RollingUpdate, path.Child("rollingUpdate"))
	default:
		return field.ErrorList{field.NotSupported(path.Child("type"), s.Type, []string{RecreateDeploymentStrategyType, RollingUpdateDeploymentStrategyType})}
	}
	return nil
}

func validateRollingUpdateDeployment(r *RollingUpdateDeployment, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	zero := func(v *IntOrString) bool {
		if v == nil {
			return true
		}
		if v.Type == String {
			n, err := v.ScaledValue(100, false)
			return err == nil && n == 0
		}
		return v.IntVal == 0
	}
	if r.MaxUnavailable != nil {
		errs = append(errs, ValidatePositiveIntOrPercent(*r.MaxUnavailable, path.Child("maxUnavailable"))...)
		errs = append(errs, isNotMoreThan100Percent(*r.MaxUnavailable, path.Child("maxUnavailable"))...)
	}
	if r.MaxSurge != nil {
		errs = append(errs, ValidatePositiveIntOrPercent(*r.MaxSurge, path.Child("maxSurge"))...)
	}
	if zero(r.MaxUnavailable) && zero(r.MaxSurge) {
		errs = append(errs, field.Invalid(path.Child("maxUnavailable"), r.MaxUnavailable, "may not be 0 when `maxSurge` is 0"))
	}
	return errs
}

// ValidatePositiveIntOrPercent checks a non-negative number or a percent.
func ValidatePositiveIntOrPercent(v IntOrString, path *field.Path) field.ErrorList {
	if v.Type == String {
		return invalidEach(path, v.StrVal, ValidatePercent(v.StrVal))
	}
	return ValidateNonnegativeField(int64(v.IntVal), path)
}

func isNotMoreThan100Percent(v IntOrString, path *field.Path) field.ErrorList {
	if v.Type != String || len(ValidatePercent(v.StrVal)) > 0 {
		return nil
	}
	if n, err := v.ScaledValue(100, false); err == nil && n > 100 {
		return field.ErrorList{field.Invalid(path, v.StrVal, "must not be greater than 100%")}
	}
	return nil
}

// ValidateStatefulSet checks a new StatefulSet. Its name must be a DNS-1123
// label, since its pods are named <name>-<ordinal> and resolve as
// <name>-<ordinal>.<serviceName>.
func ValidateStatefulSet(s *StatefulSet) field.ErrorList {
	errs := ValidateObjectMeta(&s.ObjectMeta, true, NameIsDNSLabel, field.NewPath("metadata"))
	errs = append(errs, validateStatefulSetSpec(&s.Spec, field.NewPath("spec"))...)
	return errs
}

func validateStatefulSetSpec(s *StatefulSetSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(path.Child("podManagementPolicy"), ""))
	case OrderedReadyPodManagement, ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(path.Child("podManagementPolicy"), s.PodManagementPolicy,
			fmt.Sprintf("must be '%s' or '%s'", OrderedReadyPodManagement, ParallelPodManagement)))
	}
	us := path.Child("updateStrategy")
	switch s.UpdateStrategy.Type {
	case "":
		errs = append(errs, field.Required(us, ""))
	case OnDeleteStatefulSetStrategyType:
		if s.UpdateStrategy.RollingUpdate != nil {
			errs = append(errs, field.Invalid(us.Child("rollingUpdate"), s.UpdateStrategy.RollingUpdate,
				fmt.Sprintf("only allowed for updateStrategy '%s'", RollingUpdateStatefulSetStrategyType)))
		}
	case RollingUpdateStatefulSetStrategyType:
		if ru := s.UpdateStrategy.RollingUpdate; ru != nil {
			if ru.Partition != nil {
				errs = append(errs, ValidateNonnegativeField(int64(*ru.Partition), us.Child("rollingUpdate", "partition"))...)
			}
			if ru.MaxUnavailable != nil {
				p := us.Child("rollingUpdate", "maxUnavailable")
				errs = append(errs, ValidatePositiveIntOrPercent(*ru.MaxUnavailable, p)...)
				if n, err := ru.MaxUnavailable.ScaledValue(100, false); err == nil && n == 0 {
					errs = append(errs, field.Invalid(p, ru.MaxUnavailable, "cannot be 0"))
				}
				errs = append(errs, isNotMoreThan100Percent(*ru.MaxUnavailable, p)...)
			}
		}
	default:
		errs = append(errs, field.Invalid(us, s.UpdateStrategy,
			fmt.Sprintf("must be '%s' or '%s'", RollingUpdateStatefulSetStrategyType, OnDeleteStatefulSetStrategyType)))
	}
	if s.Replicas != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*s.Replicas), path.Child("replicas"))...)
	}
	errs = append(errs, ValidateNonnegativeField(int64(s.MinReadySeconds), path.Child("minReadySeconds"))...)
	if s.RevisionHistoryLimit != nil {
		errs = append(errs, ValidateNonnegativeField(int64(*s.RevisionHistoryLimit), path.Child("revisionHistoryLimit"))...)
	}
	if s.Ordinals != nil {
		errs = append(errs, ValidateNonnegativeField(int64(s.Ordinals.Start), path.Child("ordinals", "start"))...)
	}
	if s.ServiceName != "" {
		errs = append(errs, ValidateDNS1123LabelField(s.ServiceName, path.Child("serviceName"))...)
	}
	errs = append(errs, validateWorkloadSelector(s.Selector, statefulSetPodTemplate(s), "statefulset", path)...)
	errs = append(errs, validateStatefulSetClaims(s, path)...)
	return errs
}

// ValidateStatefulSetUpdate checks an update of a StatefulSet: the new one
// must be valid, and only replicas, ordinals, template, updateStrategy,
// revisionHistoryLimit and minReadySeconds may change (serviceName,
// selector and podManagementPolicy are immutable).
func ValidateStatefulSetUpdate(s, old *StatefulSet) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	errs = append(errs, validateStatefulSetSpec(&s.Spec, field.NewPath("spec"))...)
	c := s.Spec
	c.Replicas = old.Spec.Replicas
	c.Ordinals = old.Spec.Ordinals
	c.Template = old.Spec.Template
	c.UpdateStrategy = old.Spec.UpdateStrategy
	c.RevisionHistoryLimit = old.Spec.RevisionHistoryLimit
	c.MinReadySeconds = old.Spec.MinReadySeconds
	c.PersistentVolumeClaimRetentionPolicy = old.Spec.PersistentVolumeClaimRetentionPolicy
	if !semanticEqual(c, old.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
	}
	return errs
}

// ValidateStatefulSetStatusUpdate checks a write to statefulsets/status.
func ValidateStatefulSetStatusUpdate(s, old *StatefulSet) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&s.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	st, p := &s.Status, field.NewPath("status")
	errs = append(errs, ValidateNonnegativeField(st.ObservedGeneration, p.Child("observedGeneration"))...)
	for _, c := range []struct {
		name string
		v    int32
	}{{"replicas", st.Replicas}, {"readyReplicas", st.ReadyReplicas}, {"currentReplicas", st.CurrentReplicas},
		{"updatedReplicas", st.UpdatedReplicas}, {"availableReplicas", st.AvailableReplicas}} {
		errs = append(errs, ValidateNonnegativeField(int64(c.v), p.Child(c.name))...)
	}
	if st.ReadyReplicas > st.Replicas {
		errs = append(errs, field.Invalid(p.Child("readyReplicas"), st.ReadyReplicas, "cannot be greater than status.replicas"))
	}
	if st.AvailableReplicas > st.ReadyReplicas {
		errs = append(errs, field.Invalid(p.Child("availableReplicas"), st.AvailableReplicas, "cannot be greater than status.readyReplicas"))
	}
	return errs
}

// ValidateScale checks a scale subresource write: replicas >= 0.
func ValidateScale(s *Scale) field.ErrorList {
	return ValidateNonnegativeField(int64(s.Spec.Replicas), field.NewPath("spec", "replicas"))
}
