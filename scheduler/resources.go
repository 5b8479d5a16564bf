package scheduler

import (
	"github.com/skiff-dev/skiff/api"
)

// Defaults, as Kubernetes.
const (
	// DefaultMaxPods is the pod capacity of a node whose status gives none.
	DefaultMaxPods = 110
	// Requests counted for scoring when a container gives none
	// (Kubernetes' DefaultMilliCPURequest and DefaultMemoryRequest).
	defaultMilliCPURequest = 100
	defaultMemoryRequest   = 200 << 20
)

// Resource names.
const (
	resourceCPU    = "cpu"
	resourceMemory = "memory"
	resourcePods   = "pods"
)

// newPodInfo computes what scheduling needs of pod.
func newPodInfo(pod *api.Pod) *podInfo {
	p := &podInfo{
		key:         pod.Namespace + "/" + pod.Name,
		uid:         pod.UID,
		selector:    pod.Spec.NodeSelector,
		tolerations: pod.Spec.Tolerations,
	}
	if ref := api.ControllerRef(&pod.ObjectMeta); ref != nil {
		p.owner = ref.UID
	}
	p.cpu, p.mem, p.nzCPU, p.nzMem = podRequests(&pod.Spec)
	p.ns, p.labels = pod.Namespace, pod.Labels
	if pod.Spec.Priority != nil {
		p.priority = *pod.Spec.Priority
	}
	p.setAffinity(pod.Spec.Affinity)
	p.setSpread(pod.Spec.TopologySpreadConstraints)
	return p
}

// podRequests is the pod's effective request, as Kubernetes computes it:
// the sum over containers, raised to the largest init container's request.
// A container without a request for a resource but with a limit requests
// its limit (Kubernetes' defaulting). The non-zero variants count a
// missing request as 100m cpu / 200Mi memory, for scoring only.
func podRequests(spec *api.PodSpec) (cpu, mem, nzCPU, nzMem int64) {
	for i := range spec.Containers {
		c, m, ok1, ok2 := containerRequests(&spec.Containers[i].Resources)
		cpu += c
		mem += m
		nzCPU += nonZero(c, ok1, defaultMilliCPURequest)
		nzMem += nonZero(m, ok2, defaultMemoryRequest)
	}
	for i := range spec.InitContainers {
		c, m, ok1, ok2 := containerRequests(&spec.InitContainers[i].Resources)
		cpu = max(cpu, c)
		mem = max(mem, m)
		nzCPU = max(nzCPU, nonZero(c, ok1, defaultMilliCPURequest))
		nzMem = max(nzMem, nonZero(m, ok2, defaultMemoryRequest))
	}
	return cpu, mem, nzCPU, nzMem
}

func nonZero(v int64, set bool, def int64) int64 {
	if !set {
		return def
	}
	return v
}

// containerRequests returns the container's cpu (millicores) and memory
// (bytes) requests and whether each was given.
func containerRequests(r *api.ResourceRequirements) (cpu, mem int64, cpuSet, memSet bool) {
	q := func(name string, milli bool) (int64, bool) {
		v, ok := r.Requests[name]
		if !ok {
			if v, ok = r.Limits[name]; !ok {
				return 0, false
			}
		}
		var n int64
		var good bool
		if milli {
			n, good = v.MilliValue()
		} else {
			n, good = v.Value()
		}
		if !good || n < 0 {
			return 0, true // validation rejects these; count nothing
		}
		return n, true
	}
	cpu, cpuSet = q(resourceCPU, true)
	mem, memSet = q(resourceMemory, false)
	return cpu, mem, cpuSet, memSet
}

// nodeAllocatable returns the node's allocatable cpu (millicores), memory
// (bytes) and pod count. A resource missing from status.allocatable falls
// back to status.capacity (Kubernetes defaults allocatable to capacity);
// missing pods default to DefaultMaxPods, missing cpu and memory to 0.
func nodeAllocatable(st *api.NodeStatus) (cpu, mem, pods int64) {
	get := func(name string) (api.Quantity, bool) {
		if v, ok := st.Allocatable[name]; ok {
			return v, true
		}
		v, ok := st.Capacity[name]
		return v, ok
	}
	if v, ok := get(resourceCPU); ok {
		cpu, _ = v.MilliValue()
	}
	if v, ok := get(resourceMemory); ok {
		mem, _ = v.Value()
	}
	pods = DefaultMaxPods
	if v, ok := get(resourcePods); ok {
		if n, ok := v.Value(); ok {
			pods = n
		}
	}
	return cpu, mem, pods
}

// nodeReady reports whether the node's Ready condition is True.
func nodeReady(n *api.Node) bool {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == api.NodeReady {
			return n.Status.Conditions[i].Status == api.ConditionTrue
		}
	}
	return false
}

// schedulingTaints are the taints that keep pods off: NoSchedule and
// NoExecute (PreferNoSchedule only affects scoring in Kubernetes and is
// ignored here).
func schedulingTaints(ts []api.Taint) []api.Taint {
	var out []api.Taint
	for _, t := range ts {
		if t.Effect == api.TaintEffectNoSchedule || t.Effect == api.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// podIsTerminal reports a pod whose phase means it holds no resources.
func podIsTerminal(p *api.Pod) bool {
	return p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed
}
