package api

import (
	"encoding/json"
	"fmt"
	"maps"
)

// ---- HorizontalPodAutoscaler, autoscaling/v1 ----
//
// autoscaling/v1 is served by conversion: objects are stored as
// autoscaling/v2 (HorizontalPodAutoscaler) and converted on the way in
// and out, by upstream's rules (pkg/apis/autoscaling/v1/conversion.go):
//
//   - spec.targetCPUUtilizationPercentage is the first metric of type
//     Resource, name cpu, target Utilization; status
//     .currentCPUUtilizationPercentage is that metric's current
//     averageUtilization.
//   - Whatever v1 cannot hold rides in annotations, in v1's (v2beta1's)
//     metric shapes: autoscaling.alpha.kubernetes.io/metrics (the other
//     metrics), /current-metrics (every current metric), /conditions, and
//     /behavior (the v2 behavior). Reading v1 sets them; writing v1 reads
//     them back and drops them, so a v1 round trip loses nothing and a
//     stored object never carries them.
//   - A v1 object with no CPU target and no other metrics gets v2's
//     default (cpu at 80% utilisation), as upstream.

// Round-trip annotations of autoscaling/v1.
const (
	AnnotationHPAMetrics        = "autoscaling.alpha.kubernetes.io/metrics"
	AnnotationHPACurrentMetrics = "autoscaling.alpha.kubernetes.io/current-metrics"
	AnnotationHPAConditions     = "autoscaling.alpha.kubernetes.io/conditions"
	AnnotationHPABehavior       = "autoscaling.alpha.kubernetes.io/behavior"
)

// HorizontalPodAutoscalerV1 is an autoscaling/v1 HorizontalPodAutoscaler.
type HorizontalPodAutoscalerV1 struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       HorizontalPodAutoscalerSpecV1   `json:"spec,omitempty"`
	Status     HorizontalPodAutoscalerStatusV1 `json:"status,omitempty"`
}

// HorizontalPodAutoscalerListV1 is an autoscaling/v1 list (its schema;
// lists are built from stored objects).
type HorizontalPodAutoscalerListV1 struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata,omitempty"`
	Items    []HorizontalPodAutoscalerV1 `json:"items"`
}

// HorizontalPodAutoscalerSpecV1 is autoscaling/v1's spec: CPU only.
type HorizontalPodAutoscalerSpecV1 struct {
	ScaleTargetRef                 CrossVersionObjectReference `json:"scaleTargetRef"`
	MinReplicas                    *int32                      `json:"minReplicas,omitempty"`
	MaxReplicas                    int32                       `json:"maxReplicas"`
	TargetCPUUtilizationPercentage *int32                      `json:"targetCPUUtilizationPercentage,omitempty"`
}

// HorizontalPodAutoscalerStatusV1 is autoscaling/v1's status.
type HorizontalPodAutoscalerStatusV1 struct {
	ObservedGeneration              *int64 `json:"observedGeneration,omitempty"`
	LastScaleTime                   *Time  `json:"lastScaleTime,omitempty"`
	CurrentReplicas                 int32  `json:"currentReplicas"`
	DesiredReplicas                 int32  `json:"desiredReplicas"`
	CurrentCPUUtilizationPercentage *int32 `json:"currentCPUUtilizationPercentage,omitempty"`
}

// v1 (v2beta1) metric shapes, as the round-trip annotations hold them.

type v1MetricSpec struct {
	Type              string                  `json:"type"`
	Object            *v1ObjectMetricSource   `json:"object,omitempty"`
	Pods              *v1PodsMetricSource     `json:"pods,omitempty"`
	Resource          *v1ResourceMetricSource `json:"resource,omitempty"`
	ContainerResource *v1ResourceMetricSource `json:"containerResource,omitempty"`
	External          *v1ExternalMetricSource `json:"external,omitempty"`
}

type v1ObjectMetricSource struct {
	Target       CrossVersionObjectReference `json:"target"`
	MetricName   string                      `json:"metricName"`
	TargetValue  Quantity                    `json:"targetValue"`
	Selector     *LabelSelector              `json:"selector,omitempty"`
	AverageValue *Quantity                   `json:"averageValue,omitempty"`
}

type v1PodsMetricSource struct {
	MetricName         string         `json:"metricName"`
	TargetAverageValue Quantity       `json:"targetAverageValue"`
	Selector           *LabelSelector `json:"selector,omitempty"`
}

// v1ResourceMetricSource is also ContainerResource's (with Container).
type v1ResourceMetricSource struct {
	Name                     string    `json:"name"`
	TargetAverageUtilization *int32    `json:"targetAverageUtilization,omitempty"`
	TargetAverageValue       *Quantity `json:"targetAverageValue,omitempty"`
	Container                string    `json:"container,omitempty"`
}

