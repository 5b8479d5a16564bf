package netagent_test

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/ociarchive"
)

// TestSecurityContextOnContainerd: through a real agent on containerd, a
// pod with runAsNonRoot whose image's USER is a name waits in
// CreateContainerConfigError with the kubelet's message and a Warning
// Event; a pod with runAsUser, fsGroup, RuntimeDefault seccomp,
// allowPrivilegeEscalation: false and a read-only root runs filtered,
// with no_new_privs, unable to write / but writing its emptyDir, whose
// files carry the fsGroup.
func TestSecurityContextOnContainerd(t *testing.T) {
	requireNode(t)
	workload, skiff := requireContainerd(t)
	ctx := context.Background()
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	named := workloadImage("skiff.local/named:test", workload)
	named.User = "app"
	named.Files = append(named.Files, ociarchive.File{Path: "/etc/passwd", Data: []byte("root:x:0:0::/:/bin/sh\napp:x:1000:1000::/:/bin/sh\n"), Mode: 0o644})
	dataDir, crt := managedContainerd(t, "sksec", skiff, nil, workloadImage("skiff.local/netexec:test", workload), named)
	rt, name := crt, "containerd"
	ns := netnstest.NewNode(t)
	cfg := netagent.Config{
		Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
		NodeName: "node-ctrd-sec", NodeIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")},
		DataDir: dataDir, Runtime: name, DNSUpstreams: []string{},
		RelistPeriod: 200 * time.Millisecond, Logger: testLog(t),
	}
	startAgent(t, nil, cfg, netagent.Deps{Runtime: rt, NodeNetNS: ns.Do})

	yes, no := true, false
	uid, gid := int64(1000), int64(4000)
	pods := []*api.Pod{
		{ObjectMeta: api.ObjectMeta{Name: "named", Namespace: "default"}, Spec: api.PodSpec{
			SecurityContext: &api.PodSecurityContext{RunAsNonRoot: &yes},
			Containers:      []api.Container{{Name: "c", Image: "skiff.local/named:test", ImagePullPolicy: api.PullNever, Args: []string{"netexec"}}}}},
		{ObjectMeta: api.ObjectMeta{Name: "secure", Namespace: "default"}, Spec: api.PodSpec{
			RestartPolicy: api.RestartPolicyNever,
			SecurityContext: &api.PodSecurityContext{RunAsUser: &uid, FSGroup: &gid, RunAsNonRoot: &yes,
				SeccompProfile: &api.SeccompProfile{Type: api.SeccompProfileTypeRuntimeDefault}},
			Volumes: []api.Volume{{Name: "v", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}}},
			Containers: []api.Container{{Name: "c", Image: "skiff.local/netexec:test", ImagePullPolicy: api.PullNever,
				Args:            []string{"security", "/vol/x"},
				SecurityContext: &api.SecurityContext{AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes},
				VolumeMounts:    []api.VolumeMount{{Name: "v", MountPath: "/vol"}}}}}},
	}
	for _, p := range pods {
		if err := admin.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		one := int64(1)
		for _, p := range pods {
			_ = admin.Delete(ctx, resPods, "default", p.Name, client.DeleteOptions{GracePeriodSeconds: &one})
		}
		for _, p := range pods {
			eventually(t, 60*time.Second, p.Name+" gone", func() (bool, error) {
				return admin.Get(ctx, resPods, "default", p.Name, &api.Pod{}) != nil, nil
			})
		}
	})

	p := waitPod(t, admin, "named", 60*time.Second, "CreateContainerConfigError", func(p *api.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "CreateContainerConfigError"
	})
	want := "container has runAsNonRoot and image has non-numeric user (app), cannot verify user is non-root"
	if w := p.Status.ContainerStatuses[0].State.Waiting; !strings.Contains(w.Message, want) {
		t.Errorf("named waits with %q, want %q", w.Message, want)
	}
	eventually(t, 10*time.Second, "named's Failed Event", func() (bool, error) {
		return hasEvent(podEvents(t, admin, "named"), "Failed: Error: securityContext.runAsNonRoot: "+want), nil
	})

	p = waitPod(t, admin, "secure", 60*time.Second, "Succeeded", func(p *api.Pod) bool { return p.Status.Phase == api.PodSucceeded })
	cs, err := crt.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var logs string
	for _, c := range cs {
		if c.PodUID == string(p.UID) {
			b, _ := os.ReadFile(c.LogPath)
			logs = string(b)
		}
	}
	for _, w := range []string{"uid=1000 gid=0 groups=[0 4000]" /* no /etc/passwd in the image: group 0 */, "CapEff: 0000000000000000", "NoNewPrivs: 1", "Seccomp: 2",
		"write /skiff-ro-test: open /skiff-ro-test: read-only file system", "write /vol/x: ok"} {
		if !strings.Contains(logs, w) {
			t.Errorf("secure's output lacks %q:\n%s", w, logs)
		}
	}
	st, err := os.Stat(filepath.Join(dataDir, "pods", string(p.UID), "volumes", "kubernetes.io~empty-dir", "v", "x"))
	if err != nil {
		t.Fatal(err)
	}
	if sys := st.Sys().(*syscall.Stat_t); sys.Uid != uint32(uid) || sys.Gid != uint32(gid) {
		t.Errorf("/vol/x: uid %d gid %d, want %d:%d (the directory's setgid gives the fsGroup)", sys.Uid, sys.Gid, uid, gid)
	}
}
