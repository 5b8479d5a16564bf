package printers

import (
	"fmt"
	"strings"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// ---- HorizontalPodAutoscalers ----

func hpaColumns() []Column {
	return []Column{nameColumn,
		col("Reference", "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count."),
		col("Targets", "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used)."),
		col("MinPods", "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down."),
		col("MaxPods", "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas."),
		col("Replicas", "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler."),
		ageColumn}
}

// HorizontalPodAutoscalerCells is an autoscaler's row, as kubectl prints
// it: NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE.
func HorizontalPodAutoscalerCells(h *api.HorizontalPodAutoscaler, now time.Time) []any {
	ref := h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name
	minPods := "<unset>"
	if h.Spec.MinReplicas != nil {
		minPods = fmt.Sprintf("%d", *h.Spec.MinReplicas)
	}
	return []any{h.Name, ref, HPAMetrics(h.Spec.Metrics, h.Status.CurrentMetrics), minPods,
		int64(h.Spec.MaxReplicas), int64(h.Status.CurrentReplicas), Age(h.CreationTimestamp.Time, now)}
}

// HPAMetrics is the TARGETS cell, as Kubernetes' formatHPAMetrics writes
// it: "current/target" per metric ("cpu: 12%/50%", "<unknown>" before a
// reading), at most two, then "+ N more...".
func HPAMetrics(specs []api.MetricSpec, statuses []api.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	var list []string
	for i, s := range specs {
		var st *api.MetricStatus
		if i < len(statuses) {
			st = &statuses[i]
		}
		list = append(list, hpaMetric(s, st))
	}
	const max = 2
	if len(list) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:max], ", "), len(list)-max)
	}
	return strings.Join(list, ", ")
}

func hpaMetric(s api.MetricSpec, st *api.MetricStatus) string {
	q := func(v *api.Quantity) string {
		if v == nil {
			return "<unknown>"
		}
		return string(*v)
	}
	pct := func(v *int32) string {
		if v == nil {
			return "<unknown>"
		}
		return fmt.Sprintf("%d%%", *v)
	}
	switch s.Type {
	case api.ExternalMetricSourceType, api.ObjectMetricSourceType:
		var target api.MetricTarget
		var cur *api.MetricValueStatus
		if s.Type == api.ExternalMetricSourceType && s.External != nil {
			target = s.External.Target
			if st != nil && st.External != nil {
				cur = &st.External.Current
			}
		} else if s.Object != nil {
			target = s.Object.Target
			if st != nil && st.Object != nil {
				cur = &st.Object.Current
			}
		}
		if target.AverageValue != nil {
			c := "<unknown>"
			if cur != nil {
				c = q(cur.AverageValue)
			}
			return fmt.Sprintf("%s/%s (avg)", c, q(target.AverageValue))
		}
		c := "<unknown>"
		if cur != nil {
			c = q(cur.Value)
		}
		return fmt.Sprintf("%s/%s", c, q(target.Value))
	case api.PodsMetricSourceType:
		c := "<unknown>"
		if st != nil && st.Pods != nil {
			c = q(st.Pods.Current.AverageValue)
		}
		if s.Pods == nil {
			return "<unknown type>"
		}
		return fmt.Sprintf("%s/%s", c, q(s.Pods.Target.AverageValue))
	case api.ResourceMetricSourceType, api.ContainerResourceMetricSourceType:
		var name string
		var target api.MetricTarget
		var cur *api.MetricValueStatus
		if s.Type == api.ResourceMetricSourceType && s.Resource != nil {
			name, target = s.Resource.Name, s.Resource.Target
			if st != nil && st.Resource != nil {
				cur = &st.Resource.Current
			}
		} else if s.ContainerResource != nil {
			name, target = s.ContainerResource.Name, s.ContainerResource.Target
			if st != nil && st.ContainerResource != nil {
				cur = &st.ContainerResource.Current
			}
		} else {
			return "<unknown type>"
		}
		if target.AverageValue != nil {
			c := "<unknown>"
			if cur != nil {
				c = q(cur.AverageValue)
			}
			return fmt.Sprintf("%s: %s/%s", name, c, q(target.AverageValue))
		}
		c := "<unknown>"
		if cur != nil {
			c = pct(cur.AverageUtilization)
		}
		t := "<auto>"
		if target.AverageUtilization != nil {
			t = pct(target.AverageUtilization)
		}
		return fmt.Sprintf("%s: %s/%s", name, c, t)
	}
	return "<unknown type>"
}
