package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

var (
	resConfigMaps = api.Lookup(resources, "v1", "configmaps")
	resSecrets    = api.Lookup(resources, "v1", "secrets")
)

// TestConfigMapsAndSecretsInPods (process runtime): a container's env
// from configMapKeyRef, secretKeyRef and envFrom (with a prefix), and
// configMap and secret volumes (items, modes) at their mount paths,
// updated in place after the ConfigMap changes; a container whose
// ConfigMap is missing waits in CreateContainerConfigError with the
// kubelet's message and an Event, and starts once the ConfigMap exists;
// no Event holds the Secret's value.
func TestConfigMapsAndSecretsInPods(t *testing.T) {
	c := newCluster(t, "iptables")
	ctx := context.Background()
	mnt := filepath.Join(t.TempDir(), "mnt") // the process runtime shares the node's file system
	mustCreate := func(info *api.ResourceInfo, obj api.Object) {
		t.Helper()
		if err := c.admin.Create(ctx, info, "default", obj); err != nil {
			t.Fatal(err)
		}
	}
	mustCreate(resConfigMaps, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "cfg"},
		Data: map[string]string{"key": "v1", "MODE": "fast", "1bad": "x"}})
	mustCreate(resSecrets, &api.Secret{ObjectMeta: api.ObjectMeta{Name: "db"},
		Data: map[string][]byte{"password": []byte("s3cret-value")}})
	mode := int32(0o400)
	script := `echo "FOO=$FOO PW=$PW CFG_MODE=$CFG_MODE"; echo "mode=$(stat -L -c %a ` + mnt + `/sec/pw)"; ` +
		`while true; do echo "file=$(cat ` + mnt + `/cfg/key) item=$(cat ` + mnt + `/sec/pw)"; sleep 0.5; done`
	mustCreate(resPods, &api.Pod{ObjectMeta: api.ObjectMeta{Name: "cfgpod"}, Spec: api.PodSpec{
		Volumes: []api.Volume{
			{Name: "cfg", VolumeSource: api.VolumeSource{ConfigMap: &api.ConfigMapVolumeSource{LocalObjectReference: api.LocalObjectReference{Name: "cfg"}}}},
			{Name: "sec", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: "db",
				Items: []api.KeyToPath{{Key: "password", Path: "pw", Mode: &mode}}}}},
		},
		Containers: []api.Container{{Name: "app", Image: "none", Command: []string{"sh", "-c", script},
			EnvFrom: []api.EnvFromSource{
				{Prefix: "CFG_", ConfigMapRef: &api.ConfigMapEnvSource{LocalObjectReference: api.LocalObjectReference{Name: "cfg"}}},
				{ConfigMapRef: &api.ConfigMapEnvSource{LocalObjectReference: api.LocalObjectReference{Name: "cfg"}}}, // 1bad is skipped
			},
			Env: []api.EnvVar{
				{Name: "FOO", ValueFrom: &api.EnvVarSource{ConfigMapKeyRef: &api.ConfigMapKeySelector{LocalObjectReference: api.LocalObjectReference{Name: "cfg"}, Key: "key"}}},
				{Name: "PW", ValueFrom: &api.EnvVarSource{SecretKeyRef: &api.SecretKeySelector{LocalObjectReference: api.LocalObjectReference{Name: "db"}, Key: "password"}}},
			},
			VolumeMounts: []api.VolumeMount{{Name: "cfg", MountPath: mnt + "/cfg"}, {Name: "sec", MountPath: mnt + "/sec"}},
		}},
	}})
	// A pod whose ConfigMap comes later.
	mustCreate(resPods, &api.Pod{ObjectMeta: api.ObjectMeta{Name: "latepod"}, Spec: api.PodSpec{
		Containers: []api.Container{{Name: "app", Image: "none", Command: []string{"sh", "-c", `echo "LATE=$LATE"; sleep 3600`},
			Env: []api.EnvVar{{Name: "LATE", ValueFrom: &api.EnvVarSource{ConfigMapKeyRef: &api.ConfigMapKeySelector{
				LocalObjectReference: api.LocalObjectReference{Name: "late"}, Key: "k"}}}},
		}},
	}})

	logs := func(pod string) string {
		out, _ := c.cli("logs", pod)
		return out
	}
	eventually(t, 30*time.Second, "cfgpod shows its env and volumes", func() (bool, error) {
		out := logs("cfgpod")
		ok := strings.Contains(out, "FOO=v1 PW=s3cret-value CFG_MODE=fast") && strings.Contains(out, "mode=400") &&
			strings.Contains(out, "file=v1 item=s3cret-value")
		return ok, fmt.Errorf("logs: %q; status %+v", out, c.pod("default", "cfgpod").Status.ContainerStatuses)
	})
	if !c.hasEvent("cfgpod", "InvalidEnvironmentVariableNames", "Keys [1bad] from the EnvFrom configMap default/cfg") {
		t.Error("no InvalidEnvironmentVariableNames Event for the key 1bad")
	}

	c.run(t, "a configMap volume follows an update", func(t *testing.T) {
		var cm api.ConfigMap
		if err := c.admin.Get(ctx, resConfigMaps, "default", "cfg", &cm); err != nil {
			t.Fatal(err)
		}
		cm.Data["key"] = "v2"
		if err := c.admin.Update(ctx, resConfigMaps, "default", &cm); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		eventually(t, 30*time.Second, "the file reads v2", func() (bool, error) {
			out := logs("cfgpod")
			return strings.Contains(out, "file=v2"), fmt.Errorf("logs end: %q", out[max(0, len(out)-200):])
		})
		t.Logf("configMap update visible in the volume after %v", time.Since(start).Round(100*time.Millisecond))
	})

	c.run(t, "a missing ConfigMap: CreateContainerConfigError, then a start", func(t *testing.T) {
		want := `configmap "late" not found`
		eventually(t, 20*time.Second, "latepod waits in CreateContainerConfigError", func() (bool, error) {
			cs := c.pod("default", "latepod").Status.ContainerStatuses
			if len(cs) != 1 || cs[0].State.Waiting == nil {
				return false, fmt.Errorf("statuses %+v", cs)
			}
			w := cs[0].State.Waiting
			return w.Reason == "CreateContainerConfigError" && w.Message == want && c.hasEvent("latepod", "Failed", want),
				fmt.Errorf("waiting %+v", w)
		})
		mustCreate(resConfigMaps, &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "late"}, Data: map[string]string{"k": "here"}})
		eventually(t, 30*time.Second, "latepod starts with the value", func() (bool, error) {
			out := logs("latepod")
			return strings.Contains(out, "LATE=here"), fmt.Errorf("logs %q, statuses %+v", out, c.pod("default", "latepod").Status.ContainerStatuses)
		})
	})

	c.run(t, "no Event holds the Secret's value", func(t *testing.T) {
		var l api.EventList
		if err := c.admin.List(ctx, resEvents, "default", client.ListOptions{}, &l); err != nil {
			t.Fatal(err)
		}
		for _, e := range l.Items {
			if strings.Contains(e.Message, "s3cret") {
				t.Fatalf("event %s: %q", e.Reason, e.Message)
			}
		}
	})
}