type v1ExternalMetricSource struct {
	MetricName         string         `json:"metricName"`
	MetricSelector     *LabelSelector `json:"metricSelector,omitempty"`
	TargetValue        *Quantity      `json:"targetValue,omitempty"`
	TargetAverageValue *Quantity      `json:"targetAverageValue,omitempty"`
}

type v1MetricStatus struct {
	Type              string                  `json:"type"`
	Object            *v1ObjectMetricStatus   `json:"object,omitempty"`
	Pods              *v1PodsMetricStatus     `json:"pods,omitempty"`
	Resource          *v1ResourceMetricStatus `json:"resource,omitempty"`
	ContainerResource *v1ResourceMetricStatus `json:"containerResource,omitempty"`
	External          *v1ExternalMetricStatus `json:"external,omitempty"`
}

type v1ObjectMetricStatus struct {
	Target       CrossVersionObjectReference `json:"target"`
	MetricName   string                      `json:"metricName"`
	CurrentValue Quantity                    `json:"currentValue"`
	Selector     *LabelSelector              `json:"selector,omitempty"`
	AverageValue *Quantity                   `json:"averageValue,omitempty"`
}

type v1PodsMetricStatus struct {
	MetricName          string         `json:"metricName"`
	CurrentAverageValue Quantity       `json:"currentAverageValue"`
	Selector            *LabelSelector `json:"selector,omitempty"`
}

type v1ResourceMetricStatus struct {
	Name                      string   `json:"name"`
	CurrentAverageUtilization *int32   `json:"currentAverageUtilization,omitempty"`
	CurrentAverageValue       Quantity `json:"currentAverageValue"`
	Container                 string   `json:"container,omitempty"`
}

type v1ExternalMetricStatus struct {
	MetricName          string         `json:"metricName"`
	MetricSelector      *LabelSelector `json:"metricSelector,omitempty"`
	CurrentValue        Quantity       `json:"currentValue"`
	CurrentAverageValue *Quantity      `json:"currentAverageValue,omitempty"`
}

// isCPUUtilization: the metric v1's targetCPUUtilizationPercentage is.
func isCPUUtilization(m MetricSpec) bool {
	return m.Type == ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == "cpu" &&
		m.Resource.Target.AverageUtilization != nil
}

// HPAToV1 converts a stored autoscaling/v2 object to autoscaling/v1.
func HPAToV1(in *HorizontalPodAutoscaler) (*HorizontalPodAutoscalerV1, error) {
	out := &HorizontalPodAutoscalerV1{
		TypeMeta:   TypeMeta{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: in.ObjectMeta,
		Spec: HorizontalPodAutoscalerSpecV1{
			ScaleTargetRef: in.Spec.ScaleTargetRef, MinReplicas: in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas,
		},
		Status: HorizontalPodAutoscalerStatusV1{
			ObservedGeneration: in.Status.ObservedGeneration, LastScaleTime: in.Status.LastScaleTime,
			CurrentReplicas: in.Status.CurrentReplicas, DesiredReplicas: in.Status.DesiredReplicas,
		},
	}
	ann := maps.Clone(in.Annotations)
	set := func(key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("autoscaling/v1: %s: %w", key, err)
		}
		if ann == nil {
			ann = map[string]string{}
		}
		ann[key] = string(b)
		return nil
	}
	var others []v1MetricSpec
	cpuSeen := false
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) && !cpuSeen {
			cpuSeen = true
			out.Spec.TargetCPUUtilizationPercentage = m.Resource.Target.AverageUtilization
			continue
		}
		others = append(others, metricSpecToV1(m))
	}
	var current []v1MetricStatus
	for _, m := range in.Status.CurrentMetrics {
		if m.Type == ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == "cpu" &&
			m.Resource.Current.AverageUtilization != nil && out.Status.CurrentCPUUtilizationPercentage == nil {
			out.Status.CurrentCPUUtilizationPercentage = m.Resource.Current.AverageUtilization
		}
		current = append(current, metricStatusToV1(m))
	}
	var err error
	if len(others) > 0 {
		err = set(AnnotationHPAMetrics, others)
	}
	if err == nil && len(current) > 0 {
		err = set(AnnotationHPACurrentMetrics, current)
	}
	if err == nil && len(in.Status.Conditions) > 0 {
		err = set(AnnotationHPAConditions, in.Status.Conditions)
	}
	if err == nil && in.Spec.Behavior != nil {
		err = set(AnnotationHPABehavior, in.Spec.Behavior)
	}
	if err != nil {
		return nil, err
	}
	out.Annotations = ann
	return out, nil
}

