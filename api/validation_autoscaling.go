package api

import (
	"fmt"

	"github.com/skiff-dev/skiff/api/field"
)

// ---- HorizontalPodAutoscaler (autoscaling/v2) ----
//
// Defaults and validation follow Kubernetes' pkg/apis/autoscaling/v2
// defaults.go and pkg/apis/autoscaling/validation: minReplicas defaults to
// 1, an empty metrics list to cpu at 80 % utilisation, and a behavior that
// is set has every unset part filled with the upstream rules (scale up: no
// window, the larger of 4 pods or 100 % per 15 s; scale down: a 300 s
// window, 100 % per 15 s). Scale to zero (an alpha gate upstream) is not
// offered: minReplicas must be at least 1.

// DefaultHPACPUUtilization is the target of an autoscaler without metrics.
const DefaultHPACPUUtilization = 80

// DefaultHorizontalPodAutoscaler fills minReplicas, the default cpu metric
// and an incomplete behavior.
func DefaultHorizontalPodAutoscaler(h *HorizontalPodAutoscaler) {
	s := &h.Spec
	if s.MinReplicas == nil {
		s.MinReplicas = ptrTo[int32](1)
	}
	if len(s.Metrics) == 0 {
		s.Metrics = []MetricSpec{{Type: ResourceMetricSourceType, Resource: &ResourceMetricSource{
			Name: "cpu", Target: MetricTarget{Type: UtilizationMetricType, AverageUtilization: ptrTo[int32](DefaultHPACPUUtilization)},
		}}}
	}
	if s.Behavior != nil {
		s.Behavior.ScaleUp = DefaultHPAScalingRules(s.Behavior.ScaleUp, true)
		s.Behavior.ScaleDown = DefaultHPAScalingRules(s.Behavior.ScaleDown, false)
	}
}

// DefaultHPAScalingRules returns r with its unset parts filled with the
// upstream rules of one direction (a new value when r is nil); the
// autoscaler controller uses the same rules for an HPA without behavior.
func DefaultHPAScalingRules(r *HPAScalingRules, up bool) *HPAScalingRules {
	out := HPAScalingRules{}
	if r != nil {
		out = *r
	}
	if out.StabilizationWindowSeconds == nil {
		w := int32(300)
		if up {
			w = 0
		}
		out.StabilizationWindowSeconds = &w
	}
	if out.SelectPolicy == nil {
		out.SelectPolicy = ptrTo(MaxChangePolicySelect)
	}
	if out.Policies == nil {
		if up {
			out.Policies = []HPAScalingPolicy{{Type: PodsScalingPolicy, Value: 4, PeriodSeconds: 15}, {Type: PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}
		} else {
			out.Policies = []HPAScalingPolicy{{Type: PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}
		}
	}
	return &out
}

// ValidateHorizontalPodAutoscaler checks a new autoscaler.
func ValidateHorizontalPodAutoscaler(h *HorizontalPodAutoscaler) field.ErrorList {
	errs := ValidateObjectMeta(&h.ObjectMeta, true, NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateHPASpec(&h.Spec, field.NewPath("spec"))...)
}

// ValidateHorizontalPodAutoscalerUpdate checks an update: the same rules
// as a create (upstream has no immutable field here).
func ValidateHorizontalPodAutoscalerUpdate(h, old *HorizontalPodAutoscaler) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&h.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateHPASpec(&h.Spec, field.NewPath("spec"))...)
}

