package podautoscaler

import (
	"fmt"
	"strconv"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Input is everything one sync of an autoscaler reads.
type Input struct {
	HPA *api.HorizontalPodAutoscaler
	// Current is the target's spec.replicas from its /scale.
	Current int32
	// Pods are the pods the scale's selector selects.
	Pods []*api.Pod
	// Usage are the resource metrics API's readings by pod name; UsageErr
	// is why there are none (the API is not served, say).
	Usage    map[string]PodUsage
	UsageErr error
	History  History
	Now      time.Time
}

// Event is an Event to record on the autoscaler.
type Event struct {
	Type, Reason, Message string
}

// Plan is what a sync writes.
type Plan struct {
	// Rescale: write Desired to the target's /scale (with Reason).
	Rescale bool
	Desired int32
	Reason  string
	// Status is the autoscaler's new status, before the rescale's outcome
	// (the apply step adds it).
	Status  api.HorizontalPodAutoscalerStatus
	Events  []Event
	History History
}

// Reconcile decides one sync of an autoscaler (horizontal.go's
// reconcileAutoscaler): see the package doc for the rules.
func Reconcile(in Input) Plan {
	h := in.HPA
	minR := int32(1)
	if h.Spec.MinReplicas != nil {
		minR = *h.Spec.MinReplicas
	}
	maxR := h.Spec.MaxReplicas
	gen := h.Generation
	p := Plan{History: in.History, Desired: in.Current}
	p.Status = api.HorizontalPodAutoscalerStatus{
		ObservedGeneration: &gen, LastScaleTime: h.Status.LastScaleTime,
		CurrentReplicas: in.Current, DesiredReplicas: in.Current,
		CurrentMetrics: h.Status.CurrentMetrics,
	}
	conds := []condition{{api.HPAAbleToScale, api.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale"}}
	switch {
	case in.Current == 0 && minR != 0:
		p.Desired = 0
		conds = append(conds, condition{api.HPAScalingActive, api.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero"})
	case in.Current > maxR:
		p.Desired, p.Reason = maxR, "Current number of replicas above Spec.MaxReplicas"
	case in.Current < minR:
		p.Desired, p.Reason = minR, "Current number of replicas below Spec.MinReplicas"
	default:
		proposal, metric, statuses, cond, err := computeReplicas(in)
		p.Status.CurrentMetrics = statuses
		conds = append(conds, cond)
		if err != nil {
			p.Events = append(p.Events, Event{"Warning", "FailedComputeMetricsReplicas", err.Error()})
			p.Status.Conditions = mergeConditions(h.Status.Conditions, conds, in.Now)
			return p
		}
		if proposal > in.Current {
			p.Reason = metric + " above target"
		} else if proposal < in.Current {
			p.Reason = "All metrics below target"
		}
		var nconds []condition
		p.Desired, nconds, p.History = normalize(normalizeInput{
			current: in.Current, desired: proposal, min: minR, max: maxR, behavior: h.Spec.Behavior, now: in.Now,
		}, p.History)
		// AbleToScale from normalize replaces SucceededGetScale.
		conds = []condition{nconds[0], cond, nconds[1]}
	}
	p.Rescale = p.Desired != in.Current
	p.Status.DesiredReplicas = p.Desired
	p.Status.Conditions = mergeConditions(h.Status.Conditions, conds, in.Now)
	return p
}

// computeReplicas asks every metric and keeps the largest proposal.
func computeReplicas(in Input) (int32, string, []api.MetricStatus, condition, error) {
	h := in.HPA
	tol := tolerances{DefaultTolerance, DefaultTolerance}
	if b := h.Spec.Behavior; b != nil {
		if b.ScaleDown != nil && b.ScaleDown.Tolerance != nil {
			tol.down = quantityFloat(*b.ScaleDown.Tolerance, DefaultTolerance)
		}
		if b.ScaleUp != nil && b.ScaleUp.Tolerance != nil {
			tol.up = quantityFloat(*b.ScaleUp.Tolerance, DefaultTolerance)
		}
	}
	var (
		best       int32 = -1
		bestName   string
		statuses   []api.MetricStatus
		invalid    int
		firstErr   error
		failedCond condition
	)
	for _, m := range h.Spec.Metrics {
		n, name, st, reason, err := metricReplicas(in, m, tol)
		statuses = append(statuses, st)
		if err != nil {
			if invalid == 0 {
				firstErr = err
				failedCond = condition{api.HPAScalingActive, api.ConditionFalse, reason, "the HPA was unable to compute the replica count: " + err.Error()}
			}
			invalid++
			continue
		}
		if n > best {
			best, bestName = n, name
		}
	}
	if invalid >= len(h.Spec.Metrics) || (invalid > 0 && best < in.Current) {
		return -1, "", statuses, failedCond, fmt.Errorf("invalid metrics (%d invalid out of %d), first error is: %v", invalid, len(h.Spec.Metrics), firstErr)
	}
	return best, bestName, statuses, condition{api.HPAScalingActive, api.ConditionTrue, "ValidMetricFound",
		"the HPA was able to successfully calculate a replica count from " + bestName}, nil
}

// metricReplicas is one metric's proposal, its name for messages, its
// status and, when it cannot be read, the condition reason and error.
func metricReplicas(in Input, m api.MetricSpec, tol tolerances) (int32, string, api.MetricStatus, string, error) {
	st := api.MetricStatus{Type: m.Type}
	var (
		res       string
		container string
		target    api.MetricTarget
		reason    = "FailedGetResourceMetric"
		kind      = "resource"
	)
	switch {
	case m.Type == api.ResourceMetricSourceType && m.Resource != nil:
		res, target = m.Resource.Name, m.Resource.Target
	case m.Type == api.ContainerResourceMetricSourceType && m.ContainerResource != nil:
		res, target, container = m.ContainerResource.Name, m.ContainerResource.Target, m.ContainerResource.Container
		reason, kind = "FailedGetContainerResourceMetric", "container resource"
	case m.Type == api.PodsMetricSourceType:
		return 0, "", st, "FailedGetPodsMetric", fmt.Errorf("unable to get metric %s: the custom metrics API (custom.metrics.k8s.io) is not served", metricName(m))
	case m.Type == api.ObjectMetricSourceType:
		return 0, "", st, "FailedGetObjectMetric", fmt.Errorf("unable to get metric %s: the custom metrics API (custom.metrics.k8s.io) is not served", metricName(m))
	case m.Type == api.ExternalMetricSourceType:
		return 0, "", st, "FailedGetExternalMetric", fmt.Errorf("unable to get external metric %s: the external metrics API (external.metrics.k8s.io) is not served", metricName(m))
	default:
		return 0, "", st, "InvalidMetricSourceType", fmt.Errorf("unknown metric source type %q", m.Type)
	}
	ri := resourceInput{current: in.Current, resource: res, container: container, tol: tol, pods: in.Pods, usage: in.Usage, now: in.Now}
	name := res + " " + kind
	if target.AverageUtilization != nil {
		ri.targetUtilization = target.AverageUtilization
		name += " utilization (percentage of request)"
	} else if target.AverageValue != nil {
		v, ok := target.AverageValue.MilliValue()
		if !ok {
			return 0, "", st, reason, fmt.Errorf("invalid target %q for %s", string(*target.AverageValue), res)
		}
		ri.targetAverage = &v
	} else {
		return 0, "", st, reason, fmt.Errorf("invalid target for %s: neither averageUtilization nor averageValue", res)
	}
	if in.UsageErr != nil {
		return 0, "", st, reason, fmt.Errorf("failed to get %s utilization: unable to get metrics for resource %s: %v", res, res, in.UsageErr)
	}
	r, err := resourceReplicas(ri)
	if err != nil {
		return 0, "", st, reason, fmt.Errorf("failed to get %s utilization: %v", res, err)
	}
	avg := milliQuantity(r.average)
	cur := api.MetricValueStatus{AverageValue: &avg, AverageUtilization: r.utilization}
	if container != "" {
		st.ContainerResource = &api.ContainerResourceMetricStatus{Name: res, Container: container, Current: cur}
	} else {
		st.Resource = &api.ResourceMetricStatus{Name: res, Current: cur}
	}
	return r.replicas, name, st, "", nil
}

func metricName(m api.MetricSpec) string {
	switch {
	case m.Pods != nil:
		return m.Pods.Metric.Name
	case m.Object != nil:
		return m.Object.Metric.Name
	case m.External != nil:
		return m.External.Metric.Name
	}
	return ""
}

// milliQuantity writes milli-units as a Quantity ("250m", "2").
func milliQuantity(v int64) api.Quantity {
	if v%1000 == 0 {
		return api.Quantity(strconv.FormatInt(v/1000, 10))
	}
	return api.Quantity(strconv.FormatInt(v, 10) + "m")
}

func quantityFloat(q api.Quantity, def float64) float64 {
	r, err := api.ParseQuantity(q)
	if err != nil {
		return def
	}
	f, _ := r.Float64()
	return f
}

// mergeConditions sets each condition, keeping its lastTransitionTime
// when its status did not change, and keeps conditions not set here.
func mergeConditions(old []api.HorizontalPodAutoscalerCondition, set []condition, now time.Time) []api.HorizontalPodAutoscalerCondition {
	out := append([]api.HorizontalPodAutoscalerCondition(nil), old...)
	for _, c := range set {
		nc := api.HorizontalPodAutoscalerCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, LastTransitionTime: api.NewTime(now)}
		found := false
		for i := range out {
			if out[i].Type != c.Type {
				continue
			}
			found = true
			if out[i].Status == c.Status {
				nc.LastTransitionTime = out[i].LastTransitionTime
			}
			out[i] = nc
		}
		if !found {
			out = append(out, nc)
		}
	}
	return out
}
