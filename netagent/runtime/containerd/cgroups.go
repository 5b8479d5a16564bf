package containerd

import (
	"context"
	"path"

	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/skiff-dev/skiff/netagent/cgroups"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// CgroupReader reads a cgroup's counters (*cgroups.FS).
type CgroupReader interface {
	Stats(cg string) (cgroups.Stats, error)
}

// containerCgroup is the cgroupsPath runc gets for container id: a
// cgroup of its own under the pod's ("/kubepods/burstable/pod<uid>/<id>",
// as the kubelet's cgroupfs driver names it), "" for a pod without one.
func containerCgroup(sb runtime.Sandbox, id string) string {
	if sb.CgroupParent == "" {
		return ""
	}
	return path.Join(sb.CgroupParent, id)
}

// withResources writes r into the spec's linux.resources: runc sets
// cpu.shares (cpu.weight on v2, converted by runc), the CFS quota and
// period, and the memory limit. A zero field is left unset.
func withResources(r runtime.Resources) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Linux == nil {
			s.Linux = &specs.Linux{}
		}
		if s.Linux.Resources == nil {
			s.Linux.Resources = &specs.LinuxResources{}
		}
		res := s.Linux.Resources
		if r.CPUShares > 0 || r.CPUQuota > 0 {
			if res.CPU == nil {
				res.CPU = &specs.LinuxCPU{}
			}
			if r.CPUShares > 0 {
				res.CPU.Shares = &r.CPUShares
			}
			if r.CPUQuota > 0 {
				quota, period := r.CPUQuota, r.CPUPeriod
				res.CPU.Quota, res.CPU.Period = &quota, &period
			}
		}
		if r.MemoryLimit > 0 {
			if res.Memory == nil {
				res.Memory = &specs.LinuxMemory{}
			}
			limit := r.MemoryLimit
			res.Memory.Limit = &limit
		}
		return nil
	}
}

// withSysctls writes the container's IPC sysctls into the spec; runc
// sets them in the container's own IPC namespace.
func withSysctls(sysctls map[string]string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if len(sysctls) == 0 {
			return nil
		}
		if s.Linux == nil {
			s.Linux = &specs.Linux{}
		}
		if s.Linux.Sysctl == nil {
			s.Linux.Sysctl = map[string]string{}
		}
		for k, v := range sysctls {
			s.Linux.Sysctl[k] = v
		}
		return nil
	}
}

// oomKilled says whether the OOM killer ended a process in the stopped
// container's cgroup cg (runc leaves it until the task is deleted).
func (r *Runtime) oomKilled(cg string) bool {
	if cg == "" || r.cfg.Cgroups == nil {
		return false
	}
	s, err := r.cfg.Cgroups.Stats(cg)
	return err == nil && s.OOMKills > 0
}
