package netagent_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
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
	"github.com/skiff-dev/skiff/netagent/runtime/containerd"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/registrytest"
)

var resSecrets = api.Lookup(resources, "v1", "secrets")

// registrySecret is a kubernetes.io/dockerconfigjson Secret for server.
func registrySecret(name, server, user, password string) *api.Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	cfg, _ := json.Marshal(map[string]any{"auths": map[string]any{server: map[string]string{"auth": auth}}})
	return &api.Secret{ObjectMeta: api.ObjectMeta{Name: name}, Type: api.SecretTypeDockerConfigJSON,
		Data: map[string][]byte{api.DockerConfigJSONKey: cfg}}
}

// TestAgentPullSecrets runs the agent on containerd against a real
// docker-registry with htpasswd auth on 127.0.0.1 (the image pushed into
// it through containerd's client): a pod whose imagePullSecrets hold the
// right password runs, and so does one whose ServiceAccount lists them;
// one with no secret, and one with a wrong password, wait with
// ErrImagePull / ImagePullBackOff and the kubelet's Failed event (401
// Unauthorized); one whose secret is missing says so
// (FailedToRetrieveImagePullSecret) and runs once the secret is created.
// The agent reads the secrets with its node credentials (the node
// authorizer's graph edge pod -> imagePullSecrets). No password reaches
// the agent's debug log, an event or a pod's status.
func TestAgentPullSecrets(t *testing.T) {
	requireNode(t)
	workload, skiff := requireContainerd(t)
	const password, wrong = "agent-registry-pw-5d1e", "agent-wrong-pw-0b7c"
	reg := registrytest.Start(t, map[string]string{"puller": password})
	ctx := context.Background()
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	dataDir, err := os.MkdirTemp("", "skps")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dataDir) })
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rt, name, err := netagent.SelectRuntime(ctx, "containerd", netagent.RuntimeOptions{DataDir: dataDir, ContainerdSocket: filepath.Join(dataDir, "none.sock"), ContainerdLogger: skiff, Logger: log})
	if err != nil || name != "containerd" {
		t.Fatalf("SelectRuntime: %q %v", name, err)
	}
	crt := rt.(*containerd.Runtime)
	t.Cleanup(func() {
		cs, _ := crt.List(ctx)
		for _, c := range cs {
			_ = crt.Remove(ctx, c.ID)
		}
		crt.Close()
	})
	ref := reg.Addr + "/private/netexec:v1"
	if err := registrytest.Push(ctx, containerd.DaemonSocket(netagent.ManagedContainerdDir(dataDir)), ref, workloadImage("ignored", workload), "puller", password); err != nil {
		t.Fatal(err)
	}
	for _, sec := range []*api.Secret{
		registrySecret("regcred", reg.Addr, "puller", password),
		registrySecret("badcred", "http://"+reg.Addr, "puller", wrong),
	} {
		if err := admin.Create(ctx, resSecrets, "default", sec); err != nil {
			t.Fatal(err)
		}
	}
	resSAs := api.Lookup(resources, "v1", "serviceaccounts")
	if err := admin.Create(ctx, resSAs, "default", &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "puller"},
		ImagePullSecrets: []api.LocalObjectReference{{Name: "regcred"}}}); err != nil {
		t.Fatal(err)
	}

	ns := netnstest.NewNode(t)
	cfg := netagent.Config{
		Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
		NodeName: "node-pull", NodeIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")},
		DataDir: dataDir, Runtime: name, DNSUpstreams: []string{},
		RelistPeriod: 200 * time.Millisecond, BackoffBase: 4 * time.Second, BackoffMax: 8 * time.Second, Logger: log,
	}
	startAgent(t, nil, cfg, netagent.Deps{Runtime: rt, NodeNetNS: ns.Do})
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range []string{"with-secret", "via-sa", "no-secret", "wrong-password", "later"} {
				var p api.Pod
				_ = admin.Get(ctx, resPods, "default", name, &p)
				t.Logf("%s: %+v\n%s", name, p.Status.ContainerStatuses, strings.Join(podEvents(t, admin, name), "\n"))
			}
		}
	})

	pod := func(name, sa string, secrets ...string) *api.Pod {
		p := &api.Pod{
			ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
			Spec: api.PodSpec{ServiceAccountName: sa, Containers: []api.Container{{
				Name: "netexec", Image: ref, ImagePullPolicy: api.PullAlways,
				Args: []string{"netexec", "--http-port=8080", "--udp-port=-1"},
			}}},
		}
		for _, s := range secrets {
			p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, api.LocalObjectReference{Name: s})
		}
		return p
	}
	for _, p := range []*api.Pod{
		pod("with-secret", "", "badcred", "regcred"),
		pod("via-sa", "puller"),
		pod("no-secret", ""),
		pod("wrong-password", "", "badcred"),
		pod("later", "", "latecred"),
	} {
		if err := admin.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
	}
	waiting := func(reasons ...string) func(*api.Pod) bool {
		return func(p *api.Pod) bool {
			cs := p.Status.ContainerStatuses
			if len(cs) != 1 || cs[0].State.Waiting == nil {
				return false
			}
			for _, r := range reasons {
				if cs[0].State.Waiting.Reason == r {
					return true
				}
			}
			return false
		}
	}
	for _, name := range []string{"with-secret", "via-sa"} {
		waitPod(t, admin, name, 60*time.Second, "Ready", podReady)
	}
	for _, name := range []string{"no-secret", "wrong-password", "later"} {
		// ErrImagePull lasts until the next sync, which makes it
		// ImagePullBackOff (the Error: ErrImagePull event stays).
		waitPod(t, admin, name, 30*time.Second, "waiting with ErrImagePull", waiting("ErrImagePull", "ImagePullBackOff"))
		waitPod(t, admin, name, 30*time.Second, "waiting with ImagePullBackOff", waiting("ImagePullBackOff"))
	}
	failed := `Failed: Failed to pull image "` + ref + `": `
	eventually(t, 20*time.Second, "Failed events", func() (bool, error) {
		for _, name := range []string{"no-secret", "wrong-password", "later"} {
			evs := podEvents(t, admin, name)
			if !hasEvent(evs, failed) || !hasEvent(evs, "Failed: Error: ErrImagePull") || !hasEvent(evs, `BackOff: Back-off pulling image "`+ref+`"`) {
				return false, nil
			}
			for _, e := range evs {
				if strings.HasPrefix(e, failed) && !strings.Contains(e, "401 Unauthorized") {
					t.Fatalf("%s: %s, want 401 Unauthorized", name, e)
				}
			}
		}
		return hasEvent(podEvents(t, admin, "later"), "FailedToRetrieveImagePullSecret: Unable to retrieve some image pull secrets (latecred); attempting to pull the image may not succeed."), nil
	})
	var sa api.Pod
	if err := admin.Get(ctx, resPods, "default", "via-sa", &sa); err != nil || len(sa.Spec.ImagePullSecrets) != 1 || sa.Spec.ImagePullSecrets[0].Name != "regcred" {
		t.Fatalf("via-sa: imagePullSecrets %+v %v, want the ServiceAccount's", sa.Spec.ImagePullSecrets, err)
	}
	// The missing secret appears: the next retry pulls.
	if err := admin.Create(ctx, resSecrets, "default", registrySecret("latecred", "https://"+reg.Addr+"/private", "puller", password)); err != nil {
		t.Fatal(err)
	}
	waitPod(t, admin, "later", 60*time.Second, "Ready once its secret exists", podReady)
	waitPod(t, admin, "no-secret", 5*time.Second, "still failing", waiting("ErrImagePull", "ImagePullBackOff"))

	t.Logf("no-secret's events: %q", podEvents(t, admin, "no-secret"))
	// Nothing printed a password.
	var el api.EventList
	if err := admin.List(ctx, resEvents, "default", client.ListOptions{}, &el); err != nil {
		t.Fatal(err)
	}
	var pl api.PodList
	if err := admin.List(ctx, resPods, "default", client.ListOptions{}, &pl); err != nil {
		t.Fatal(err)
	}
	evJSON, _ := json.Marshal(el)
	podJSON, _ := json.Marshal(pl)
	all := logs.String()
	if !strings.Contains(all, "containerd client") || !strings.Contains(all, "401 Unauthorized") {
		t.Fatalf("the debug log lacks the client's lines or the failed pulls (the check would be vacuous):\n%.4000s", all)
	}
	for what, s := range map[string]string{"the agent's log": all, "the events": string(evJSON), "the pods": string(podJSON)} {
		if strings.Contains(s, password) || strings.Contains(s, wrong) {
			t.Fatalf("a password is in %s", what)
		}
	}
	for _, p := range pl.Items {
		if err := admin.Delete(ctx, resPods, "default", p.Name, client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "containers removed", func() (bool, error) {
		cs, err := crt.List(ctx)
		return len(cs) == 0, err
	})
}
