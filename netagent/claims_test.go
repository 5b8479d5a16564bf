package netagent

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// fakeStorage is a storageSource over maps.
type fakeStorage struct {
	claims  map[string]*api.PersistentVolumeClaim
	volumes map[string]*api.PersistentVolume
}

func (f fakeStorage) claim(_ context.Context, _, name string) (*api.PersistentVolumeClaim, error) {
	if c, ok := f.claims[name]; ok {
		return c, nil
	}
	return nil, errObjectNotFound{"persistentvolumeclaim", name}
}

func (f fakeStorage) volume(_ context.Context, name string) (*api.PersistentVolume, error) {
	if v, ok := f.volumes[name]; ok {
		return v, nil
	}
	return nil, errObjectNotFound{"persistentvolume", name}
}

func boundClaim(name, volume string) *api.PersistentVolumeClaim {
	return &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + name},
		Spec: api.PersistentVolumeClaimSpec{VolumeName: volume}, Status: api.PersistentVolumeClaimStatus{Phase: api.ClaimBound}}
}

func volumeFor(name, claim string, src api.PersistentVolumeSource) *api.PersistentVolume {
	return &api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.PersistentVolumeSpec{PersistentVolumeSource: src,
			ClaimRef: &api.ObjectReference{Namespace: "ns", Name: claim, UID: "uid-" + claim}}}
}

func TestClaimVolume(t *testing.T) {
	tmp := t.TempDir()
	lp := volumeFor("pvc-1", "lp", api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: filepath.Join(tmp, "storage", "pvc-1")}})
	lp.Annotations = map[string]string{api.AnnDynamicallyProvisioned: localPathProvisioner}
	deleting := boundClaim("deleting", "pvc-1")
	deleting.DeletionTimestamp = &api.Time{}
	pending := boundClaim("pending", "")
	pending.Status.Phase = api.ClaimPending
	src := fakeStorage{
		claims: map[string]*api.PersistentVolumeClaim{
			"lp": boundClaim("lp", "pvc-1"), "host": boundClaim("host", "host"), "local": boundClaim("local", "local"),
			"missing-dir": boundClaim("missing-dir", "missing-dir"), "nfs": boundClaim("nfs", "nfs"), "csi": boundClaim("csi", "csi"),
			"stolen": boundClaim("stolen", "host"), "no-volume": boundClaim("no-volume", "nope"),
			"deleting": deleting, "pending": pending,
		},
		volumes: map[string]*api.PersistentVolume{
			"pvc-1":       lp,
			"host":        volumeFor("host", "host", api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: "/srv/host"}}),
			"local":       volumeFor("local", "local", api.PersistentVolumeSource{Local: &api.LocalVolumeSource{Path: tmp}}),
			"missing-dir": volumeFor("missing-dir", "missing-dir", api.PersistentVolumeSource{Local: &api.LocalVolumeSource{Path: filepath.Join(tmp, "nope")}}),
			"nfs":         volumeFor("nfs", "nfs", api.PersistentVolumeSource{NFS: &api.NFSVolumeSource{Server: "10.0.0.1", Path: "/x"}}),
			"csi":         volumeFor("csi", "csi", api.PersistentVolumeSource{CSI: &api.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}),
		},
	}
	w := &podWorker{m: &podManager{storage: src}}
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "p"}}
	for _, tc := range []struct {
		claim    string
		readOnly bool
		path     string // the hostPath mounted; "" for an error
		err      string
	}{
		{claim: "lp", path: filepath.Join(tmp, "storage", "pvc-1")},
		{claim: "host", readOnly: true, path: "/srv/host"},
		{claim: "local", path: tmp},
		{claim: "missing-dir", err: "does not exist"},
		{claim: "nfs", err: "nfs 10.0.0.1:/x"},
		{claim: "csi", err: "mounts hostPath, local and nfs volumes only"},
		{claim: "stolen", err: `persistentvolume "host" is not bound to claim ns/stolen`},
		{claim: "no-volume", err: `persistentvolume "nope" not found`},
		{claim: "deleting", err: "PVC ns/deleting is being deleted"},
		{claim: "pending", err: `PVC ns/pending has non-bound phase ("Pending")`},
		{claim: "absent", err: `persistentvolumeclaim "absent" not found`},
	} {
		t.Run(tc.claim, func(t *testing.T) {
			v := &api.Volume{Name: "data", VolumeSource: api.VolumeSource{
				PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: tc.claim, ReadOnly: tc.readOnly}}}
			got, ro, err := w.claimVolume(t.Context(), pod, v)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != "data" || got.HostPath == nil || got.HostPath.Path != tc.path || ro != tc.readOnly {
				t.Fatalf("volume %+v ro %v", got, ro)
			}
		})
	}
	if fi, err := os.Stat(filepath.Join(tmp, "storage", "pvc-1")); err != nil || fi.Mode().Perm() != 0o777 {
		t.Fatalf("local-path directory %v %v, want 0777", fi, err)
	}
}

