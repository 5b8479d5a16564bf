package saadmission

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/apiserver"
	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

func ptr[T any](v T) *T { return &v }

// admit runs one pod create through the hook on a real bbolt store that
// holds sas.
func admit(t *testing.T, pod *api.Pod, op apiserver.Op, sas ...*api.ServiceAccount) error {
	t.Helper()
	h, err := New(api.Resources())
	if err != nil {
		t.Fatal(err)
	}
	h.suffix = func() string { return "abcde" }
	st := storetest.MustOpenBolt(t)
	ctx := context.Background()
	if _, err := st.Update(ctx, func(tx store.Txn) error {
		for _, sa := range sas {
			b, _ := json.Marshal(sa)
			if err := tx.Put(apiserver.KeyFor(h.saInfo, sa.Namespace, sa.Name), b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err = st.Update(ctx, func(tx store.Txn) error {
		_, err := h.Admit(ctx, tx, apiserver.Admission{Op: op, Obj: pod})
		return err
	})
	return err
}

func newPod() *api.Pod {
	return &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: api.PodSpec{
		InitContainers: []api.Container{{Name: "init", Image: "x"}},
		Containers:     []api.Container{{Name: "a", Image: "x"}, {Name: "b", Image: "x"}},
	}}
}

func sa(name string, automount *bool) *api.ServiceAccount {
	return &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "ns"}, AutomountServiceAccountToken: automount,
		ImagePullSecrets: []api.LocalObjectReference{{Name: "reg"}}}
}

func TestAdmitMountsTheTokenVolume(t *testing.T) {
	pod := newPod()
	pod.Spec.Containers[1].VolumeMounts = []api.VolumeMount{{Name: "own", MountPath: MountPath}}
	if err := admit(t, pod, apiserver.OpCreate, sa("default", nil)); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.ServiceAccountName != "default" {
		t.Errorf("serviceAccountName = %q", pod.Spec.ServiceAccountName)
	}
	if len(pod.Spec.Volumes) != 1 || pod.Spec.Volumes[0].Name != "kube-api-access-abcde" || pod.Spec.Volumes[0].Projected == nil {
		t.Fatalf("volumes = %+v", pod.Spec.Volumes)
	}
	pv := pod.Spec.Volumes[0].Projected
	if len(pv.Sources) != 3 || *pv.Sources[0].ServiceAccountToken.ExpirationSeconds != 3607 || pv.Sources[0].ServiceAccountToken.Path != "token" ||
		pv.Sources[1].ConfigMap.Name != "kube-root-ca.crt" || pv.Sources[1].ConfigMap.Items[0].Key != "ca.crt" ||
		pv.Sources[2].DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.namespace" || *pv.DefaultMode != 0o644 {
		t.Errorf("projected = %+v", pv)
	}
	want := api.VolumeMount{Name: "kube-api-access-abcde", ReadOnly: true, MountPath: MountPath}
	for _, c := range []api.Container{pod.Spec.InitContainers[0], pod.Spec.Containers[0]} {
		if len(c.VolumeMounts) != 1 || c.VolumeMounts[0] != want {
			t.Errorf("%s mounts = %+v", c.Name, c.VolumeMounts)
		}
	}
	if m := pod.Spec.Containers[1].VolumeMounts; len(m) != 1 || m[0].Name != "own" {
		t.Errorf("a container mounting there already got %+v", m)
	}
	if len(pod.Spec.ImagePullSecrets) != 1 || pod.Spec.ImagePullSecrets[0].Name != "reg" {
		t.Errorf("imagePullSecrets = %+v", pod.Spec.ImagePullSecrets)
	}
	// The volume is valid.
	pod.Spec.Volumes = append(pod.Spec.Volumes, api.Volume{Name: "own", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}})
	api.DefaultPod(pod)
	if errs := api.ValidatePod(pod); len(errs) > 0 {
		t.Errorf("admitted pod invalid: %v", errs)
	}
}

func TestAdmitAutomount(t *testing.T) {
	tests := []struct {
		name     string
		pod, sa  *bool
		mounted  bool
		saExists bool
	}{
		{name: "both unset", mounted: true, saExists: true},
		{name: "sa false", sa: ptr(false), mounted: false, saExists: true},
		{name: "sa false pod true", sa: ptr(false), pod: ptr(true), mounted: true, saExists: true},
		{name: "pod false", pod: ptr(false), mounted: false, saExists: true},
		{name: "pod false sa true", pod: ptr(false), sa: ptr(true), mounted: false, saExists: true},
		{name: "default sa not made yet", mounted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := newPod()
			pod.Spec.AutomountServiceAccountToken = tt.pod
			var sas []*api.ServiceAccount
			if tt.saExists {
				sas = append(sas, sa("default", tt.sa))
			}
			if err := admit(t, pod, apiserver.OpCreate, sas...); err != nil {
				t.Fatal(err)
			}
			if got := len(pod.Spec.Volumes) == 1; got != tt.mounted {
				t.Errorf("mounted = %v, want %v", got, tt.mounted)
			}
		})
	}
}

func TestAdmitMissingServiceAccount(t *testing.T) {
	pod := newPod()
	pod.Spec.ServiceAccountName = "robot"
	err := admit(t, pod, apiserver.OpCreate, sa("default", nil))
	var se *apiserver.StatusError
	if !errors.As(err, &se) || se.Code() != 403 {
		t.Fatalf("err = %v, want 403", err)
	}
	if want := `pods "p" is forbidden: error looking up service account ns/robot: serviceaccount "robot" not found`; se.Error() != want {
		t.Errorf("message = %q", se.Error())
	}
}

func TestAdmitReusesVolumeAndSkipsUpdates(t *testing.T) {
	pod := newPod()
	pod.Spec.Volumes = []api.Volume{{Name: "kube-api-access-zzzzz", VolumeSource: api.VolumeSource{Projected: TokenVolumeSource()}}}
	if err := admit(t, pod, apiserver.OpCreate, sa("default", nil)); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Volumes) != 1 || pod.Spec.Containers[0].VolumeMounts[0].Name != "kube-api-access-zzzzz" {
		t.Errorf("volumes %+v mounts %+v", pod.Spec.Volumes, pod.Spec.Containers[0].VolumeMounts)
	}
	pod = newPod()
	if err := admit(t, pod, apiserver.OpUpdate, sa("default", nil)); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Volumes) != 0 {
		t.Errorf("an update got %+v", pod.Spec.Volumes)
	}
}

func TestRandomSuffix(t *testing.T) {
	s := randomSuffix()
	if len(s) != 5 {
		t.Fatalf("%q", s)
	}
	for _, c := range s {
		if !strings.ContainsRune(nameChars, c) {
			t.Errorf("%q has %q", s, c)
		}
	}
}
