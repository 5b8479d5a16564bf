package benchfloor_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/internal/benchfloor"
	"github.com/skiff-dev/skiff/internal/podtest"
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
