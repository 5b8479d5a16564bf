package podautoscaler

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// Upstream's defaults (kube-controller-manager flags).
const (
	DefaultTolerance              = 0.1
	cpuInitializationPeriod       = 5 * time.Minute
	delayOfInitialReadinessStatus = 30 * time.Second
	defaultDownscaleStabilisation = 5 * time.Minute
	defaultScaleUpLimitFactor     = 2.0
	defaultScaleUpLimitMinimum    = 4.0
)

// PodUsage is one pod's reading from the resource metrics API: per
// container, per resource, in milli-units (cpu millicores, memory
// millibytes), as the API's Quantity.MilliValue gives them.
type PodUsage struct {
	Timestamp  time.Time
	Window     time.Duration
	Containers map[string]map[string]int64
}

// value sums a resource over the pod's containers (one container when
// container is set); ok is false when that container has no reading.
func (u PodUsage) value(resource, container string) (int64, bool) {
	if container != "" {
		c, ok := u.Containers[container]
		if !ok {
			return 0, false
		}
		v, ok := c[resource]
		return v, ok
	}
	var sum int64
	for _, c := range u.Containers {
		sum += c[resource]
	}
	return sum, true
}

// tolerances are the two directions' tolerances around a ratio of 1.
type tolerances struct{ down, up float64 }

func (t tolerances) within(ratio float64) bool {
	return (1.0-t.down) <= ratio && ratio <= (1.0+t.up)
}

// resourceInput is what one Resource or ContainerResource metric reads.
type resourceInput struct {
	current   int32
	resource  string
	container string
	// targetUtilization (percent of requests) or targetAverage (milli-units
	// per pod): exactly one is set.
	targetUtilization *int32
	targetAverage     *int64
	tol               tolerances
	pods              []*api.Pod
	usage             map[string]PodUsage
	now               time.Time
}

// resourceResult is a metric's proposal and its reading for the status.
type resourceResult struct {
	replicas    int32
	utilization *int32 // percent of requests, for a Utilization target
	average     int64  // milli-units per pod with a reading
}

