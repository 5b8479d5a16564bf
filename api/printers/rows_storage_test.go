package printers

import (
	"reflect"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

func TestStorageRows(t *testing.T) {
	fs := ptr(api.PersistentVolumeFilesystem)
	for _, tc := range []struct {
		name     string
		group    string
		resource string
		obj      api.Object
		want     []any
	}{
		{
			name: "pv bound", resource: "persistentvolumes",
			obj: &api.PersistentVolume{ObjectMeta: meta("pvc-1", time.Minute), Spec: api.PersistentVolumeSpec{
				Capacity: api.ResourceList{"storage": "10Gi"}, AccessModes: []string{api.ReadWriteMany, api.ReadWriteOnce, api.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: "Delete", StorageClassName: "local-path", VolumeMode: fs,
				ClaimRef: &api.ObjectReference{Namespace: "default", Name: "data"},
			}, Status: api.PersistentVolumeStatus{Phase: api.VolumeBound}},
			want: []any{"pvc-1", "10Gi", "RWO,RWX", "Delete", "Bound", "default/data", "local-path", "<unset>", "", "60s", "Filesystem"},
		},
		{
			name: "pv terminating", resource: "persistentvolumes",
			obj: &api.PersistentVolume{ObjectMeta: api.ObjectMeta{Name: "old", CreationTimestamp: ago(2 * time.Hour), DeletionTimestamp: &api.Time{Time: now}},
				Status: api.PersistentVolumeStatus{Phase: api.VolumeReleased, Reason: "X"}},
			want: []any{"old", "", "", "", "Terminating", "", "", "<unset>", "X", "120m", "<unset>"},
		},
		{
			name: "pvc pending shows no capacity", resource: "persistentvolumeclaims",
			obj: &api.PersistentVolumeClaim{ObjectMeta: meta("data", 5*time.Second), Spec: api.PersistentVolumeClaimSpec{
				StorageClassName: ptr("local-path"), VolumeMode: fs,
			}, Status: api.PersistentVolumeClaimStatus{Phase: api.ClaimPending, Capacity: api.ResourceList{"storage": "1Gi"}}},
			want: []any{"data", "Pending", "", "", "", "local-path", "<unset>", "5s", "Filesystem"},
		},
		{
			name: "pvc bound, class from the beta annotation", resource: "persistentvolumeclaims",
			obj: &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: "c", CreationTimestamp: ago(time.Second),
				Annotations: map[string]string{api.AnnBetaStorageClass: "fast"}}, Spec: api.PersistentVolumeClaimSpec{VolumeName: "pv-1"},
				Status: api.PersistentVolumeClaimStatus{Phase: api.ClaimBound, AccessModes: []string{api.ReadWriteOncePod}, Capacity: api.ResourceList{"storage": "2Gi"}}},
			want: []any{"c", "Bound", "pv-1", "2Gi", "RWOP", "fast", "<unset>", "1s", "<unset>"},
		},
		{
			name: "default storage class", group: "storage.k8s.io", resource: "storageclasses",
			obj: &api.StorageClass{ObjectMeta: api.ObjectMeta{Name: "local-path", CreationTimestamp: ago(time.Minute),
				Annotations: map[string]string{api.AnnIsDefaultStorageClass: "true"}}, Provisioner: "skiff.dev/local-path",
				ReclaimPolicy: ptr("Delete"), VolumeBindingMode: ptr(api.VolumeBindingWaitForFirstConsumer)},
			want: []any{"local-path (default)", "skiff.dev/local-path", "Delete", "WaitForFirstConsumer", false, "60s"},
		},
		{
			name: "storage class unset fields print their defaults", group: "storage.k8s.io", resource: "storageclasses",
			obj:  &api.StorageClass{ObjectMeta: meta("fast", time.Second), Provisioner: "k8s.io/minikube-hostpath", AllowVolumeExpansion: ptr(true)},
			want: []any{"fast", "k8s.io/minikube-hostpath", "Delete", "Immediate", true, "1s"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := For(tc.group, tc.resource)
			row := p.Row(tc.obj, now)
			if !reflect.DeepEqual(row.Cells, tc.want) {
				t.Errorf("cells\n got %#v\nwant %#v", row.Cells, tc.want)
			}
			if len(row.Cells) != len(p.Columns) {
				t.Errorf("%d cells for %d columns", len(row.Cells), len(p.Columns))
			}
		})
	}
}