// fakeVolumeAPI is a volumeWriter over a map; fail names volumes whose
// GET fails.
type fakeVolumeAPI struct {
	vols    map[string]*api.PersistentVolume
	fail    map[string]bool
	updates []string
}

func (f *fakeVolumeAPI) Get(_ context.Context, _ *api.ResourceInfo, _, name string, into api.Object) error {
	if f.fail[name] {
		return errors.New("boom")
	}
	pv, ok := f.vols[name]
	if !ok {
		return &client.APIError{Status: api.Status{Code: 404, Reason: api.StatusReasonNotFound}}
	}
	*into.(*api.PersistentVolume) = *api.DeepCopy(pv)
	return nil
}

func (f *fakeVolumeAPI) Update(_ context.Context, _ *api.ResourceInfo, _ string, obj api.Object, _ ...string) error {
	pv := obj.(*api.PersistentVolume)
	f.vols[pv.Name] = api.DeepCopy(pv)
	f.updates = append(f.updates, pv.Name)
	return nil
}

func TestCleanupVolumes(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"gone", "deleting", "live", "elsewhere", "unreadable", "no-finalizer"} {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	now := api.Now()
	vol := func(name, path string, deleted bool, fin ...string) *api.PersistentVolume {
		pv := &api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: name, Finalizers: fin},
			Spec: api.PersistentVolumeSpec{PersistentVolumeSource: api.PersistentVolumeSource{HostPath: &api.HostPathVolumeSource{Path: path}}}}
		if deleted {
			pv.DeletionTimestamp = &now
		}
		return pv
	}
	f := &fakeVolumeAPI{fail: map[string]bool{"unreadable": true}, vols: map[string]*api.PersistentVolume{
		"deleting":     vol("deleting", filepath.Join(dir, "deleting"), true, "other", localPathFinalizer),
		"live":         vol("live", filepath.Join(dir, "live"), false, localPathFinalizer),
		"elsewhere":    vol("elsewhere", "/srv/elsewhere", true, localPathFinalizer),
		"no-finalizer": vol("no-finalizer", filepath.Join(dir, "no-finalizer"), true, "other"),
	}}
	err := cleanupVolumes(t.Context(), f, dir, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "unreadable") {
		t.Fatalf("err %v, want the unreadable volume's", err)
	}
	for n, want := range map[string]bool{"gone": false, "deleting": false, "live": true, "elsewhere": true, "unreadable": true, "no-finalizer": true} {
		if _, err := os.Stat(filepath.Join(dir, n)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", n, err == nil, want)
		}
	}
	if len(f.updates) != 1 || f.updates[0] != "deleting" {
		t.Fatalf("updates %v", f.updates)
	}
	if fin := f.vols["deleting"].Finalizers; len(fin) != 1 || fin[0] != "other" {
		t.Fatalf("finalizers left %v", fin)
	}
	if err := cleanupVolumes(t.Context(), f, filepath.Join(dir, "absent"), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("no storage dir: %v", err)
	}
}