// ValidateHorizontalPodAutoscalerStatusUpdate checks a write to
// horizontalpodautoscalers/status: replica counts are not negative.
func ValidateHorizontalPodAutoscalerStatusUpdate(h, old *HorizontalPodAutoscaler) field.ErrorList {
	errs := ValidateObjectMetaUpdate(&h.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status")
	errs = append(errs, ValidateNonnegativeField(int64(h.Status.CurrentReplicas), p.Child("currentReplicas"))...)
	return append(errs, ValidateNonnegativeField(int64(h.Status.DesiredReplicas), p.Child("desiredReplicas"))...)
}

func validateHPASpec(s *HorizontalPodAutoscalerSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	min := int32(1)
	if s.MinReplicas != nil {
		min = *s.MinReplicas
		if min < 1 {
			errs = append(errs, field.Invalid(p.Child("minReplicas"), min, "must be greater than or equal to 1"))
		}
	}
	if s.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than 0"))
	}
	if s.MinReplicas != nil && s.MaxReplicas < min {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	errs = append(errs, validateCrossVersionRef(s.ScaleTargetRef, p.Child("scaleTargetRef"))...)
	for i := range s.Metrics {
		errs = append(errs, validateMetricSpec(&s.Metrics[i], p.Child("metrics").Index(i))...)
	}
	if b := s.Behavior; b != nil {
		bp := p.Child("behavior")
		errs = append(errs, validateHPAScalingRules(b.ScaleUp, bp.Child("scaleUp"))...)
		errs = append(errs, validateHPAScalingRules(b.ScaleDown, bp.Child("scaleDown"))...)
	}
	return errs
}

func validateCrossVersionRef(r CrossVersionObjectReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else {
		errs = append(errs, invalidEach(p.Child("kind"), r.Kind, ValidatePathSegmentName(r.Kind))...)
	}
	if r.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, invalidEach(p.Child("name"), r.Name, ValidatePathSegmentName(r.Name))...)
	}
	return errs
}

var metricSourceTypes = []string{ContainerResourceMetricSourceType, ExternalMetricSourceType, ObjectMetricSourceType, PodsMetricSourceType, ResourceMetricSourceType}

func validateMetricSpec(m *MetricSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	set := map[string]bool{
		ObjectMetricSourceType: m.Object != nil, PodsMetricSourceType: m.Pods != nil, ResourceMetricSourceType: m.Resource != nil,
		ContainerResourceMetricSourceType: m.ContainerResource != nil, ExternalMetricSourceType: m.External != nil,
	}
	n := 0
	for _, v := range set {
		if v {
			n++
		}
	}
	known := false
	for _, t := range metricSourceTypes {
		known = known || t == m.Type
	}
	switch {
	case m.Type == "":
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	case !known:
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, metricSourceTypes))
	case !set[m.Type]:
		errs = append(errs, field.Required(p, "must populate information for the given metric source"))
	case n > 1:
		errs = append(errs, field.Forbidden(p, "must populate the given metric source only"))
	}
	if m.Object != nil {
		op := p.Child("object")
		errs = append(errs, validateCrossVersionRef(m.Object.DescribedObject, op.Child("describedObject"))...)
		errs = append(errs, validateMetricIdentifier(m.Object.Metric, op.Child("metric"))...)
		errs = append(errs, validateMetricTarget(m.Object.Target, op.Child("target"))...)
		if m.Object.Target.Value == nil && m.Object.Target.AverageValue == nil {
			errs = append(errs, field.Required(op.Child("target", "averageValue"), "must set either a target value or averageValue"))
		}
	}
	if m.Pods != nil {
		pp := p.Child("pods")
		errs = append(errs, validateMetricIdentifier(m.Pods.Metric, pp.Child("metric"))...)
		errs = append(errs, validateMetricTarget(m.Pods.Target, pp.Child("target"))...)
		if m.Pods.Target.AverageValue == nil {
			errs = append(errs, field.Required(pp.Child("target", "averageValue"), "must specify a positive target averageValue"))
		}
	}
	if m.External != nil {
		ep := p.Child("external")
		errs = append(errs, validateMetricIdentifier(m.External.Metric, ep.Child("metric"))...)
		errs = append(errs, validateMetricTarget(m.External.Target, ep.Child("target"))...)
		if m.External.Target.Value == nil && m.External.Target.AverageValue == nil {
			errs = append(errs, field.Required(ep.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
		}
	}
	if m.Resource != nil {
		errs = append(errs, validateResourceMetric(m.Resource.Name, m.Resource.Target, p.Child("resource"))...)
	}
	if m.ContainerResource != nil {
		cp := p.Child("containerResource")
		errs = append(errs, validateResourceMetric(m.ContainerResource.Name, m.ContainerResource.Target, cp)...)
		if m.ContainerResource.Container == "" {
			errs = append(errs, field.Required(cp.Child("container"), "must specify a container"))
		} else {
			errs = append(errs, ValidateDNS1123LabelField(m.ContainerResource.Container, cp.Child("container"))...)
		}
	}
	return errs
}

func validateResourceMetric(name string, t MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	} else {
		errs = append(errs, ValidateQualifiedNameField(name, p.Child("name"))...)
	}
	tp := p.Child("target")
	errs = append(errs, validateMetricTarget(t, tp)...)
	switch {
	case t.AverageUtilization == nil && t.AverageValue == nil:
		errs = append(errs, field.Required(tp.Child("averageUtilization"), "must set either a target raw value or a target utilization"))
	case t.AverageUtilization != nil && t.AverageValue != nil:
		errs = append(errs, field.Forbidden(tp.Child("averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

func validateMetricIdentifier(id MetricIdentifier, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if id.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a metric name"))
	} else {
		errs = append(errs, invalidEach(p.Child("name"), id.Name, ValidatePathSegmentName(id.Name))...)
	}
	if id.Selector != nil {
		errs = append(errs, ValidateLabelSelector(id.Selector, p.Child("selector"))...)
	}
	return errs
}

var metricTargetTypes = []string{AverageValueMetricType, UtilizationMetricType, ValueMetricType}

func validateMetricTarget(t MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch t.Type {
	case "":
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	case UtilizationMetricType, ValueMetricType, AverageValueMetricType:
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), t.Type, metricTargetTypes))
	}
	for _, q := range []struct {
		name string
		v    *Quantity
	}{{"value", t.Value}, {"averageValue", t.AverageValue}} {
		if q.v == nil {
			continue
		}
		r, err := ParseQuantity(*q.v)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p.Child(q.name), string(*q.v), err.Error()))
		case r.Sign() <= 0:
			errs = append(errs, field.Invalid(p.Child(q.name), string(*q.v), "must be positive"))
		}
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

