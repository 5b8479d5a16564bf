package containerd

import (
	"context"
	"fmt"

	v1 "github.com/containerd/cgroups/v3/cgroup1/stats"
	ctrd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/typeurl/v2"

	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/stats"
)

// ContainerStats reads a running container's cgroup metrics through its
// task (task.Metrics: the shim reads the container's cgroup): cpuacct
// usage, and the memory usage minus total_inactive_file as the working
// set, as cAdvisor computes it. A task that is not running has none
// (runtime.ErrNotFound). Only cgroup v1 metrics are decoded (the
// hierarchy this agent's machines have); others are an error.
func (r *Runtime) ContainerStats(ctx context.Context, id string) (stats.Usage, error) {
	ctx = r.ctx(ctx)
	ctr, _, err := r.load(ctx, id)
	if err != nil {
		return stats.Usage{}, err
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		return stats.Usage{}, fmt.Errorf("runtime/containerd: %s: task: %w", id, err)
	}
	ts, err := task.Status(ctx)
	if err != nil {
		return stats.Usage{}, fmt.Errorf("runtime/containerd: %s: task status: %w", id, err)
	}
	if ts.Status != ctrd.Running {
		return stats.Usage{}, fmt.Errorf("runtime/containerd: %s is %s: %w", id, ts.Status, runtime.ErrNotFound)
	}
	m, err := task.Metrics(ctx)
	if err != nil {
		return stats.Usage{}, fmt.Errorf("runtime/containerd: %s: metrics: %w", id, err)
	}
	return usageOf(m.Data)
}

// usageOf decodes the metrics Any of a task.
func usageOf(data typeurl.Any) (stats.Usage, error) {
	if data == nil {
		return stats.Usage{}, fmt.Errorf("runtime/containerd: metrics: no data")
	}
	v, err := typeurl.UnmarshalAny(data)
	if err != nil {
		return stats.Usage{}, fmt.Errorf("runtime/containerd: metrics: %w", err)
	}
	m, ok := v.(*v1.Metrics)
	if !ok {
		return stats.Usage{}, fmt.Errorf("runtime/containerd: metrics of type %T (not cgroup v1)", v)
	}
	var u stats.Usage
	if m.CPU != nil && m.CPU.Usage != nil {
		u.CPUNanoseconds = m.CPU.Usage.Total
	}
	if m.Memory != nil && m.Memory.Usage != nil {
		u.MemoryWorkingSetBytes = stats.WorkingSet(m.Memory.Usage.Usage, m.Memory.TotalInactiveFile)
	}
	return u, nil
}
