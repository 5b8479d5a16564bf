package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
)

// lockedBuffer collects log lines from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestSecretsNeverInLogsOrEvents (process runtime, --secrets-encryption):
// a Secret created, updated (data, then stringData) and used by a pod
// (env and volume), and a pod that asks for a key the Secret lacks
// (CreateContainerConfigError with its Event), leave none of the Secret's
// values, plain or base64, in any line the server and its agent log at
// Debug, nor in any Event.
func TestSecretsNeverInLogsOrEvents(t *testing.T) {
	logs := &lockedBuffer{}
	var w io.Writer = logs
	if os.Getenv("SKIFF_TEST_LOG") != "" {
		w = io.MultiWriter(logs, os.Stderr)
	}
	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newClusterLog(t, "iptables", log, func(cfg *config.Server) { cfg.SecretsEncryption = true })
	ctx := context.Background()
	values := []string{"e2e-secret-v1-5c2b9f0e", "e2e-secret-v2-a83d17c4", "e2e-secret-v3-0f61be92"}
	mnt := t.TempDir()

	if err := c.admin.Create(ctx, resSecrets, "default", &api.Secret{ObjectMeta: api.ObjectMeta{Name: "db"},
		Data: map[string][]byte{"password": []byte(values[0])}}); err != nil {
		t.Fatal(err)
	}
	var s api.Secret
	if err := c.admin.Get(ctx, resSecrets, "default", "db", &s); err != nil {
		t.Fatal(err)
	}
	s.Data["password"] = []byte(values[1])
	if err := c.admin.Update(ctx, resSecrets, "default", &s); err != nil {
		t.Fatal(err)
	}
	ref := func(key string) []api.EnvVar {
		return []api.EnvVar{{Name: "PW", ValueFrom: &api.EnvVarSource{SecretKeyRef: &api.SecretKeySelector{
			LocalObjectReference: api.LocalObjectReference{Name: "db"}, Key: key}}}}
	}
	// The command checks the value without printing it.
	script := `[ -n "$PW" ] && echo has-pw; while true; do echo "len=$(wc -c < ` + mnt + `/sec/password)"; sleep 0.5; done`
	for _, p := range []*api.Pod{
		{ObjectMeta: api.ObjectMeta{Name: "uses"}, Spec: api.PodSpec{
			Volumes: []api.Volume{{Name: "sec", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: "db"}}}},
			Containers: []api.Container{{Name: "app", Image: "none", Command: []string{"sh", "-c", script}, Env: ref("password"),
				VolumeMounts: []api.VolumeMount{{Name: "sec", MountPath: mnt + "/sec"}}}},
		}},
		{ObjectMeta: api.ObjectMeta{Name: "nokey"}, Spec: api.PodSpec{
			Containers: []api.Container{{Name: "app", Image: "none", Command: []string{"sleep", "3600"}, Env: ref("missing")}},
		}},
	} {
		if err := c.admin.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "uses starts with the Secret", func() (bool, error) {
		out, _ := c.cli("logs", "uses")
		return strings.Contains(out, "has-pw") && strings.Contains(out, fmt.Sprintf("len=%d", len(values[1]))), fmt.Errorf("logs %q", out)
	})
	want := `couldn't find key missing in Secret default/db`
	eventually(t, 30*time.Second, "nokey waits in CreateContainerConfigError", func() (bool, error) {
		cs := c.pod("default", "nokey").Status.ContainerStatuses
		if len(cs) != 1 || cs[0].State.Waiting == nil {
			return false, fmt.Errorf("statuses %+v", cs)
		}
		w := cs[0].State.Waiting
		return w.Reason == "CreateContainerConfigError" && strings.Contains(w.Message, want) && c.hasEvent("nokey", "Failed", want),
			fmt.Errorf("waiting %+v", w)
	})
	// A stringData update reaches the volume.
	if err := c.admin.Patch(ctx, resSecrets, "default", "db", "application/merge-patch+json",
		[]byte(`{"stringData":{"password":"`+values[2]+`"}}`), &api.Secret{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the volume follows the update", func() (bool, error) {
		out, _ := c.cli("logs", "uses")
		return strings.Contains(out, fmt.Sprintf("len=%d", len(values[2]))), fmt.Errorf("logs end %q", out[max(0, len(out)-200):])
	})

	var events api.EventList
	if err := c.admin.List(ctx, resEvents, "", client.ListOptions{}, &events); err != nil {
		t.Fatal(err)
	}
	evJSON, err := json.Marshal(events.Items)
	if err != nil {
		t.Fatal(err)
	}
	text := logs.String()
	// The logs saw the Secret's traffic: the grep below can find things.
	for _, w := range []string{"/api/v1/namespaces/default/secrets/db", "couldn't find key missing"} {
		if !strings.Contains(text, w) && !bytes.Contains(evJSON, []byte(w)) {
			t.Errorf("neither the logs nor the Events mention %q: the test sees nothing", w)
		}
	}
	for _, v := range values {
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			for i, line := range strings.Split(text, "\n") {
				if strings.Contains(line, form) {
					t.Errorf("log line %d holds the Secret's value %q: %s", i+1, form, line)
				}
			}
			if bytes.Contains(evJSON, []byte(form)) {
				t.Errorf("an Event holds the Secret's value %q: %s", form, evJSON)
			}
		}
	}
	t.Logf("%d log lines, %d Events checked", strings.Count(text, "\n"), len(events.Items))
}
