package process

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/stats"
)

// TestContainerStats: a container whose shell runs a child that burns
// CPU (in the container's process group) and a sleeping child reports
// the CPU of the whole tree, growing, and a working set; a container
// that exited has none.
func TestContainerStats(t *testing.T) {
	requireRoot(t)
	_, podNS := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	sb := newSandbox(t, "burn", podNS, "", "")
	// The burner runs at most 20 s: the machine is shared.
	st := start(t, rt, sb, runtime.ContainerSpec{Name: "sh", Command: []string{"sh", "-c"},
		Args: []string{"sleep 60 & (end=$(($(date +%s)+20)); while [ $(date +%s) -lt $end ]; do :; done) & wait"}})
	ctx := context.Background()
	// Right after Start the leader may still be inside execve (no pages
	// mapped yet, rss 0 in /proc/<pid>/stat): read again, past the
	// cached snapshot, until it has some.
	var first stats.Usage
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(snapshotTTL + 100*time.Millisecond) {
		var err error
		if first, err = rt.ContainerStats(ctx, st.ID); err != nil {
			t.Fatal(err)
		}
		if first.MemoryWorkingSetBytes > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("working set still 0 after 5 s")
		}
	}
	time.Sleep(1500 * time.Millisecond) // past snapshotTTL
	second, err := rt.ContainerStats(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	// A busy child in 1.5 s: well over 0.3 s of CPU even on a loaded machine.
	if d := second.CPUNanoseconds - first.CPUNanoseconds; second.CPUNanoseconds < first.CPUNanoseconds || d < 300_000_000 {
		t.Errorf("cpu %d -> %d: the tree's burner is not counted", first.CPUNanoseconds, second.CPUNanoseconds)
	}
	if err := rt.Stop(ctx, st.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.ContainerStats(ctx, st.ID); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("stats of a stopped container: %v, want ErrNotFound", err)
	}
	if _, err := rt.ContainerStats(ctx, "nope"); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("stats of no container: %v", err)
	}
}
