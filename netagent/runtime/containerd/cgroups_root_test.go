package containerd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/cgroups"
	"github.com/skiff-dev/skiff/netagent/cgroups/cgroupstest"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

// TestPodCgroupsContainerd: with a pod cgroup, runc puts the container in
// a cgroup of its own under it with the spec's resources (read back from
// the kernel's files) and its IPC sysctls in its own IPC namespace, and a
// container that touches more memory than its
// limit is reported OOMKilled with exit code 137; Remove leaves no
// cgroup behind.
func TestPodCgroupsContainerd(t *testing.T) {
	e := requireContainerd(t)
	fs, root := cgroupstest.Root(t, "ctrd-test")
	pod := root + "/kubepods/burstable/podu"
	if err := fs.Ensure(pod, runtime.Resources{CPUShares: 512}); err != nil {
		t.Fatal(err)
	}
	rt, err := New(context.Background(), Config{Socket: e.daemon.Socket, LogPollInterval: 20 * time.Millisecond, LogRoot: t.TempDir(), LoggerBinary: e.skiff, Cgroups: fs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	ns := netnstest.New(t, "pod")
	sb := newSandbox(t, "cg", ns.Path)
	sb.CgroupParent = pod

	res := runtime.Resources{CPUShares: 256, CPUQuota: 50000, CPUPeriod: 100000, MemoryLimit: 64 << 20}
	hostShm, err := os.ReadFile("/proc/sys/kernel/shm_rmid_forced")
	if err != nil {
		t.Fatal(err)
	}
	flip := map[string]string{"0\n": "1", "1\n": "0"}[string(hostShm)]
	st := start(t, rt, sb, runtime.ContainerSpec{Name: "c", Image: testImage, Args: []string{"alloc", "8"}, Resources: res,
		Sysctls: map[string]string{"kernel.shm_rmid_forced": flip}})
	waitState(t, rt, st.ID, runtime.StateRunning)
	cg := pod + "/" + st.ID
	run, err := rt.Status(t.Context(), st.ID)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", run.Pid))
	if err != nil || !strings.Contains(string(self), ":"+cg+"\n") {
		t.Fatalf("container not in %s (%v):\n%s", cg, err, self)
	}
	// The IPC sysctl is the container's own (runc sets it in its IPC
	// namespace); the node's stays.
	if _, out, err := rt.Exec(t.Context(), st.ID, []string{"/workload", "cat", "/proc/sys/kernel/shm_rmid_forced"}, 10*time.Second); err != nil ||
		!strings.Contains(string(out), "shm_rmid_forced="+flip) {
		t.Errorf("sysctl in the container: %v %q, want %s", err, out, flip)
	}
	if now, _ := os.ReadFile("/proc/sys/kernel/shm_rmid_forced"); string(now) != string(hostShm) {
		t.Errorf("the node's kernel.shm_rmid_forced changed: %q -> %q", hostShm, now)
	}
	if fs.Version() == cgroups.V1 {
		want := map[string]string{"cpu.shares": "256", "cpu.cfs_quota_us": "50000", "memory.limit_in_bytes": strconv.Itoa(64 << 20)}
		for _, d := range fs.Dirs(cg) {
			for f, v := range want {
				if b, err := os.ReadFile(filepath.Join(d, f)); err == nil {
					if got := strings.TrimSpace(string(b)); got != v {
						t.Errorf("%s/%s = %s, want %s", d, f, got, v)
					}
					delete(want, f)
				}
			}
		}
		if len(want) > 0 {
			t.Errorf("not found: %v", want)
		}
	}

	hog := start(t, rt, sb, runtime.ContainerSpec{Name: "hog", Image: testImage, Args: []string{"alloc", "256"},
		Resources: runtime.Resources{CPUShares: 2, MemoryLimit: 32 << 20}})
	got := waitState(t, rt, hog.ID, runtime.StateExited)
	if got.ExitCode != 137 || got.Reason != "OOMKilled" {
		t.Errorf("hog: exit %d reason %q, want 137 OOMKilled", got.ExitCode, got.Reason)
	}
	if err := rt.Stop(t.Context(), st.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	if fin := waitState(t, rt, st.ID, runtime.StateExited); fin.Reason != "" {
		t.Errorf("a stopped container has reason %q", fin.Reason)
	}
	for _, id := range []string{st.ID, hog.ID} {
		if err := rt.Remove(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		for _, d := range fs.Dirs(pod + "/" + id) {
			if _, err := os.Stat(d); !os.IsNotExist(err) {
				t.Errorf("%s left after Remove: %v", d, err)
			}
		}
	}
}
