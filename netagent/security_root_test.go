package netagent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// TestSecurityContextOnProcessRuntime: through a real agent on the
// process runtime, a pod with runAsNonRoot and no runAsUser waits in
// CreateContainerConfigError with the kubelet's message and a Warning
// Event; a pod with runAsUser and fsGroup runs as that user and what it
// writes in its emptyDir (group fsGroup, setgid) belongs to the group; a
// RuntimeDefault seccomp profile, which the process runtime cannot load,
// is refused the same way.
func TestSecurityContextOnProcessRuntime(t *testing.T) {
	requireNode(t)
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n := newNode(t, s, "node-sec")
	yes := true
	uid, gid := int64(1000), int64(4000)
	pods := []*api.Pod{
		{ObjectMeta: api.ObjectMeta{Name: "nonroot", Namespace: "default"}, Spec: api.PodSpec{
			SecurityContext: &api.PodSecurityContext{RunAsNonRoot: &yes},
			Containers:      []api.Container{{Name: "c", Image: "skiff", Command: []string{"sleep", "3600"}}}}},
		{ObjectMeta: api.ObjectMeta{Name: "seccomp", Namespace: "default"}, Spec: api.PodSpec{
			Containers: []api.Container{{Name: "c", Image: "skiff", Command: []string{"sleep", "3600"},
				SecurityContext: &api.SecurityContext{SeccompProfile: &api.SeccompProfile{Type: api.SeccompProfileTypeRuntimeDefault}}}}}},
		{ObjectMeta: api.ObjectMeta{Name: "fsgroup", Namespace: "default"}, Spec: api.PodSpec{
			SecurityContext: &api.PodSecurityContext{RunAsUser: &uid, FSGroup: &gid, RunAsNonRoot: &yes},
			Volumes:         []api.Volume{{Name: "v", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}}},
			Containers: []api.Container{{Name: "c", Image: "skiff",
				Command:      []string{"sh", "-c", "id -u > /vol/id; id -G >> /vol/id; exec sleep 3600"},
				VolumeMounts: []api.VolumeMount{{Name: "v", MountPath: "/vol"}}}}}},
	}
	for _, p := range pods {
		if err := admin.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range pods {
			one := int64(1)
			_ = admin.Delete(ctx, resPods, "default", p.Name, client.DeleteOptions{GracePeriodSeconds: &one})
		}
		for _, p := range pods {
			eventually(t, 30*time.Second, p.Name+" gone", func() (bool, error) {
				err := admin.Get(ctx, resPods, "default", p.Name, &api.Pod{})
				return err != nil, nil
			})
		}
	})
	for _, tc := range []struct{ pod, msg string }{
		{"nonroot", "container has runAsNonRoot and image will run as root"},
		{"seccomp", "the process runtime cannot apply seccomp profile"},
	} {
		p := waitPod(t, admin, tc.pod, 30*time.Second, "CreateContainerConfigError", func(p *api.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "CreateContainerConfigError"
		})
		if w := p.Status.ContainerStatuses[0].State.Waiting; !strings.Contains(w.Message, tc.msg) {
			t.Errorf("%s waits with %q, want %q", tc.pod, w.Message, tc.msg)
		}
		eventually(t, 10*time.Second, tc.pod+"'s Failed Event", func() (bool, error) {
			return hasEvent(podEvents(t, admin, tc.pod), "Failed: Error: securityContext."), nil
		})
	}

	p := waitPod(t, admin, "fsgroup", 30*time.Second, "Running", func(p *api.Pod) bool { return p.Status.Phase == api.PodRunning })
	vol := filepath.Join(n.dataDir, "pods", string(p.UID), "volumes", "kubernetes.io~empty-dir", "v")
	var out []byte
	eventually(t, 10*time.Second, "the pod's /vol/id", func() (bool, error) {
		var err error
		out, err = os.ReadFile(filepath.Join(vol, "id"))
		return err == nil && strings.Count(string(out), "\n") == 2, err
	})
	if string(out) != "1000\n0 4000\n" {
		t.Errorf("id -u, id -G in the pod: %q, want 1000 and groups 0 4000", out)
	}
	for _, f := range []string{"", "id"} {
		st, err := os.Stat(filepath.Join(vol, f))
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		if sys.Gid != uint32(gid) || (f == "" && st.Mode()&os.ModeSetgid == 0) || (f == "id" && sys.Uid != uint32(uid)) {
			t.Errorf("volume %q: mode %v uid %d gid %d, want group %d (setgid on the directory)", f, st.Mode(), sys.Uid, sys.Gid, gid)
		}
	}
}
