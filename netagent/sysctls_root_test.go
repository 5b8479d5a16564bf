package netagent_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// TestPodSysctls: on a node allowing net.core.somaxconn besides the safe
// set, a pod's net.* sysctls are set in its own network namespace (an
// exec reads them there; the node's are untouched); a pod asking for an
// unsafe sysctl the node does not allow is refused as the kubelet refuses
// it (Failed, reason SysctlForbidden, an Event, nothing run); an IPC
// sysctl on the process runtime, which has no IPC namespace per pod,
// leaves the container in CreateContainerConfigError.
func TestPodSysctls(t *testing.T) {
	requireNode(t)
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	n := newNodeWith(t, s, "node-sysctl", func(n *node) { n.cfg.AllowedUnsafeSysctls = []string{"net.core.somaxconn"} })
	ctx := context.Background()
	nodeRange, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name string, sysctls ...api.Sysctl) {
		t.Helper()
		p := &api.Pod{
			ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
			Spec: api.PodSpec{SecurityContext: &api.PodSecurityContext{Sysctls: sysctls},
				Containers: []api.Container{{Name: "c", Image: "skiff", Command: []string{"sleep", "300"}}}},
		}
		if err := admin.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
	}
	mk("tuned", api.Sysctl{Name: "net.ipv4.ip_local_port_range", Value: "40000 50000"}, api.Sysctl{Name: "net/core/somaxconn", Value: "777"})
	mk("unsafe", api.Sysctl{Name: "net.ipv4.tcp_syncookies", Value: "1"}, api.Sysctl{Name: "kernel.msgmax", Value: "65536"})
	mk("ipc", api.Sysctl{Name: "kernel.shm_rmid_forced", Value: "1"})

	p := waitPod(t, admin, "tuned", 30*time.Second, "Running", func(p *api.Pod) bool {
		return p.Status.Phase == api.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].ContainerID != ""
	})
	id := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "process://")
	code, out, err := n.rt.Exec(ctx, id, []string{"cat", "/proc/sys/net/ipv4/ip_local_port_range", "/proc/sys/net/core/somaxconn"}, 10*time.Second)
	if err != nil || code != 0 || strings.Join(strings.Fields(string(out)), " ") != "40000 50000 777" {
		t.Errorf("in the pod: %d %v %q", code, err, out)
	}
	if now, _ := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); string(now) != string(nodeRange) {
		t.Errorf("the node's port range changed: %q -> %q", nodeRange, now)
	}

	u := waitPod(t, admin, "unsafe", 30*time.Second, "refused", func(p *api.Pod) bool { return p.Status.Phase == api.PodFailed })
	if u.Status.Reason != "SysctlForbidden" || u.Status.Message != `Pod forbidden sysctl: "kernel.msgmax" not allowlisted` || len(u.Status.ContainerStatuses) != 0 {
		t.Errorf("refused pod status: %+v", u.Status)
	}
	eventually(t, 10*time.Second, "the SysctlForbidden event", func() (bool, error) {
		var evs api.EventList
		if err := admin.List(ctx, api.Lookup(api.Resources(), "v1", "events"), "default", client.ListOptions{}, &evs); err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.InvolvedObject.Name == "unsafe" && e.Reason == "SysctlForbidden" && e.Type == api.EventTypeWarning {
				return true, nil
			}
		}
		return false, nil
	})

	waitPod(t, admin, "ipc", 30*time.Second, "CreateContainerConfigError", func(p *api.Pod) bool {
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Waiting == nil {
			return false
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w.Reason == "CreateContainerConfigError" && strings.Contains(w.Message, "kernel.shm_rmid_forced")
	})
	for _, name := range []string{"tuned", "unsafe", "ipc"} {
		// A graceful delete: the agent removes what the pod had on the
		// node, then the pod.
		if err := admin.Delete(ctx, resPods, "default", name, client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"tuned", "unsafe", "ipc"} {
		eventually(t, 30*time.Second, name+" gone", func() (bool, error) {
			err := admin.Get(ctx, resPods, "default", name, &api.Pod{})
			return client.IsNotFound(err), nil
		})
	}
}
