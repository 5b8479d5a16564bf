package persistentvolume_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/controller/persistentvolume"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	res      = api.Resources()
	resPV    = api.Lookup(res, "v1", "persistentvolumes")
	resPVC   = api.Lookup(res, "v1", "persistentvolumeclaims")
	resSC    = api.Lookup(res, "storage.k8s.io/v1", "storageclasses")
	resPods  = api.Lookup(res, "v1", "pods")
	resNodes = api.Lookup(res, "v1", "nodes")
)

func eventually(t *testing.T, d time.Duration, what string, f func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(d)
	var last error
	for time.Now().Before(deadline) {
		ok, err := f()
		if ok {
			return
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
}

func readyNode(name, storageDir string) *api.Node {
	now := api.Now()
	return &api.Node{
		ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name},
			Annotations: map[string]string{persistentvolume.AnnNodeStorageDir: storageDir}},
		Status: api.NodeStatus{
			Allocatable: api.ResourceList{"cpu": "4", "memory": "8Gi", "pods": "110"},
			Conditions: []api.NodeCondition{{Type: api.NodeReady, Status: api.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: now, LastTransitionTime: now}},
		},
	}
}

func newClaim(name string, class *string, size string) *api.PersistentVolumeClaim {
	return &api.PersistentVolumeClaim{
		ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.PersistentVolumeClaimSpec{AccessModes: []string{api.ReadWriteOnce}, StorageClassName: class,
			Resources: api.VolumeResourceRequirements{Requests: api.ResourceList{"storage": api.Quantity(size)}}},
	}
}

func getClaim(ctx context.Context, c *client.Client, name string) (*api.PersistentVolumeClaim, error) {
	var pvc api.PersistentVolumeClaim
	err := c.Get(ctx, resPVC, "default", name, &pvc)
	return &pvc, err
}