// HPAFromV1 converts an autoscaling/v1 object to the stored
// autoscaling/v2 form, taking the round-trip annotations back out.
func HPAFromV1(in *HorizontalPodAutoscalerV1) (*HorizontalPodAutoscaler, error) {
	out := &HorizontalPodAutoscaler{
		TypeMeta:   TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: in.ObjectMeta,
		Spec: HorizontalPodAutoscalerSpec{
			ScaleTargetRef: in.Spec.ScaleTargetRef, MinReplicas: in.Spec.MinReplicas, MaxReplicas: in.Spec.MaxReplicas,
		},
		Status: HorizontalPodAutoscalerStatus{
			ObservedGeneration: in.Status.ObservedGeneration, LastScaleTime: in.Status.LastScaleTime,
			CurrentReplicas: in.Status.CurrentReplicas, DesiredReplicas: in.Status.DesiredReplicas,
		},
	}
	if p := in.Spec.TargetCPUUtilizationPercentage; p != nil {
		out.Spec.Metrics = []MetricSpec{{Type: ResourceMetricSourceType, Resource: &ResourceMetricSource{
			Name: "cpu", Target: MetricTarget{Type: UtilizationMetricType, AverageUtilization: ptrTo(*p)}}}}
	}
	ann := in.Annotations
	get := func(key string, into any) error {
		v, ok := ann[key]
		if !ok {
			return nil
		}
		if err := json.Unmarshal([]byte(v), into); err != nil {
			return fmt.Errorf("metadata.annotations[%s]: %w", key, err)
		}
		return nil
	}
	var others []v1MetricSpec
	var current []v1MetricStatus
	for _, g := range []struct {
		key  string
		into any
	}{
		{AnnotationHPAMetrics, &others}, {AnnotationHPACurrentMetrics, &current},
		{AnnotationHPAConditions, &out.Status.Conditions}, {AnnotationHPABehavior, &out.Spec.Behavior},
	} {
		if err := get(g.key, g.into); err != nil {
			return nil, err
		}
	}
	for _, m := range others {
		out.Spec.Metrics = append(out.Spec.Metrics, metricSpecFromV1(m))
	}
	if _, ok := ann[AnnotationHPACurrentMetrics]; ok {
		// The annotation has every current metric, with more than the
		// CPU percentage.
		for _, m := range current {
			out.Status.CurrentMetrics = append(out.Status.CurrentMetrics, metricStatusFromV1(m))
		}
	} else if p := in.Status.CurrentCPUUtilizationPercentage; p != nil {
		out.Status.CurrentMetrics = []MetricStatus{{Type: ResourceMetricSourceType, Resource: &ResourceMetricStatus{
			Name: "cpu", Current: MetricValueStatus{AverageUtilization: ptrTo(*p)}}}}
	}
	if ann != nil {
		ann = maps.Clone(ann)
		for _, k := range []string{AnnotationHPAMetrics, AnnotationHPACurrentMetrics, AnnotationHPAConditions, AnnotationHPABehavior} {
			delete(ann, k)
		}
		if len(ann) == 0 {
			ann = nil
		}
		out.Annotations = ann
	}
	return out, nil
}

func metricSpecToV1(m MetricSpec) v1MetricSpec {
	out := v1MetricSpec{Type: m.Type}
	switch {
	case m.Object != nil:
		o := m.Object
		out.Object = &v1ObjectMetricSource{Target: o.DescribedObject, MetricName: o.Metric.Name,
			Selector: o.Metric.Selector, AverageValue: o.Target.AverageValue}
		if o.Target.Value != nil {
			out.Object.TargetValue = *o.Target.Value
		}
	case m.Pods != nil:
		out.Pods = &v1PodsMetricSource{MetricName: m.Pods.Metric.Name, Selector: m.Pods.Metric.Selector}
		if v := m.Pods.Target.AverageValue; v != nil {
			out.Pods.TargetAverageValue = *v
		}
	case m.Resource != nil:
		out.Resource = &v1ResourceMetricSource{Name: m.Resource.Name,
			TargetAverageUtilization: m.Resource.Target.AverageUtilization, TargetAverageValue: m.Resource.Target.AverageValue}
	case m.ContainerResource != nil:
		c := m.ContainerResource
		out.ContainerResource = &v1ResourceMetricSource{Name: c.Name, Container: c.Container,
			TargetAverageUtilization: c.Target.AverageUtilization, TargetAverageValue: c.Target.AverageValue}
	case m.External != nil:
		e := m.External
		out.External = &v1ExternalMetricSource{MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector,
			TargetValue: e.Target.Value, TargetAverageValue: e.Target.AverageValue}
	}
	return out
}

