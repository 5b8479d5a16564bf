package cgroups

import (
	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// The kubelet's constants (pkg/kubelet/cm/helpers_linux.go).
const (
	MinShares     = 2
	MaxShares     = 262144
	SharesPerCPU  = 1024
	QuotaPeriod   = 100000 // µs
	MinQuotaValue = 1000   // µs
)

// MilliCPUToShares is cpu.shares for a request of milli thousandths of a
// CPU: at least MinShares, at most MaxShares.
func MilliCPUToShares(milli int64) uint64 {
	if milli <= 0 {
		return MinShares
	}
	shares := milli * SharesPerCPU / 1000
	if shares < MinShares {
		return MinShares
	}
	if shares > MaxShares {
		return MaxShares
	}
	return uint64(shares)
}

// MilliCPUToQuota is the CFS quota (µs per period) for a limit of milli
// thousandths of a CPU: 0 (no quota) for no limit, else at least
// MinQuotaValue.
func MilliCPUToQuota(milli int64, period uint64) int64 {
	if milli <= 0 {
		return 0
	}
	quota := milli * int64(period) / 1000
	if quota < MinQuotaValue {
		return MinQuotaValue
	}
	return quota
}

// SharesToWeight converts cpu.shares to cgroup v2's cpu.weight, as runc
// does: [2, 262144] onto [1, 10000].
func SharesToWeight(shares uint64) uint64 {
	if shares == 0 {
		return 0
	}
	if shares < MinShares {
		shares = MinShares
	}
	return 1 + (shares-2)*9999/262142
}

// amounts is one container's cpu (milli) and memory (bytes) requests and
// limits; a limit of 0 is none.
type amounts struct {
	cpuReq, cpuLim, memLim int64
	hasCPULim, hasMemLim   bool
}

func containerAmounts(c *api.Container) amounts {
	var a amounts
	req, lim := c.Resources.Requests, c.Resources.Limits
	if q, ok := lim[api.ResourceCPU]; ok {
		if v, ok := q.MilliValue(); ok && v > 0 {
			a.cpuLim, a.hasCPULim = v, true
		}
	}
	if q, ok := lim[api.ResourceMemory]; ok {
		if v, ok := q.Value(); ok && v > 0 {
			a.memLim, a.hasMemLim = v, true
		}
	}
	if q, ok := req[api.ResourceCPU]; ok {
		if v, ok := q.MilliValue(); ok {
			a.cpuReq = v
		}
	} else if a.hasCPULim {
		a.cpuReq = a.cpuLim // defaulting's request
	}
	return a
}

// ContainerResources is what a container's own cgroup gets: shares from
// its CPU request, quota from its CPU limit, the memory limit.
func ContainerResources(c *api.Container) runtime.Resources {
	a := containerAmounts(c)
	r := runtime.Resources{CPUShares: MilliCPUToShares(a.cpuReq)}
	if a.hasCPULim {
		r.CPUQuota, r.CPUPeriod = MilliCPUToQuota(a.cpuLim, QuotaPeriod), QuotaPeriod
	}
	if a.hasMemLim {
		r.MemoryLimit = a.memLim
	}
	return r
}

// PodResources is what the pod's cgroup gets (the kubelet's
// ResourceConfigForPod): the sums over its containers, an init container
// counting instead when it alone asks for more; the CPU quota only when
// every container has a CPU limit, the memory limit only when every one
// has a memory limit; a BestEffort pod only MinShares.
func PodResources(spec *api.PodSpec, qos string) runtime.Resources {
	var sum amounts
	allCPU, allMem := true, true
	for i := range spec.Containers {
		a := containerAmounts(&spec.Containers[i])
		sum.cpuReq += a.cpuReq
		sum.cpuLim += a.cpuLim
		sum.memLim += a.memLim
		allCPU = allCPU && a.hasCPULim
		allMem = allMem && a.hasMemLim
	}
	for i := range spec.InitContainers {
		a := containerAmounts(&spec.InitContainers[i])
		sum.cpuReq = max(sum.cpuReq, a.cpuReq)
		if a.hasCPULim {
			sum.cpuLim = max(sum.cpuLim, a.cpuLim)
		} else {
			allCPU = false
		}
		if a.hasMemLim {
			sum.memLim = max(sum.memLim, a.memLim)
		} else {
			allMem = false
		}
	}
	if qos == api.PodQOSBestEffort {
		return runtime.Resources{CPUShares: MinShares}
	}
	r := runtime.Resources{CPUShares: MilliCPUToShares(sum.cpuReq)}
	if allCPU && len(spec.Containers) > 0 {
		r.CPUQuota, r.CPUPeriod = MilliCPUToQuota(sum.cpuLim, QuotaPeriod), QuotaPeriod
	}
	if allMem && len(spec.Containers) > 0 {
		r.MemoryLimit = sum.memLim
	}
	return r
}

// PodParent is the pod's cgroup path, relative to each hierarchy's root,
// under root (the kubelet's --cgroup-root, "/" by default).
func PodParent(root, qos, podUID string) string {
	p := joinPath(root, "kubepods")
	switch qos {
	case api.PodQOSBurstable:
		p = joinPath(p, "burstable")
	case api.PodQOSBestEffort:
		p = joinPath(p, "besteffort")
	}
	return joinPath(p, "pod"+podUID)
}