var selectPolicies = []string{DisabledPolicySelect, MaxChangePolicySelect, MinChangePolicySelect}

func validateHPAScalingRules(r *HPAScalingRules, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil && (*w < 0 || *w > 3600) {
		errs = append(errs, field.Invalid(p.Child("stabilizationWindowSeconds"), *w, fmt.Sprintf("must be less than or equal to %d and greater than or equal to 0", 3600)))
	}
	if sp := r.SelectPolicy; sp != nil && *sp != MaxChangePolicySelect && *sp != MinChangePolicySelect && *sp != DisabledPolicySelect {
		errs = append(errs, field.NotSupported(p.Child("selectPolicy"), *sp, selectPolicies))
	}
	if len(r.Policies) == 0 {
		errs = append(errs, field.Required(p.Child("policies"), "must specify at least one Policy"))
	}
	for i, pol := range r.Policies {
		pp := p.Child("policies").Index(i)
		if pol.Type != PodsScalingPolicy && pol.Type != PercentScalingPolicy {
			errs = append(errs, field.NotSupported(pp.Child("type"), pol.Type, []string{PercentScalingPolicy, PodsScalingPolicy}))
		}
		if pol.Value <= 0 {
			errs = append(errs, field.Invalid(pp.Child("value"), pol.Value, "must be greater than zero"))
		}
		if pol.PeriodSeconds <= 0 || pol.PeriodSeconds > 1800 {
			errs = append(errs, field.Invalid(pp.Child("periodSeconds"), pol.PeriodSeconds, "must be greater than zero and less than or equal to 1800"))
		}
	}
	if r.Tolerance != nil {
		if q, err := ParseQuantity(*r.Tolerance); err != nil || q.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Child("tolerance"), string(*r.Tolerance), "must be greater than or equal to 0"))
		}
	}
	return errs
}
