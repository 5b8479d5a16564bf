package netagent_test

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
)

var (
	resClaims  = api.Lookup(resources, "v1", "persistentvolumeclaims")
	resVolumes = api.Lookup(resources, "v1", "persistentvolumes")
)

// shPod runs script with /bin/sh once (restartPolicy Never) with the
// claim "data" mounted at /data.
func shPod(name, script string) *api.Pod {
	return &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec: api.PodSpec{
			RestartPolicy: api.RestartPolicyNever,
			Containers: []api.Container{{Name: "sh", Image: "skiff", Command: []string{"/bin/sh", "-c", script},
				VolumeMounts: []api.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []api.Volume{{Name: "data", VolumeSource: api.VolumeSource{
				PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
		},
	}
}

// TestPersistentVolumeE2E: on the process runtime, a pod writes a file
// into a claim of the default local-path class and a replacement pod
// reads it back; the volume is provisioned in the agent's data dir once
// the first pod is scheduled, and deleting the claim deletes the volume,
// whose directory the agent removes before the volume goes.
func TestPersistentVolumeE2E(t *testing.T) {
	requireNode(t)
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n := newNode(t, s, "node-pv")

	// A pod whose claim does not exist yet is not scheduled (the
	// scheduler's volume filter); once the claim exists it is, and the
	// container waits for the claim to be bound.
	if err := admin.Create(ctx, resPods, "default", shPod("writer", "echo persisted > /data/file")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	var p api.Pod
	if err := admin.Get(ctx, resPods, "default", "writer", &p); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("pod with a missing claim scheduled to %q (%v)", p.Spec.NodeName, err)
	}
	claim := &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Name: "data", Namespace: "default"},
		Spec: api.PersistentVolumeClaimSpec{AccessModes: []string{api.ReadWriteOnce},
			Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{"storage": "64Mi"}}},
	}
	if err := admin.Create(ctx, resClaims, "default", claim); err != nil {
		t.Fatal(err)
	}
	waitPod(t, admin, "writer", 60*time.Second, "Succeeded", func(p *api.Pod) bool { return p.Status.Phase == api.PodSucceeded })

	var pvc api.PersistentVolumeClaim
	if err := admin.Get(ctx, resClaims, "default", "data", &pvc); err != nil || pvc.Status.Phase != api.ClaimBound {
		t.Fatalf("claim %+v (%v)", pvc.Status, err)
	}
	dir := filepath.Join(n.dataDir, "storage", pvc.Spec.VolumeName)
	if b, err := os.ReadFile(filepath.Join(dir, "file")); err != nil || strings.TrimSpace(string(b)) != "persisted" {
		t.Fatalf("file on the node: %q %v", b, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o777 {
		t.Fatalf("volume directory %v %v, want mode 0777", fi, err)
	}
	var node api.Node
	if err := admin.Get(ctx, api.Lookup(resources, "v1", "nodes"), "", "node-pv", &node); err != nil ||
		node.Annotations[netagent.AnnotationStorageDir] != filepath.Join(n.dataDir, "storage") {
		t.Fatalf("node storage dir annotation %v (%v)", node.Annotations, err)
	}

	// The replacement pod sees the file.
	zero := int64(0)
	if err := admin.Delete(ctx, resPods, "default", "writer", client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(ctx, resPods, "default", shPod("reader", `test "$(cat /data/file)" = persisted`)); err != nil {
		t.Fatal(err)
	}
	got := waitPod(t, admin, "reader", 60*time.Second, "ended", func(p *api.Pod) bool {
		return p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed
	})
	if got.Status.Phase != api.PodSucceeded {
		t.Fatalf("reader %s: %+v", got.Status.Phase, got.Status.ContainerStatuses)
	}

	// Deleting the claim deletes the volume; the agent removes the
	// directory, then the finalizer.
	if err := admin.Delete(ctx, resPods, "default", "reader", client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(ctx, resClaims, "default", "data", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the volume gone", func() (bool, error) {
		var pv api.PersistentVolume
		err := admin.Get(ctx, resVolumes, "", pvc.Spec.VolumeName, &pv)
		return client.IsNotFound(err), err
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("volume directory still there: %v", err)
	}
	eventually(t, 30*time.Second, "pods gone", func() (bool, error) {
		var l api.PodList
		err := admin.List(ctx, resPods, "default", client.ListOptions{}, &l)
		return err == nil && len(l.Items) == 0, err
	})
}

// TestPersistentVolumeContainerd is TestPersistentVolumeE2E's persistence
// on the containerd runtime: a pod writes into a local-path claim, a
// replacement pod reads the file.
func TestPersistentVolumeContainerd(t *testing.T) {
	requireNode(t)
	workload, skiff := requireContainerd(t)
	ctx := context.Background()
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	dataDir, crt := managedContainerd(t, "skpv", skiff, nil, workloadImage("skiff.local/workload:pv", workload))
	rt, name := crt, "containerd"
	ns := netnstest.NewNode(t)
	cfg := netagent.Config{
		Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
		NodeName: "node-pv-ctrd", NodeIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")},
		DataDir: dataDir, Runtime: name, DNSUpstreams: []string{},
		RelistPeriod: 200 * time.Millisecond, Logger: testLog(t),
	}
	startAgent(t, nil, cfg, netagent.Deps{Runtime: rt, NodeNetNS: ns.Do})

	claim := &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Name: "data", Namespace: "default"},
		Spec: api.PersistentVolumeClaimSpec{AccessModes: []string{api.ReadWriteOnce},
			Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{"storage": "64Mi"}}},
	}
	if err := admin.Create(ctx, resClaims, "default", claim); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) *api.Pod {
		t.Helper()
		p := shPod(name, "")
		p.Spec.Containers[0].Image, p.Spec.Containers[0].ImagePullPolicy = "skiff.local/workload:pv", api.PullNever
		p.Spec.Containers[0].Command, p.Spec.Containers[0].Args = nil, args
		if err := admin.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
		got := waitPod(t, admin, name, 60*time.Second, "ended", func(p *api.Pod) bool {
			return p.Status.Phase == api.PodSucceeded || p.Status.Phase == api.PodFailed
		})
		zero := int64(0)
		if err := admin.Delete(ctx, resPods, "default", name, client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if p := run("writer", "write", "/data/file", "persisted"); p.Status.Phase != api.PodSucceeded {
		t.Fatalf("writer %s: %+v", p.Status.Phase, p.Status.ContainerStatuses)
	}
	if p := run("reader", "cat", "/data/file"); p.Status.Phase != api.PodSucceeded {
		t.Fatalf("reader %s: %+v", p.Status.Phase, p.Status.ContainerStatuses)
	}
	var pvc api.PersistentVolumeClaim
	if err := admin.Get(ctx, resClaims, "default", "data", &pvc); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dataDir, "storage", pvc.Spec.VolumeName, "file")); err != nil || string(b) != "persisted" {
		t.Fatalf("file on the node: %q %v", b, err)
	}
	eventually(t, 30*time.Second, "pods gone", func() (bool, error) {
		var l api.PodList
		err := admin.List(ctx, resPods, "default", client.ListOptions{}, &l)
		return err == nil && len(l.Items) == 0, err
	})
	// A pod deleted with grace 0 leaves the API at once; the agent removes
	// its container after that, before the test stops it.
	eventually(t, 30*time.Second, "the agent removed the containers", func() (bool, error) {
		cs, err := crt.List(ctx)
		return err == nil && len(cs) == 0, err
	})
}
