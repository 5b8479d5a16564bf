package process

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/cgroups"
	"github.com/skiff-dev/skiff/netagent/cgroups/cgroupstest"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// cgroupRuntime is a runtime with the node's real cgroups, and a pod
// cgroup under a root of the test's own, removed at cleanup.
func cgroupRuntime(t *testing.T) (*Runtime, *cgroups.FS, string) {
	t.Helper()
	requireRoot(t)
	fs, root := cgroupstest.Root(t, "proc-test")
	pod := root + "/kubepods/burstable/podu"
	if err := fs.Ensure(pod, runtime.Resources{CPUShares: 512}); err != nil {
		t.Fatal(err)
	}
	rt, err := New(Config{StateDir: t.TempDir(), LogPollInterval: 20 * time.Millisecond, Cgroups: fs})
	if err != nil {
		t.Fatal(err)
	}
	return rt, fs, pod
}

// TestOOMKilledReason: a container that touches more memory than its
// limit is killed by the kernel's OOM killer inside its own cgroup and
// reported as the kubelet does, exit code 137 with reason OOMKilled,
// while a container that exits by itself has no reason.
func TestOOMKilledReason(t *testing.T) {
	rt, _, pod := cgroupRuntime(t)
	_, ns := newNetNS(t)
	sb := newSandbox(t, "oom", ns, "", "")
	sb.CgroupParent = pod
	// dd's 64 MiB buffer is filled from /dev/zero: under a 16 MiB
	// limit the kernel kills it while it faults the pages in.
	st := start(t, rt, sb, runtime.ContainerSpec{Name: "hog", Command: []string{"dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=4"},
		Resources: runtime.Resources{MemoryLimit: 16 << 20}})
	got := waitExited(t, rt, st.ID)
	if got.ExitCode != 137 || got.Reason != "OOMKilled" {
		t.Errorf("exit %d reason %q, want 137 OOMKilled", got.ExitCode, got.Reason)
	}
	ok := start(t, rt, sb, runtime.ContainerSpec{Name: "fine", Command: []string{"sh", "-c", "exit 3"}, Resources: runtime.Resources{MemoryLimit: 16 << 20}})
	if got := waitExited(t, rt, ok.ID); got.ExitCode != 3 || got.Reason != "" {
		t.Errorf("exit %d reason %q, want 3 and none", got.ExitCode, got.Reason)
	}
	// The reason survives an agent restart (it is in the state file).
	rt2, err := New(Config{StateDir: rt.cfg.StateDir, Cgroups: rt.cfg.Cgroups})
	if err != nil {
		t.Fatal(err)
	}
	if again, err := rt2.Status(t.Context(), st.ID); err != nil || again.Reason != "OOMKilled" || again.ExitCode != 137 {
		t.Errorf("after a restart: %+v, %v", again, err)
	}
	for _, id := range []string{st.ID, ok.ID} {
		if err := rt.Remove(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
}

// TestContainerCgroup: a container's process starts in a cgroup of its
// own under the pod's with its Resources written, an exec joins the same
// cgroup, ContainerStats reads the cgroup's counters, a process that left
// the container's process group is killed by Remove, and Remove leaves
// no cgroup behind.
func TestContainerCgroup(t *testing.T) {
	rt, fs, pod := cgroupRuntime(t)
	_, ns := newNetNS(t)
	sb := newSandbox(t, "cg", ns, "", "")
	sb.CgroupParent = pod
	res := runtime.Resources{CPUShares: 256, CPUQuota: 50000, CPUPeriod: 100000, MemoryLimit: 64 << 20}
	st := start(t, rt, sb, runtime.ContainerSpec{Name: "c", Command: []string{"sh", "-c", "setsid sleep 300 & i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo busy; exec sleep 300"},
		Resources: res})
	waitLog(t, st.LogPath, "busy")
	cg := pod + "/" + st.ID
	self := readFile(t, fmt.Sprintf("/proc/%d/cgroup", st.Pid))
	if !strings.Contains(self, ":"+cg+"\n") {
		t.Fatalf("container process not in %s:\n%s", cg, self)
	}
	if fs.Version() == cgroups.V1 {
		for f, want := range map[string]string{"cpu/cpu.shares": "256", "cpu/cpu.cfs_quota_us": "50000", "memory/memory.limit_in_bytes": strconv.Itoa(64 << 20)} {
			ctl, file, _ := strings.Cut(f, "/")
			var dir string
			for _, d := range fs.Dirs(cg) {
				if strings.Contains(d, "/"+ctl+"/") || strings.Contains(d, "/"+ctl+",") || strings.Contains(d, ","+ctl+"/") {
					dir = d
				}
			}
			if got := strings.TrimSpace(readFile(t, filepath.Join(dir, file))); got != want {
				t.Errorf("%s = %s, want %s", f, got, want)
			}
		}
	}
	code, out, err := rt.Exec(t.Context(), st.ID, []string{"cat", "/proc/self/cgroup"}, 10*time.Second)
	if err != nil || code != 0 || !strings.Contains(string(out), ":"+cg+"\n") {
		t.Errorf("exec not in %s: %d %v:\n%s", cg, code, err, out)
	}
	u, err := rt.ContainerStats(t.Context(), st.ID)
	if err != nil || u.CPUNanoseconds == 0 {
		t.Errorf("stats %+v, %v", u, err)
	}
	pids, err := fs.Pids(cg)
	if err != nil || len(pids) < 2 {
		t.Fatalf("pids in the cgroup: %v, %v", pids, err)
	}
	if err := rt.Stop(t.Context(), st.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := rt.Remove(t.Context(), st.ID); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/cgroup", pid)); err == nil {
			if c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid)); strings.Contains(string(c), cg) {
				t.Errorf("pid %d left in the removed container's cgroup", pid)
			}
		}
	}
	for _, d := range fs.Dirs(cg) {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left: %v", d, err)
		}
	}
}