// resourceReplicas proposes a replica count from one resource metric
// (replica_calculator.go's GetResourceReplicas and GetRawResourceReplicas).
func resourceReplicas(in resourceInput) (resourceResult, error) {
	if len(in.pods) == 0 {
		return resourceResult{}, fmt.Errorf("no pods returned by selector while calculating replica count")
	}
	metrics := map[string]int64{}
	for name, u := range in.usage {
		if v, ok := u.value(in.resource, in.container); ok {
			metrics[name] = v
		}
	}
	if len(metrics) == 0 {
		return resourceResult{}, fmt.Errorf("unable to get metrics for resource %s: no metrics returned from resource metrics API", in.resource)
	}
	ready, unready, missing := groupPods(in, metrics)
	for name := range unready {
		delete(metrics, name)
	}
	if len(metrics) == 0 {
		return resourceResult{}, fmt.Errorf("did not receive metrics for targeted pods (pods might be unready)")
	}
	var requests map[string]int64
	if in.targetUtilization != nil {
		var err error
		if requests, err = podRequests(in.pods, in.resource, in.container); err != nil {
			return resourceResult{}, err
		}
	}
	ratio, res, err := usageRatio(in, metrics, requests)
	if err != nil {
		return resourceResult{}, err
	}
	scaleUpWithUnready := len(unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(missing) == 0 {
		if in.tol.within(ratio) {
			res.replicas = in.current
		} else {
			res.replicas = int32(math.Ceil(ratio * float64(ready)))
		}
		return res, nil
	}
	if len(missing) > 0 {
		for _, name := range missing {
			switch {
			case ratio < 1.0 && in.targetUtilization != nil:
				metrics[name] = requests[name] * int64(max(100, *in.targetUtilization)) / 100
			case ratio < 1.0:
				metrics[name] = *in.targetAverage
			default:
				metrics[name] = 0
			}
		}
	}
	if scaleUpWithUnready {
		for name := range unready {
			metrics[name] = 0
		}
	}
	newRatio, _, err := usageRatio(in, metrics, requests)
	if err != nil {
		return resourceResult{}, err
	}
	if in.tol.within(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		res.replicas = in.current
		return res, nil
	}
	n := int32(math.Ceil(newRatio * float64(len(metrics))))
	if (newRatio < 1.0 && n > in.current) || (newRatio > 1.0 && n < in.current) {
		n = in.current
	}
	res.replicas = n
	return res, nil
}

// usageRatio is usage over target for the pods in metrics (those with a
// request, for a Utilization target), and the reading for the status.
func usageRatio(in resourceInput, metrics, requests map[string]int64) (float64, resourceResult, error) {
	if in.targetUtilization != nil {
		var used, requested int64
		for name, v := range metrics {
			r, ok := requests[name]
			if !ok {
				continue
			}
			used += v
			requested += r
		}
		if requested == 0 {
			return 0, resourceResult{}, fmt.Errorf("no metrics returned matched known pods")
		}
		util := int32(used * 100 / requested)
		n := int64(0)
		for name := range metrics {
			if _, ok := requests[name]; ok {
				n++
			}
		}
		return float64(util) / float64(*in.targetUtilization), resourceResult{utilization: &util, average: used / n}, nil
	}
	var used int64
	for _, v := range metrics {
		used += v
	}
	avg := used / int64(len(metrics))
	// GetRawResourceReplicas: the ratio of the total to target × count.
	return float64(used) / (float64(*in.targetAverage) * float64(len(metrics))), resourceResult{average: avg}, nil
}

// groupPods sorts the pods as upstream's groupPods: the count of ready
// pods with a reading, the unready ones and the missing ones (ready, no
// reading); pods being deleted or Failed are dropped from metrics.
func groupPods(in resourceInput, metrics map[string]int64) (ready int, unready map[string]bool, missing []string) {
	unready = map[string]bool{}
	known := map[string]bool{}
	for _, pod := range in.pods {
		known[pod.Name] = true
		if pod.DeletionTimestamp != nil || pod.Status.Phase == api.PodFailed {
			delete(metrics, pod.Name)
			continue
		}
		if pod.Status.Phase == api.PodPending {
			unready[pod.Name] = true
			continue
		}
		if _, ok := metrics[pod.Name]; !ok {
			missing = append(missing, pod.Name)
			continue
		}
		if in.resource == "cpu" && cpuUnready(pod, in.usage[pod.Name], in.now) {
			unready[pod.Name] = true
			continue
		}
		ready++
	}
	for name := range metrics {
		if !known[name] {
			delete(metrics, name) // a reading of a pod the selector no longer selects
		}
	}
	slices.Sort(missing)
	return ready, unready, missing
}

// cpuUnready: a cpu reading is not trusted for a pod without a Ready
// condition or start time; within the initialisation period, for a pod
// not Ready or whose reading predates its readiness change; after it,
// for a pod not Ready that never became Ready soon after starting.
func cpuUnready(pod *api.Pod, u PodUsage, now time.Time) bool {
	c := api.GetPodCondition(&pod.Status, api.PodReady)
	if c == nil || pod.Status.StartTime == nil {
		return true
	}
	start := pod.Status.StartTime.Time
	if start.Add(cpuInitializationPeriod).After(now) {
		return c.Status == api.ConditionFalse || u.Timestamp.Before(c.LastTransitionTime.Time.Add(u.Window))
	}
	return c.Status == api.ConditionFalse && start.Add(delayOfInitialReadinessStatus).After(c.LastTransitionTime.Time)
}

// podRequests sums each pod's requests of the resource (one container
// when container is set); a container without one is an error.
func podRequests(pods []*api.Pod, resource, container string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, pod := range pods {
		var sum int64
		for _, c := range pod.Spec.Containers {
			if container != "" && c.Name != container {
				continue
			}
			q, ok := c.Resources.Requests[resource]
			if !ok {
				return nil, fmt.Errorf("missing request for %s in container %s of Pod %s", resource, c.Name, pod.Name)
			}
			v, ok := q.MilliValue()
			if !ok {
				return nil, fmt.Errorf("invalid request %q for %s in container %s of Pod %s", string(q), resource, c.Name, pod.Name)
			}
			sum += v
		}
		out[pod.Name] = sum
	}
	return out, nil
}
