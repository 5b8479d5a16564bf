package cgroups

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// realFS is this node's cgroup file systems, or a skip saying why not.
func realFS(t *testing.T) *FS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes cgroups in the node's hierarchies")
	}
	fs, err := Detect()
	if err != nil {
		t.Skipf("no cgroup file system: %v", err)
	}
	return fs
}

// TestRealCgroups makes a pod and a container cgroup under a root of its
// own in the node's real hierarchies, checks what the kernel shows in
// the control files, moves a process in, reads its counters, and
// removes the tree once the process is gone.
func TestRealCgroups(t *testing.T) {
	fs := realFS(t)
	root := fmt.Sprintf("/skiff-test-%d", os.Getpid())
	t.Cleanup(func() { _ = fs.Remove(root) })
	pod := root + "/kubepods/burstable/podu"
	ctr := pod + "/c1"
	if err := fs.Ensure(pod, runtime.Resources{CPUShares: 512}); err != nil {
		t.Fatal(err)
	}
	want := runtime.Resources{CPUShares: 256, CPUQuota: 20000, CPUPeriod: QuotaPeriod, MemoryLimit: 32 << 20}
	if err := fs.Ensure(ctr, want); err != nil {
		t.Fatal(err)
	}
	dirs := fs.dirs(ctr)
	var checks map[string]string
	if fs.Version() == V1 {
		checks = map[string]string{
			filepath.Join(dirs["cpu"], "cpu.shares"):               "256",
			filepath.Join(dirs["cpu"], "cpu.cfs_quota_us"):         "20000",
			filepath.Join(dirs["cpu"], "cpu.cfs_period_us"):        "100000",
			filepath.Join(dirs["memory"], "memory.limit_in_bytes"): strconv.Itoa(32 << 20),
		}
	} else {
		checks = map[string]string{
			filepath.Join(dirs[""], "cpu.weight"): "10",
			filepath.Join(dirs[""], "cpu.max"):    "20000 100000",
			filepath.Join(dirs[""], "memory.max"): strconv.Itoa(32 << 20),
		}
	}
	for f, v := range checks {
		if got := readFile(t, f); got != v {
			t.Errorf("%s = %q, want %q", f, got, v)
		}
	}

	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	kill := func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			killed = true
		}
	}
	t.Cleanup(kill)
	if err := fs.JoinProcess(ctr, cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(self), ctr) {
		t.Fatalf("the process is not in %s:\n%s", ctr, self)
	}
	// A busy loop under a 20% quota is throttled within a few periods.
	deadline := time.Now().Add(10 * time.Second)
	var s Stats
	for {
		if s, err = fs.Stats(ctr); err != nil {
			t.Fatal(err)
		}
		if s.ThrottledPeriods > 0 && s.CPUUsageNanos > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// (No memory figure: on v1 a moved process leaves its charges behind.)
	if s.ThrottledPeriods == 0 || s.CPUUsageNanos == 0 {
		t.Errorf("counters: %+v", s)
	}
	if err := fs.Remove(root); err == nil {
		t.Error("removed a cgroup that holds a process")
	}
	kill()
	if err := fs.Remove(root); err != nil {
		t.Fatal(err)
	}
	for _, d := range fs.Dirs(root) {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left: %v", d, err)
		}
	}
}