func metricSpecFromV1(m v1MetricSpec) MetricSpec {
	out := MetricSpec{Type: m.Type}
	resourceTarget := func(r *v1ResourceMetricSource) MetricTarget {
		t := MetricTarget{Type: AverageValueMetricType, AverageValue: r.TargetAverageValue, AverageUtilization: r.TargetAverageUtilization}
		if r.TargetAverageUtilization != nil {
			t.Type = UtilizationMetricType
		}
		return t
	}
	switch {
	case m.Object != nil:
		o := m.Object
		t := MetricTarget{Type: ValueMetricType, AverageValue: o.AverageValue}
		if o.TargetValue != "" {
			t.Value = ptrTo(o.TargetValue)
		}
		if o.AverageValue != nil {
			t.Type = AverageValueMetricType
		}
		out.Object = &ObjectMetricSource{DescribedObject: o.Target, Target: t,
			Metric: MetricIdentifier{Name: o.MetricName, Selector: o.Selector}}
	case m.Pods != nil:
		out.Pods = &PodsMetricSource{Metric: MetricIdentifier{Name: m.Pods.MetricName, Selector: m.Pods.Selector},
			Target: MetricTarget{Type: AverageValueMetricType, AverageValue: ptrTo(m.Pods.TargetAverageValue)}}
	case m.Resource != nil:
		out.Resource = &ResourceMetricSource{Name: m.Resource.Name, Target: resourceTarget(m.Resource)}
	case m.ContainerResource != nil:
		c := m.ContainerResource
		out.ContainerResource = &ContainerResourceMetricSource{Name: c.Name, Container: c.Container, Target: resourceTarget(c)}
	case m.External != nil:
		e := m.External
		t := MetricTarget{Type: AverageValueMetricType, Value: e.TargetValue, AverageValue: e.TargetAverageValue}
		if e.TargetValue != nil {
			t.Type = ValueMetricType
		}
		out.External = &ExternalMetricSource{Metric: MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector}, Target: t}
	}
	return out
}

func metricStatusToV1(m MetricStatus) v1MetricStatus {
	out := v1MetricStatus{Type: m.Type}
	orZero := func(q *Quantity) Quantity {
		if q == nil {
			return "0"
		}
		return *q
	}
	switch {
	case m.Object != nil:
		o := m.Object
		out.Object = &v1ObjectMetricStatus{Target: o.DescribedObject, MetricName: o.Metric.Name, Selector: o.Metric.Selector,
			CurrentValue: orZero(o.Current.Value), AverageValue: o.Current.AverageValue}
	case m.Pods != nil:
		out.Pods = &v1PodsMetricStatus{MetricName: m.Pods.Metric.Name, Selector: m.Pods.Metric.Selector,
			CurrentAverageValue: orZero(m.Pods.Current.AverageValue)}
	case m.Resource != nil:
		out.Resource = &v1ResourceMetricStatus{Name: m.Resource.Name,
			CurrentAverageUtilization: m.Resource.Current.AverageUtilization, CurrentAverageValue: orZero(m.Resource.Current.AverageValue)}
	case m.ContainerResource != nil:
		c := m.ContainerResource
		out.ContainerResource = &v1ResourceMetricStatus{Name: c.Name, Container: c.Container,
			CurrentAverageUtilization: c.Current.AverageUtilization, CurrentAverageValue: orZero(c.Current.AverageValue)}
	case m.External != nil:
		e := m.External
		out.External = &v1ExternalMetricStatus{MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector,
			CurrentValue: orZero(e.Current.Value), CurrentAverageValue: e.Current.AverageValue}
	}
	return out
}

func metricStatusFromV1(m v1MetricStatus) MetricStatus {
	out := MetricStatus{Type: m.Type}
	switch {
	case m.Object != nil:
		o := m.Object
		out.Object = &ObjectMetricStatus{DescribedObject: o.Target, Metric: MetricIdentifier{Name: o.MetricName, Selector: o.Selector},
			Current: MetricValueStatus{Value: ptrTo(o.CurrentValue), AverageValue: o.AverageValue}}
	case m.Pods != nil:
		out.Pods = &PodsMetricStatus{Metric: MetricIdentifier{Name: m.Pods.MetricName, Selector: m.Pods.Selector},
			Current: MetricValueStatus{AverageValue: ptrTo(m.Pods.CurrentAverageValue)}}
	case m.Resource != nil:
		out.Resource = &ResourceMetricStatus{Name: m.Resource.Name,
			Current: MetricValueStatus{AverageValue: ptrTo(m.Resource.CurrentAverageValue), AverageUtilization: m.Resource.CurrentAverageUtilization}}
	case m.ContainerResource != nil:
		c := m.ContainerResource
		out.ContainerResource = &ContainerResourceMetricStatus{Name: c.Name, Container: c.Container,
			Current: MetricValueStatus{AverageValue: ptrTo(c.CurrentAverageValue), AverageUtilization: c.CurrentAverageUtilization}}
	case m.External != nil:
		e := m.External
		out.External = &ExternalMetricStatus{Metric: MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector},
			Current: MetricValueStatus{Value: ptrTo(e.CurrentValue), AverageValue: e.CurrentAverageValue}}
	}
	return out
}
