package api

import "math/big"

// The resources a pod's quality-of-service class and its cgroups are
// computed from.
const (
	ResourceCPU    = "cpu"
	ResourceMemory = "memory"
)

// The pod QoS classes (status.qosClass).
const (
	PodQOSGuaranteed = "Guaranteed"
	PodQOSBurstable  = "Burstable"
	PodQOSBestEffort = "BestEffort"
)

// PodQOSClass is the pod's quality-of-service class, by upstream's rule
// (pkg/apis/core/helper/qos GetPodQOS): only cpu and memory count, and a
// zero quantity is no quantity; BestEffort when no container (init
// containers included) requests or limits either; Guaranteed when every
// container limits both and every request equals its limit; else
// Burstable. A request left unset is its limit, as defaulting makes it
// (DefaultContainer), so the answer is the same before and after
// defaulting.
func PodQOSClass(s *PodSpec) string {
	requests := map[string]*big.Rat{}
	limits := map[string]*big.Rat{}
	guaranteed := true
	add := func(sum map[string]*big.Rat, name string, q Quantity) bool {
		if name != ResourceCPU && name != ResourceMemory {
			return false
		}
		v, err := ParseQuantity(q)
		if err != nil || v.Sign() <= 0 {
			return false
		}
		if sum[name] == nil {
			sum[name] = new(big.Rat)
		}
		sum[name].Add(sum[name], v)
		return true
	}
	for _, cs := range [][]Container{s.InitContainers, s.Containers} {
		for i := range cs {
			r := cs[i].Resources
			for name, q := range r.Requests {
				add(requests, name, q)
			}
			for name, q := range r.Limits {
				if _, set := r.Requests[name]; !set {
					add(requests, name, q) // defaulting's request
				}
			}
			found := 0
			for name, q := range r.Limits {
				if add(limits, name, q) {
					found++
				}
			}
			if found < 2 {
				guaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim := limits[name]; lim == nil || lim.Cmp(req) != 0 {
				guaranteed = false
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return PodQOSGuaranteed
	}
	return PodQOSBurstable
}
