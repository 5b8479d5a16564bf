package benchfloor_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/internal/benchfloor"
	"github.com/skiff-dev/skiff/internal/podtest"
	"github.com/skiff-dev/skiff/netagent/netns"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
)

// The test binary is the pods' workload: `<test binary> netexec ...`.
func TestMain(m *testing.M) { podtest.Main(m, podtest.Options{ShutdownTimeout: time.Second}) }

// TestRun starts three pods in a test-made node namespace: each answers,
// the latencies are sorted and bounded by All, and Close removes every
// pod's namespace file and process.
func TestRun(t *testing.T) {
	netnstest.RequireCNIPlugins(t)
	node := netnstest.NewNode(t)
	dir := t.TempDir()
	f, res, err := benchfloor.Run(context.Background(), benchfloor.Options{
		NodeNetNS: node.Path, DataDir: dir, Pods: 3,
		Command: []string{os.Args[0], "netexec", "--http-port=8080", "--udp-port=8081"}, Port: 8080,
		Timeout: time.Minute,
	})
	if err != nil {
		_ = f.Close()
		t.Fatal(err)
	}
	if len(res.Ready) != 3 {
		t.Fatalf("Ready has %d entries, want 3", len(res.Ready))
	}
	for i, d := range res.Ready {
		if d <= 0 || d > res.All || (i > 0 && d < res.Ready[i-1]) {
			t.Errorf("Ready = %v (All %v): not positive, sorted and within All", res.Ready, res.All)
		}
	}
	if len(res.ByPod) != 3 || !slices.Equal(slices.Sorted(slices.Values(res.ByPod)), res.Ready) {
		t.Errorf("ByPod = %v: not the pods' times of Ready %v", res.ByPod, res.Ready)
	}
	if p := res.Percentile(99); p != res.Ready[2] {
		t.Errorf("Percentile(99) = %v, want the last, %v", p, res.Ready[2])
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "netns", "skiff-*"))
	if len(left) != 0 {
		t.Errorf("namespace files left after Close: %v", left)
	}
}

// TestRunStart: with Options.Start the floor starts each pod's workload
// through it (here netexec started from the namespace path it is given) and
// Close calls every stop it returned.
func TestRunStart(t *testing.T) {
	netnstest.RequireCNIPlugins(t)
	node := netnstest.NewNode(t)
	var started, stopped atomic.Int32
	start := func(_ context.Context, i int, path string) (func() error, error) {
		if i < 0 || i >= 2 {
			t.Errorf("Start called for pod %d of 2", i)
		}
		cmd := exec.Command(os.Args[0], "netexec", "--http-port=8080", "--udp-port=-1")
		if err := netns.Do(path, cmd.Start); err != nil {
			return nil, err
		}
		started.Add(1)
		return func() error {
			stopped.Add(1)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil
		}, nil
	}
	f, res, err := benchfloor.Run(context.Background(), benchfloor.Options{
		NodeNetNS: node.Path, DataDir: t.TempDir(), Pods: 2, Start: start, Port: 8080, Timeout: time.Minute,
	})
	if err != nil {
		_ = f.Close()
		t.Fatal(err)
	}
	if len(res.Ready) != 2 || started.Load() != 2 {
		t.Fatalf("Ready %v, %d starts: want 2 of each", res.Ready, started.Load())
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if stopped.Load() != 2 {
		t.Errorf("Close called %d stops, want 2", stopped.Load())
	}
}

// TestRunRefusesMissingOptions: a run without a workload fails before it
// touches anything.
func TestRunRefusesMissingOptions(t *testing.T) {
	f, _, err := benchfloor.Run(context.Background(), benchfloor.Options{Pods: 1})
	if err == nil {
		t.Fatal("Run without NodeNetNS, DataDir, Command and Port succeeded")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
