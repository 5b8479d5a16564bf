package process

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/stats"
)

// snapshotTTL is how long one read of /proc serves ContainerStats: a
// scrape asks for every container within a moment, and one walk of /proc
// answers them all.
const snapshotTTL = time.Second

// procSnapshots caches the last read of /proc.
type procSnapshots struct {
	mu   sync.Mutex
	snap *stats.Snapshot
	at   time.Time
}

func (r *Runtime) procSnapshot() (*stats.Snapshot, error) {
	c := &r.snaps
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap != nil && time.Since(c.at) < snapshotTTL {
		return c.snap, nil
	}
	s, err := stats.Proc{}.Snapshot()
	if err != nil {
		return nil, err
	}
	c.snap, c.at = s, time.Now()
	return s, nil
}

// ContainerStats reads the cumulative CPU time and working set of a
// running container: from its cgroup when it has one (Config.Cgroups),
// else from its process tree in /proc (stats.Proc.Tree: the container's
// process group and the descendants of its process), one read of /proc
// serving the calls of a second (snapshotTTL).
func (r *Runtime) ContainerStats(ctx context.Context, id string) (stats.Usage, error) {
	c, st, err := r.lookup(id)
	if err != nil {
		return stats.Usage{}, err
	}
	if st.State != runtime.StateRunning || st.Pid <= 0 {
		return stats.Usage{}, fmt.Errorf("runtime/process: %s is not running: %w", id, runtime.ErrNotFound)
	}
	if cg := c.rec.Cgroup; cg != "" && r.cfg.Cgroups != nil {
		s, err := r.cfg.Cgroups.Stats(cg)
		if err != nil {
			return stats.Usage{}, fmt.Errorf("runtime/process: %s: %w", id, err)
		}
		return stats.Usage{CPUNanoseconds: s.CPUUsageNanos, MemoryWorkingSetBytes: s.WorkingSet}, nil
	}
	snap, err := r.procSnapshot()
	if err != nil {
		return stats.Usage{}, fmt.Errorf("runtime/process: %s: %w", id, err)
	}
	u, err := snap.Tree(st.Pid)
	if err != nil {
		return stats.Usage{}, fmt.Errorf("runtime/process: %s: %w", id, err)
	}
	return u, nil
}