// TestLocalPathProvisioning runs the real server (binder, scheduler,
// admission) without a node agent: a Node is registered by hand. A claim
// without a class gets local-path; it waits for a consumer; a pod using it
// is scheduled, the binder selects the node, provisions the hostPath
// volume there and binds both; deleting the claim releases the volume and
// deletes it, held by the cleanup finalizer the node agent would remove.
func TestLocalPathProvisioning(t *testing.T) {
	if testing.Short() {
		t.Skip("a real API server; -short runs the plan tests only")
	}
	ts := servertest.Start(t, servertest.Options{DisabledControllers: []string{"nodelifecycle"}})
	c := ts.Client()
	ctx := t.Context()

	var sc api.StorageClass
	if err := c.Get(ctx, resSC, "", persistentvolume.DefaultClassName, &sc); err != nil {
		t.Fatalf("the server did not create the local-path class: %v", err)
	}
	if !api.IsDefaultStorageClass(&sc) || sc.Provisioner != persistentvolume.Provisioner ||
		*sc.VolumeBindingMode != api.VolumeBindingWaitForFirstConsumer || *sc.ReclaimPolicy != api.PersistentVolumeReclaimDelete {
		t.Fatalf("local-path class %+v", sc)
	}
	if err := c.Create(ctx, resNodes, "", readyNode("node-a", "/srv/a/storage")); err != nil {
		t.Fatal(err)
	}

	if err := c.Create(ctx, resPVC, "default", newClaim("data", nil, "1Gi")); err != nil {
		t.Fatal(err)
	}
	pvc, err := getClaim(ctx, c, "data")
	if err != nil {
		t.Fatal(err)
	}
	if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != persistentvolume.DefaultClassName {
		t.Fatalf("admission did not set the default class: %v", pvc.Spec.StorageClassName)
	}
	// No consumer yet: the claim waits, nothing is provisioned.
	time.Sleep(300 * time.Millisecond)
	if pvc, _ = getClaim(ctx, c, "data"); pvc.Status.Phase != api.ClaimPending || pvc.Spec.VolumeName != "" || pvc.Annotations[api.AnnSelectedNode] != "" {
		t.Fatalf("claim without a consumer: %+v", pvc)
	}

	pod := &api.Pod{
		ObjectMeta: api.ObjectMeta{Name: "app"},
		Spec: api.PodSpec{
			Containers: []api.Container{{Name: "c", Image: "busybox", VolumeMounts: []api.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []api.Volume{{Name: "data", VolumeSource: api.VolumeSource{
				PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
		},
	}
	if err := c.Create(ctx, resPods, "default", pod); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the claim Bound", func() (bool, error) {
		pvc, err = getClaim(ctx, c, "data")
		return err == nil && pvc.Status.Phase == api.ClaimBound, err
	})
	want := "pvc-" + pvc.UID
	if pvc.Spec.VolumeName != want || pvc.Annotations[api.AnnSelectedNode] != "node-a" || pvc.Status.Capacity["storage"] != "1Gi" ||
		pvc.Annotations[api.AnnBindCompleted] != "yes" {
		t.Fatalf("bound claim %+v", pvc)
	}
	var pv api.PersistentVolume
	eventually(t, 10*time.Second, "the volume Bound", func() (bool, error) {
		err := c.Get(ctx, resPV, "", want, &pv)
		return err == nil && pv.Status.Phase == api.VolumeBound, err
	})
	if pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != "/srv/a/storage/"+want || pv.Spec.ClaimRef.UID != pvc.UID ||
		!api.VolumeNodeAffinityMatches(&pv, map[string]string{"kubernetes.io/hostname": "node-a"}, "node-a") ||
		api.VolumeNodeAffinityMatches(&pv, map[string]string{"kubernetes.io/hostname": "node-b"}, "node-b") {
		t.Fatalf("provisioned volume %+v", pv.Spec)
	}
	var got api.Pod
	if err := c.Get(ctx, resPods, "default", "app", &got); err != nil || got.Spec.NodeName != "node-a" {
		t.Fatalf("pod on %q (%v)", got.Spec.NodeName, err)
	}

	if !slices.Contains(pvc.Finalizers, persistentvolume.PVCProtectionFinalizer) ||
		!slices.Contains(pv.Finalizers, persistentvolume.PVProtectionFinalizer) || !slices.Contains(pv.Finalizers, persistentvolume.CleanupFinalizer) {
		t.Fatalf("finalizers: claim %v volume %v", pvc.Finalizers, pv.Finalizers)
	}

	// Deleting the claim while the pod uses it leaves it Terminating
	// (pvc-protection); once the pod is gone it goes. Delete reclaim then
	// deletes the volume; the cleanup finalizer holds it until the node
	// agent removed the directory (here: the test, standing in for the
	// agent).
	if err := c.Delete(ctx, resPVC, "default", "data", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if pvc, err = getClaim(ctx, c, "data"); err != nil || pvc.DeletionTimestamp == nil {
		t.Fatalf("claim in use: %v %v", pvc.DeletionTimestamp, err)
	}
	zero := int64(0)
	if err := c.Delete(ctx, resPods, "default", "app", client.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the claim gone", func() (bool, error) {
		_, err := getClaim(ctx, c, "data")
		return client.IsNotFound(err), err
	})
	eventually(t, 20*time.Second, "the released volume being deleted", func() (bool, error) {
		err := c.Get(ctx, resPV, "", want, &pv)
		return err == nil && pv.DeletionTimestamp != nil, err
	})
	pv.Finalizers = nil
	if err := c.Update(ctx, resPV, "", &pv); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the volume gone", func() (bool, error) {
		err := c.Get(ctx, resPV, "", want, &pv)
		return client.IsNotFound(err), err
	})
}

// TestStaticBinding binds a claim to a hand-made volume of an Immediate
// class, honours the selector, and keeps a Retain volume Released once
// its claim is gone.
func TestStaticBinding(t *testing.T) {
	if testing.Short() {
		t.Skip("a real API server; -short runs the plan tests only")
	}
	ts := servertest.Start(t, servertest.Options{DisabledControllers: []string{"nodelifecycle", "scheduler"}})
	c := ts.Client()
	ctx := t.Context()
	mode := api.VolumeBindingImmediate
	if err := c.Create(ctx, resSC, "", &api.StorageClass{ObjectMeta: api.ObjectMeta{Name: "nfs"},
		Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &mode}); err != nil {
		t.Fatal(err)
	}
	for i, label := range []string{"other", "mine"} {
		pv := &api.PersistentVolume{
			ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("nfs-%d", i), Labels: map[string]string{"volume": label}},
			Spec: api.PersistentVolumeSpec{Capacity: api.ResourceList{"storage": "10Gi"}, AccessModes: []string{api.ReadWriteMany},
				StorageClassName: "nfs", PersistentVolumeReclaimPolicy: api.PersistentVolumeReclaimRetain,
				PersistentVolumeSource: api.PersistentVolumeSource{NFS: &api.NFSVolumeSource{Server: "192.0.2.10", Path: "/export/" + label}}},
		}
		if err := c.Create(ctx, resPV, "", pv); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "the volumes Available", func() (bool, error) {
		var l api.PersistentVolumeList
		if err := c.List(ctx, resPV, "", client.ListOptions{}, &l); err != nil {
			return false, err
		}
		for _, pv := range l.Items {
			if pv.Status.Phase != api.VolumeAvailable {
				return false, nil
			}
		}
		return len(l.Items) == 2, nil
	})
	cls := "nfs"
	claim := newClaim("shared", &cls, "10Gi")
	claim.Spec.AccessModes = []string{api.ReadWriteMany}
	claim.Spec.Selector = &api.LabelSelector{MatchLabels: map[string]string{"volume": "mine"}}
	if err := c.Create(ctx, resPVC, "default", claim); err != nil {
		t.Fatal(err)
	}
	var pvc *api.PersistentVolumeClaim
	eventually(t, 10*time.Second, "the claim Bound", func() (bool, error) {
		var err error
		pvc, err = getClaim(ctx, c, "shared")
		return err == nil && pvc.Status.Phase == api.ClaimBound, err
	})
	if pvc.Spec.VolumeName != "nfs-1" {
		t.Fatalf("bound to %q, want the selected nfs-1", pvc.Spec.VolumeName)
	}
	if err := c.Delete(ctx, resPVC, "default", "shared", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var pv api.PersistentVolume
	eventually(t, 20*time.Second, "the volume Released", func() (bool, error) {
		err := c.Get(ctx, resPV, "", "nfs-1", &pv)
		return err == nil && pv.Status.Phase == api.VolumeReleased, err
	})
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != "shared" {
		t.Fatalf("released volume lost its claimRef: %+v", pv.Spec.ClaimRef)
	}
}

// TestStatefulSetClaims: a StatefulSet's claim templates become one claim
// per pod, which the default class provisions on the pods' node.
func TestStatefulSetClaims(t *testing.T) {
	if testing.Short() {
		t.Skip("a real API server; -short runs the plan tests only")
	}
	ts := servertest.Start(t, servertest.Options{DisabledControllers: []string{"nodelifecycle"}})
	c := ts.Client()
	ctx := t.Context()
	if err := c.Create(ctx, resNodes, "", readyNode("node-a", "/srv/a/storage")); err != nil {
		t.Fatal(err)
	}
	two := int32(2)
	set := &api.StatefulSet{
		ObjectMeta: api.ObjectMeta{Name: "db"},
		Spec: api.StatefulSetSpec{
			Replicas: &two, ServiceName: "db", PodManagementPolicy: api.ParallelPodManagement,
			Selector: &api.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: api.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "db"}},
				Spec: api.PodSpec{Containers: []api.Container{{Name: "db", Image: "busybox",
					VolumeMounts: []api.VolumeMount{{Name: "data", MountPath: "/var/lib/db"}}}}},
			},
			VolumeClaimTemplates: []api.PersistentVolumeClaim{*newClaim("data", nil, "1Gi")},
		},
	}
	if err := c.Create(ctx, api.Lookup(res, "apps/v1", "statefulsets"), "default", set); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"data-db-0", "data-db-1"} {
		eventually(t, 30*time.Second, name+" Bound", func() (bool, error) {
			pvc, err := getClaim(ctx, c, name)
			return err == nil && pvc.Status.Phase == api.ClaimBound, err
		})
		pvc, _ := getClaim(ctx, c, name)
		if *pvc.Spec.StorageClassName != persistentvolume.DefaultClassName || pvc.Labels["app"] != "db" || pvc.Annotations[api.AnnSelectedNode] != "node-a" {
			t.Fatalf("claim %s: %+v", name, pvc.ObjectMeta)
		}
	}
}
