package netagent_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent/cgroups"
	"github.com/skiff-dev/skiff/netagent/cgroups/cgroupstest"
)

// TestPodCgroupsOnNode: on a node with cgroups (under a cgroup root of the
// test's own), a pod gets status.qosClass and a cgroup where the kubelet
// puts it with its summed limits; a container that touches more memory
// than its limit is OOM-killed by the kernel, reported as the kubelet
// reports it (lastState terminated, reason OOMKilled, exit code 137) and
// restarted by the restart policy; deleting the pod removes its cgroup.
func TestPodCgroupsOnNode(t *testing.T) {
	requireNode(t)
	fs, root := cgroupstest.Root(t, "node-test")
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	newNodeWith(t, s, "node-cg", func(n *node) { n.cg, n.cfg.CgroupRoot = fs, root })

	pod := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: "oom", Namespace: "default"},
		Spec: api.PodSpec{Containers: []api.Container{{
			Name: "hog", Image: "skiff", Command: []string{"sh", "-c", "sleep 1; dd if=/dev/zero of=/dev/null bs=64M count=4"},
			Resources: api.ResourceRequirements{
				Requests: api.ResourceList{"cpu": "100m", "memory": "16Mi"},
				Limits:   api.ResourceList{"cpu": "200m", "memory": "16Mi"},
			},
		}}},
	}
	if err := admin.Create(context.Background(), resPods, "default", pod); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, admin, "oom", 60*time.Second, "an OOMKilled restart", func(p *api.Pod) bool {
		if len(p.Status.ContainerStatuses) == 0 {
			return false
		}
		cs := p.Status.ContainerStatuses[0]
		last := cs.LastState.Terminated
		return cs.RestartCount >= 1 && last != nil && last.Reason == "OOMKilled" && last.ExitCode == 137
	})
	if p.Status.QOSClass != api.PodQOSBurstable {
		t.Errorf("qosClass %q, want Burstable", p.Status.QOSClass)
	}
	podCg := cgroups.PodParent(root, api.PodQOSBurstable, string(p.UID))
	found := 0
	for _, d := range fs.Dirs(podCg) {
		for f, want := range map[string]string{"memory.limit_in_bytes": strconv.Itoa(16 << 20), "cpu.cfs_quota_us": "20000", "cpu.shares": "102"} {
			if b, err := os.ReadFile(filepath.Join(d, f)); err == nil {
				found++
				if got := strings.TrimSpace(string(b)); got != want {
					t.Errorf("%s/%s = %s, want %s", d, f, got, want)
				}
			}
		}
	}
	if fs.Version() == cgroups.V1 && found != 3 {
		t.Errorf("pod cgroup %s: found %d of its 3 files", podCg, found)
	}
	if err := admin.Delete(context.Background(), resPods, "default", "oom", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the pod cgroup to go", func() (bool, error) {
		for _, d := range fs.Dirs(podCg) {
			if _, err := os.Stat(d); err == nil {
				return false, nil
			}
		}
		return true, nil
	})
}
