package netagent

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
)

func TestVolumePayload(t *testing.T) {
	data := map[string][]byte{"a": []byte("1"), "b": []byte("2")}
	m := func(v int32) *int32 { return &v }
	cases := []struct {
		name     string
		items    []api.KeyToPath
		mode     *int32
		optional bool
		want     map[string]fs.FileMode // path -> mode
		wantErr  string
	}{
		{name: "every key with defaultMode", mode: m(0o440), want: map[string]fs.FileMode{"a": 0o440, "b": 0o440}},
		{name: "no defaultMode is 0644", want: map[string]fs.FileMode{"a": 0o644, "b": 0o644}},
		{name: "items with paths and a mode", mode: m(0o644),
			items: []api.KeyToPath{{Key: "a", Path: "conf/a.txt", Mode: m(0o600)}, {Key: "b", Path: "b"}},
			want:  map[string]fs.FileMode{"conf/a.txt": 0o600, "b": 0o644}},
		{name: "missing item key", items: []api.KeyToPath{{Key: "c", Path: "c"}}, wantErr: "configmap references non-existent config key: c"},
		{name: "missing item key optional", optional: true, items: []api.KeyToPath{{Key: "c", Path: "c"}, {Key: "a", Path: "x"}},
			want: map[string]fs.FileMode{"x": 0o644}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := volumePayload("configmap", data, tc.items, tc.mode, tc.optional)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for p, mode := range tc.want {
				if f, ok := got[p]; !ok || f.Mode != mode {
					t.Fatalf("%s: got %+v, want mode %v", p, got[p], mode)
				}
			}
		})
	}
	if _, err := volumePayload("secret", data, []api.KeyToPath{{Key: "z", Path: "z"}}, nil, false); err == nil || !strings.Contains(err.Error(), "secret references non-existent secret key: z") {
		t.Fatalf("secret: %v", err)
	}
}

// TestContainerMounts: a worker's volumes for a container, on disk: a
// configMap volume with items, a secret volume in a 0700 directory, an
// optional missing ConfigMap (empty), a subPath resolved into the current
// version, a missing required Secret (errVolume with the kubelet's
// message), and a refresh that follows an update but not a subPath.
func TestContainerMounts(t *testing.T) {
	src := fakeObjects{
		cms:  map[string]*api.ConfigMap{"cfg": {Data: map[string]string{"a": "1", "b": "2"}}},
		secs: map[string]*api.Secret{"db": {Data: map[string][]byte{"pw": []byte("x")}}},
	}
	m := &podManager{cfg: &Config{ResyncPeriod: 10 * time.Second}, log: slog.New(slog.DiscardHandler), podsDir: t.TempDir(), objects: src}
	yes := true
	mode := int32(0o600)
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"}, Spec: api.PodSpec{Volumes: []api.Volume{
		{Name: "cfg", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{LocalObjectReference: api.LocalObjectReference{Name: "cfg"},
			Items: []api.KeyToPath{{Key: "a", Path: "dir/a.conf", Mode: &mode}}}}},
		{Name: "whole", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{LocalObjectReference: api.LocalObjectReference{Name: "cfg"}}}},
		{Name: "sec", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: "db"}}},
		{Name: "opt", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{LocalObjectReference: api.LocalObjectReference{Name: "none"}, Optional: &yes}}},
		{Name: "req", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: "none"}}},
		{Name: "scratch", VolumeSource: api.VolumeSource{EmptyDir: &api.EmptyDirVolumeSource{}}},
	}}}
	w := newPodWorker(m, pod)
	c := &api.Container{Name: "app", VolumeMounts: []api.VolumeMount{
		{Name: "cfg", MountPath: "/etc/cfg"}, {Name: "whole", MountPath: "/etc/b", SubPath: "b"},
		{Name: "sec", MountPath: "/etc/sec"}, {Name: "opt", MountPath: "/etc/opt"}, {Name: "scratch", MountPath: "/tmp/s", SubPath: "sub"},
	}}
	mounts, err := w.containerMounts(t.Context(), pod, c)
	if err != nil {
		t.Fatal(err)
	}
	byDst := map[string]runtime.Mount{}
	for _, mt := range mounts {
		byDst[mt.Destination] = mt
	}
	if mt := byDst["/etc/cfg"]; !mt.ReadOnly || readString(t, filepath.Join(mt.Source, "dir/a.conf")) != "1" {
		t.Fatalf("cfg mount %+v", mt)
	}
	if st, err := os.Stat(filepath.Join(byDst["/etc/cfg"].Source, "dir/a.conf")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("item mode: %v %v", st, err)
	}
	sub := byDst["/etc/b"].Source
	if !strings.Contains(sub, "/..2") || readString(t, sub) != "2" {
		t.Fatalf("subPath source %q, want the file in the current version", sub)
	}
	secDir := byDst["/etc/sec"].Source
	if readString(t, filepath.Join(secDir, "pw")) != "x" {
		t.Fatal("secret file")
	}
	if st, err := os.Stat(filepath.Dir(secDir)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("secret volumes dir: %v %v", st, err)
	}
	if ents, err := os.ReadDir(byDst["/etc/opt"].Source); err != nil || len(ents) != 2 { // ..data and one version
		t.Fatalf("optional missing: %v %v", ents, err)
	}
	if st, err := os.Stat(byDst["/tmp/s"].Source); err != nil || !st.IsDir() || byDst["/tmp/s"].ReadOnly {
		t.Fatalf("emptyDir subPath: %v %v", st, err)
	}

	_, err = w.containerMounts(t.Context(), pod, &api.Container{Name: "bad", VolumeMounts: []api.VolumeMount{{Name: "req", MountPath: "/x"}}})
	var ve errVolume
	if !errors.As(err, &ve) || ve.Error() != `MountVolume.SetUp failed for volume "req" : secret "none" not found` {
		t.Fatalf("required missing secret: %v", err)
	}

	src.cms["cfg"].Data["a"] = "10"
	src.cms["cfg"].Data["b"] = "20"
	w.refreshVolumes(t.Context(), pod, time.Now())
	if got := readString(t, filepath.Join(byDst["/etc/cfg"].Source, "dir/a.conf")); got != "10" {
		t.Fatalf("after the refresh a.conf = %q", got)
	}
	if w.volumesAt.IsZero() {
		t.Fatal("no next refresh planned")
	}
	if got := readString(t, filepath.Join(filepath.Dir(filepath.Dir(sub)), "b")); got != "20" {
		t.Fatalf("whole volume b = %q", got)
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
