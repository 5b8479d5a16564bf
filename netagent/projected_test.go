package netagent

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

func TestDownwardPayload(t *testing.T) {
	m := func(v int32) *int32 { return &v }
	div := api.Quantity("1Mi")
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web-0", Namespace: "shop", UID: "u-1",
		Labels:      map[string]string{"app": "web", "tier": "front"},
		Annotations: map[string]string{"note": `say "hi"`}},
		Spec: api.PodSpec{Containers: []api.Container{{Name: "app", Resources: api.ResourceRequirements{
			Limits: api.ResourceList{"memory": "64Mi", "cpu": "250m"}}}}}}
	got, err := downwardPayload(pod, []api.DownwardAPIVolumeFile{
		{Path: "labels", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		{Path: "annotations", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.annotations"}, Mode: m(0o400)},
		{Path: "sub/app", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}},
		{Path: "name", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.name"}},
		{Path: "namespace", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.namespace"}},
		{Path: "uid", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.uid"}},
		{Path: "mem", ResourceFieldRef: &api.ResourceFieldSelector{ContainerName: "app", Resource: "limits.memory", Divisor: &div}},
		{Path: "cpu", ResourceFieldRef: &api.ResourceFieldSelector{ContainerName: "app", Resource: "limits.cpu"}},
	}, m(0o440))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		data string
		mode fs.FileMode
	}{
		"labels":      {"app=\"web\"\ntier=\"front\"", 0o440},
		"annotations": {`note="say \"hi\""`, 0o400},
		"sub/app":     {"web", 0o440},
		"name":        {"web-0", 0o440},
		"namespace":   {"shop", 0o440},
		"uid":         {"u-1", 0o440},
		"mem":         {"64", 0o440},
		"cpu":         {"1", 0o440}, // rounded up, as the kubelet
	}
	if len(got) != len(want) {
		t.Fatalf("got %d files, want %d: %v", len(got), len(want), got)
	}
	for p, w := range want {
		if f := got[p]; string(f.Data) != w.data || f.Mode != w.mode {
			t.Errorf("%s = %q %o, want %q %o", p, f.Data, f.Mode, w.data, w.mode)
		}
	}
	if _, err := downwardPayload(pod, []api.DownwardAPIVolumeFile{{Path: "x", ResourceFieldRef: &api.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}}}, nil); err == nil {
		t.Error("a resource of an unknown container was accepted")
	}
}

// fakeTokens answers TokenRequests with numbered tokens.
type fakeTokens struct {
	now   func() time.Time
	n     int
	fail  bool
	last  *tokenRequest
	names []string
}

func (f *fakeTokens) serviceAccountToken(_ context.Context, ns, name string, req *tokenRequest) (*tokenRequest, error) {
	f.last = req
	f.names = append(f.names, ns+"/"+name)
	if f.fail {
		return nil, errors.New("server unreachable")
	}
	f.n++
	out := *req
	out.Status.Token = "token-" + string(rune('0'+f.n))
	out.Status.ExpirationTimestamp = api.Time{Time: f.now().Add(time.Duration(*req.Spec.ExpirationSeconds) * time.Second)}
	return &out, nil
}

// TestProjectedVolume: the token volume the admission adds (token,
// ca.crt, namespace) plus a downwardAPI volume, their files and modes;
// labels rewritten in place; the token refreshed at 80% of its lifetime
// and kept when a refresh fails.
func TestProjectedVolume(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	toks := &fakeTokens{now: clock}
	src := fakeObjects{cms: map[string]*api.ConfigMap{"kube-root-ca.crt": {Data: map[string]string{"ca.crt": "PEM"}}}}
	m := &podManager{cfg: &Config{ResyncPeriod: 10 * time.Second}, log: slog.New(slog.DiscardHandler), podsDir: t.TempDir(),
		objects: src, tokens: toks, now: clock}
	exp := int64(3607)
	mode := int32(0o644)
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1", Labels: map[string]string{"app": "a"}},
		Spec: api.PodSpec{ServiceAccountName: "robot", Volumes: []api.Volume{
			{Name: "kube-api-access-abcde", VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{DefaultMode: &mode, Sources: []api.VolumeProjection{
				{ServiceAccountToken: &api.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &exp}},
				{ConfigMap: &api.ConfigMapProjection{LocalObjectReference: api.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []api.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				{DownwardAPI: &api.DownwardAPIProjection{Items: []api.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
			}}}},
			{Name: "info", VolumeSource: api.VolumeSource{DownwardAPI: &api.DownwardAPIVolumeSource{Items: []api.DownwardAPIVolumeFile{
				{Path: "labels", FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
		}}}
	w := newPodWorker(m, pod)
	c := &api.Container{Name: "app", VolumeMounts: []api.VolumeMount{
		{Name: "kube-api-access-abcde", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
		{Name: "info", MountPath: "/etc/info"},
	}}
	mounts, err := w.containerMounts(t.Context(), pod, c)
	if err != nil {
		t.Fatal(err)
	}
	sa, info := mounts[0].Source, mounts[1].Source
	if !mounts[0].ReadOnly || !mounts[1].ReadOnly {
		t.Errorf("mounts not read-only: %+v", mounts)
	}
	if !strings.Contains(sa, volKindProjected) || !strings.Contains(info, volKindDownwardAPI) {
		t.Errorf("dirs %s %s", sa, info)
	}
	for p, want := range map[string]string{"token": "token-1", "ca.crt": "PEM", "namespace": "ns"} {
		if got := readString(t, filepath.Join(sa, p)); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
		if st, err := os.Stat(filepath.Join(sa, p)); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s mode: %v %v", p, st.Mode(), err)
		}
	}
	if st, err := os.Stat(filepath.Dir(sa)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("projected volumes dir: %v %v", st.Mode(), err)
	}
	r := toks.last
	if toks.names[0] != "ns/robot" || *r.Spec.ExpirationSeconds != 3607 || r.Spec.BoundObjectRef == nil ||
		*r.Spec.BoundObjectRef != (boundObjectRef{Kind: "Pod", APIVersion: "v1", Name: "p", UID: "u1"}) || len(r.Spec.Audiences) != 0 {
		t.Errorf("token request %+v to %v", r.Spec, toks.names)
	}
	if got := readString(t, filepath.Join(info, "labels")); got != `app="a"` {
		t.Errorf("labels = %q", got)
	}

	// A label change: the file changes in place at the next refresh.
	pod2 := api.DeepCopy(pod)
	pod2.Labels["tier"] = "front"
	w.refreshVolumes(t.Context(), pod2, now)
	if got := readString(t, filepath.Join(info, "labels")); got != "app=\"a\"\ntier=\"front\"" {
		t.Errorf("labels after the change = %q", got)
	}
	if toks.n != 1 {
		t.Errorf("%d token requests before 80%% of the lifetime", toks.n)
	}

	// Short of 80% of the lifetime (less the 10s jitter): the same token.
	life := time.Duration(exp) * time.Second
	now = now.Add(life*80/100 - tokenMaxJitter - time.Second)
	w.refreshVolumes(t.Context(), pod2, now.Add(time.Hour)) // past volumesAt
	if toks.n != 1 || readString(t, filepath.Join(sa, "token")) != "token-1" {
		t.Fatalf("refreshed early: %d requests", toks.n)
	}
	// Past 80%: a new token, written in place.
	now = now.Add(tokenMaxJitter + 2*time.Second)
	w.volumesAt = time.Time{}
	w.refreshVolumes(t.Context(), pod2, now)
	if toks.n != 2 || readString(t, filepath.Join(sa, "token")) != "token-2" {
		t.Fatalf("not refreshed at 80%%: %d requests, token %q", toks.n, readString(t, filepath.Join(sa, "token")))
	}
	// A failed refresh keeps the token still valid.
	toks.fail = true
	now = now.Add(life * 85 / 100)
	w.volumesAt = time.Time{}
	w.refreshVolumes(t.Context(), pod2, now)
	if readString(t, filepath.Join(sa, "token")) != "token-2" || len(toks.names) != 3 {
		t.Fatalf("failed refresh: token %q, %d requests", readString(t, filepath.Join(sa, "token")), len(toks.names))
	}
	// Once it has expired, a failure fails the volume (a new container
	// waits) and the files stay.
	now = now.Add(life)
	_, err = w.containerMounts(t.Context(), pod2, c)
	var ve errVolume
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "failed to fetch token") || strings.Contains(err.Error(), "token-") {
		t.Fatalf("expired token, failing API: %v", err)
	}
}

func TestTokenRefreshAfter24h(t *testing.T) {
	iat := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tok := &podToken{exp: iat.Add(30 * 24 * time.Hour), lifetime: 30 * 24 * time.Hour}
	if tok.needsRefresh(iat.Add(23*time.Hour), 0) {
		t.Error("refresh before 24h of a 30 day token")
	}
	if !tok.needsRefresh(iat.Add(24*time.Hour+time.Second), 0) {
		t.Error("no refresh after 24h")
	}
}

// TestProjectedTokenModeWithFSGroup: with an fsGroup the token is 0600
// (the kubelet's rule) plus g+r for the group (SetVolumeOwnership), so a
// non-root container user in the group reads it.
func TestProjectedTokenModeWithFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the volume is chowned to the pod's fsGroup")
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	m := &podManager{cfg: &Config{ResyncPeriod: 10 * time.Second}, log: slog.New(slog.DiscardHandler), podsDir: t.TempDir(),
		objects: fakeObjects{}, tokens: &fakeTokens{now: clock}, now: clock}
	g := int64(2000)
	mode := int32(0o644)
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "ns", UID: "u1"}, Spec: api.PodSpec{
		SecurityContext: &api.PodSecurityContext{FSGroup: &g},
		Volumes: []api.Volume{{Name: "t", VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{DefaultMode: &mode, Sources: []api.VolumeProjection{
			{ServiceAccountToken: &api.ServiceAccountTokenProjection{Path: "token"}},
			{ConfigMap: &api.ConfigMapProjection{LocalObjectReference: api.LocalObjectReference{Name: "gone"}, Optional: new(true)}},
		}}}}}}}
	w := newPodWorker(m, pod)
	mounts, err := w.containerMounts(t.Context(), pod, &api.Container{Name: "a", VolumeMounts: []api.VolumeMount{{Name: "t", MountPath: "/t"}}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(mounts[0].Source, "token")); err != nil || st.Mode().Perm() != 0o640 || st.Sys().(*syscall.Stat_t).Gid != 2000 {
		t.Fatalf("token mode with fsGroup: %v %v", st, err)
	}
}

func TestServiceEnvVars(t *testing.T) {
	svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "kubernetes", Namespace: "default"}, Spec: api.ServiceSpec{
		ClusterIP: "10.96.0.1", Ports: []api.ServicePort{{Name: "https", Port: 443, Protocol: "TCP"}}}}
	got := strings.Join(serviceEnvVars(svc), " ")
	want := "KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443 KUBERNETES_SERVICE_PORT_HTTPS=443 " +
		"KUBERNETES_PORT=tcp://10.96.0.1:443 KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443 KUBERNETES_PORT_443_TCP_PROTO=tcp " +
		"KUBERNETES_PORT_443_TCP_PORT=443 KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "ns"}}
	c := &api.Container{Name: "a", Env: []api.EnvVar{
		{Name: "KUBERNETES_SERVICE_HOST", Value: "mine"},
		{Name: "URL", Value: "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"},
	}}
	env, _, err := containerEnv(t.Context(), pod, c, envContext{serviceEnv: serviceEnvVars(svc)}, fakeObjects{})
	if err != nil {
		t.Fatal(err)
	}
	if env[0] != "KUBERNETES_SERVICE_HOST=mine" || env[1] != "URL=https://mine:443" || env[2] != "KUBERNETES_SERVICE_PORT=443" || len(env) != 9 {
		t.Errorf("env = %v", env)
	}
	if serviceEnvVars(&api.Service{Spec: api.ServiceSpec{ClusterIP: "None", Ports: svc.Spec.Ports}}) != nil {
		t.Error("a headless Service has variables")
	}
}
