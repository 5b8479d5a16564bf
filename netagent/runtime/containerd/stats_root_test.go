package containerd

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// TestContainerStatsFromCgroup: a container that burns a core reports a
// growing cpuacct usage and a working set from its cgroup, through the
// task's metrics.
func TestContainerStatsFromCgroup(t *testing.T) {
	e := requireContainerd(t)
	rt := newTestRuntime(t, e)
	pod := netnstest.New(t, "pod")
	st := start(t, rt, newSandbox(t, "burn", pod.Path), runtime.ContainerSpec{Name: "main", Image: testImage, Args: []string{"burn"}})
	waitLogs(t, rt, st.ID, "ready")
	ctx := context.Background()
	first, err := rt.ContainerStats(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	second, err := rt.ContainerStats(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if second.CPUNanoseconds < first.CPUNanoseconds || second.CPUNanoseconds-first.CPUNanoseconds < 300_000_000 {
		t.Errorf("cpu %d -> %d in 1.5 s of a busy loop", first.CPUNanoseconds, second.CPUNanoseconds)
	}
	if second.MemoryWorkingSetBytes == 0 || second.MemoryWorkingSetBytes > 1<<30 {
		t.Errorf("working set %d", second.MemoryWorkingSetBytes)
	}
	if err := rt.Stop(ctx, st.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.ContainerStats(ctx, st.ID); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("stats of a stopped container: %v, want ErrNotFound", err)
	}
}
