package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

var (
	resConfigMaps = api.Lookup(resources, "v1", "configmaps")
	resSecrets    = api.Lookup(resources, "v1", "secrets")
	resSAs        = api.Lookup(resources, "v1", "serviceaccounts")
)

// configKindsInvalid asserts err is a 422 whose message holds want.
func configKindsInvalid(t *testing.T, err error, want string) {
	t.Helper()
	var ae *client.APIError
	if !asErr(err, &ae) || ae.Status.Code != http.StatusUnprocessableEntity || ae.Status.Reason != api.StatusReasonInvalid {
		t.Fatalf("want 422 Invalid, got %v", err)
	}
	if !strings.Contains(ae.Status.Message, want) {
		t.Fatalf("message %q lacks %q", ae.Status.Message, want)
	}
}

// configKindsLogs collects every log line of a server at Debug.
type configKindsLogs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *configKindsLogs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *configKindsLogs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func TestConfigMapCreateGetUpdateImmutable(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	c := ts.Client()
	ctx := ctxT(t, 20*time.Second)

	cm := &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "web-conf"},
		Data: map[string]string{"LOG_LEVEL": "debug"}, BinaryData: map[string][]byte{"logo.png": {0x89, 0, 0xff}}}
	if err := c.Create(ctx, resConfigMaps, "default", cm); err != nil {
		t.Fatal(err)
	}
	var got api.ConfigMap
	if err := c.Get(ctx, resConfigMaps, "default", "web-conf", &got); err != nil {
		t.Fatal(err)
	}
	if got.Data["LOG_LEVEL"] != "debug" || !bytes.Equal(got.BinaryData["logo.png"], []byte{0x89, 0, 0xff}) || got.UID == "" {
		t.Fatalf("stored %+v", got)
	}

	got.Data["LOG_LEVEL"] = "info"
	if err := c.Update(ctx, resConfigMaps, "default", &got); err != nil {
		t.Fatalf("update of a mutable ConfigMap: %v", err)
	}
	got.Immutable = ptr(true)
	if err := c.Update(ctx, resConfigMaps, "default", &got); err != nil {
		t.Fatalf("making it immutable: %v", err)
	}

	changed := got
	changed.Data = map[string]string{"LOG_LEVEL": "warn"}
	configKindsInvalid(t, c.Update(ctx, resConfigMaps, "default", &changed),
		`ConfigMap "web-conf" is invalid: data: Forbidden: field is immutable when `+"`immutable`"+` is set`)
	unset := got
	unset.Immutable = nil
	configKindsInvalid(t, c.Update(ctx, resConfigMaps, "default", &unset), "immutable: Forbidden: field is immutable when `immutable` is set")
	patch := []byte(`{"binaryData":{"more":"AA=="}}`)
	configKindsInvalid(t, c.Patch(ctx, resConfigMaps, "default", "web-conf", "application/merge-patch+json", patch, &api.ConfigMap{}),
		"binaryData: Forbidden: field is immutable when `immutable` is set")
	// Metadata still changes.
	labels := []byte(`{"metadata":{"labels":{"tier":"web"}}}`)
	if err := c.Patch(ctx, resConfigMaps, "default", "web-conf", "application/merge-patch+json", labels, &got); err != nil {
		t.Fatalf("labelling an immutable ConfigMap: %v", err)
	}
	if got.Labels["tier"] != "web" || got.Data["LOG_LEVEL"] != "info" {
		t.Fatalf("after label patch: %+v", got)
	}

	// Keys as Kubernetes checks them.
	bad := &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "bad"}, Data: map[string]string{"a/b": "1", "x": "1"}, BinaryData: map[string][]byte{"x": nil}}
	err := c.Create(ctx, resConfigMaps, "default", bad)
	configKindsInvalid(t, err, `data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters`)
	configKindsInvalid(t, err, `data[x]: Invalid value: "x": duplicate of key present in binaryData`)
}

func TestConfigMapAndSecretSizeLimit(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	c := ts.Client()
	ctx := ctxT(t, 20*time.Second)

	half := strings.Repeat("x", api.MaxConfigDataSize/2)
	atLimit := &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "at-limit"}, Data: map[string]string{"a": half, "b": half}}
	if err := c.Create(ctx, resConfigMaps, "default", atLimit); err != nil {
		t.Fatalf("exactly 1 MiB: %v", err)
	}
	over := &api.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "over"}, Data: map[string]string{"a": half}, BinaryData: map[string][]byte{"b": []byte(half + "y")}}
	configKindsInvalid(t, c.Create(ctx, resConfigMaps, "default", over), `ConfigMap "over" is invalid: []: Too long: must have at most 1048576 bytes`)

	sec := &api.Secret{ObjectMeta: api.ObjectMeta{Name: "over"}, Data: map[string][]byte{"a": []byte(half)}, StringData: map[string]string{"b": half + "y"}}
	configKindsInvalid(t, c.Create(ctx, resSecrets, "default", sec), `Secret "over" is invalid: data: Too long: must have at most 1048576 bytes`)
	for _, name := range []string{"over"} {
		if err := c.Get(ctx, resConfigMaps, "default", name, &api.ConfigMap{}); !client.IsNotFound(err) {
			t.Errorf("configmap %s: %v", name, err)
		}
	}
}

// TestSecretStringDataBase64AndNoLogs: data travels base64 and stringData
// is merged into it on create, update and patch, and is never stored nor
// returned; the type defaults to Opaque and is immutable, per-type keys
// are checked, the dashboard token may not read Secrets, and no value
// reaches the server's logs (at Debug).
func TestSecretStringDataBase64AndNoLogs(t *testing.T) {
	logs := &configKindsLogs{}
	ts := servertest.Start(t, servertest.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	hc := httpClient(t, ts.Bundle().CACertPEM)
	token := ts.Bundle().AdminToken
	base := ts.URL() + "/api/v1/namespaces/default/secrets"
	const value = "s3cr3t-value-do-not-log"
	b64 := base64.StdEncoding.EncodeToString([]byte(value))

	body := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},` +
		`"data":{"user":"` + base64.StdEncoding.EncodeToString([]byte("admin")) + `","password":"b2xk"},` +
		`"stringData":{"password":"` + value + `"}}`
	resp := raw(t, hc, http.MethodPost, base, token, []byte(body))
	if resp.code != http.StatusCreated {
		t.Fatalf("create: %d %s", resp.code, resp.body)
	}
	check := func(what string, b []byte, wantData map[string]string) {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v: %s", what, err, b)
		}
		if _, ok := m["stringData"]; ok {
			t.Errorf("%s returned stringData: %s", what, b)
		}
		if m["type"] != "Opaque" {
			t.Errorf("%s: type %v", what, m["type"])
		}
		data, _ := m["data"].(map[string]any)
		if len(data) != len(wantData) {
			t.Errorf("%s: data %v, want %v", what, data, wantData)
		}
		for k, v := range wantData {
			if data[k] != base64.StdEncoding.EncodeToString([]byte(v)) {
				t.Errorf("%s: data[%s] = %v, want base64 of %q", what, k, data[k], v)
			}
		}
	}
	check("create", resp.body, map[string]string{"user": "admin", "password": value})
	get := raw(t, hc, http.MethodGet, base+"/db", token, nil)
	check("get", get.body, map[string]string{"user": "admin", "password": value})
	if !bytes.Contains(get.body, []byte(b64)) {
		t.Fatalf("get lacks the base64 value: %s", get.body)
	}
	list := raw(t, hc, http.MethodGet, base, token, nil)
	if bytes.Contains(list.body, []byte("stringData")) || !bytes.Contains(list.body, []byte(b64)) {
		t.Fatalf("list: %s", list.body)
	}

	// A merge patch with stringData (what kubectl apply sends) lands in data.
	p := raw(t, hc, http.MethodPatch, base+"/db", token, []byte(`{"stringData":{"host":"db.local"}}`), "Content-Type: application/merge-patch+json")
	if p.code != http.StatusOK {
		t.Fatalf("patch: %d %s", p.code, p.body)
	}
	check("patch", p.body, map[string]string{"user": "admin", "password": value, "host": "db.local"})
	// A PUT with stringData only replaces data wholesale.
	var s api.Secret
	if err := json.Unmarshal(p.body, &s); err != nil {
		t.Fatal(err)
	}
	s.Data, s.StringData = nil, map[string]string{"token": "t"}
	put, _ := json.Marshal(&s)
	u := raw(t, hc, http.MethodPut, base+"/db", token, put)
	if u.code != http.StatusOK {
		t.Fatalf("put: %d %s", u.code, u.body)
	}
	check("put", u.body, map[string]string{"token": "t"})

	// The type is immutable; a Secret of a type needs its keys.
	s = api.Secret{}
	if err := json.Unmarshal(u.body, &s); err != nil {
		t.Fatal(err)
	}
	s.Type = api.SecretTypeTLS
	c := ts.Client()
	ctx := ctxT(t, 20*time.Second)
	configKindsInvalid(t, c.Update(ctx, resSecrets, "default", &s), `type: Invalid value: "kubernetes.io/tls": field is immutable`)
	tls := &api.Secret{ObjectMeta: api.ObjectMeta{Name: "cert"}, Type: api.SecretTypeTLS, StringData: map[string]string{"tls.crt": "c"}}
	configKindsInvalid(t, c.Create(ctx, resSecrets, "default", tls), "data[tls.key]: Required value")
	docker := &api.Secret{ObjectMeta: api.ObjectMeta{Name: "pull"}, Type: api.SecretTypeDockerConfigJSON, StringData: map[string]string{".dockerconfigjson": value}}
	err := c.Create(ctx, resSecrets, "default", docker)
	configKindsInvalid(t, err, `data[.dockerconfigjson]: Invalid value: "<secret contents redacted>"`)
	if strings.Contains(err.Error(), value) {
		t.Fatalf("the error shows the secret: %v", err)
	}

	// An immutable Secret keeps its data.
	imm := &api.Secret{ObjectMeta: api.ObjectMeta{Name: "frozen"}, Immutable: ptr(true), StringData: map[string]string{"k": "v"}}
	if err := c.Create(ctx, resSecrets, "default", imm); err != nil {
		t.Fatal(err)
	}
	configKindsInvalid(t, c.Patch(ctx, resSecrets, "default", "frozen", "application/merge-patch+json", []byte(`{"stringData":{"k":"w"}}`), &api.Secret{}),
		"data: Forbidden: field is immutable when `immutable` is set")
	if err := c.Patch(ctx, resSecrets, "default", "frozen", "application/merge-patch+json", []byte(`{"stringData":{"k":"v"}}`), &api.Secret{}); err != nil {
		t.Fatalf("stringData equal to data is no change: %v", err)
	}

	// Field selector on type, as Kubernetes serves it.
	var sl api.SecretList
	if err := c.List(ctx, resSecrets, "default", client.ListOptions{FieldSelector: "type=Opaque"}, &sl); err != nil || len(sl.Items) != 2 {
		t.Fatalf("type=Opaque: %v, %d items", err, len(sl.Items))
	}

	// The read-only dashboard token reads everything but Secrets.
	dash := clientWith(t, ts, ts.Bundle().DashboardToken)
	if err := dash.Get(ctx, resSecrets, "default", "db", &api.Secret{}); !client.IsForbidden(err) {
		t.Errorf("dashboard get secret: %v, want Forbidden", err)
	}
	if err := dash.List(ctx, resSecrets, "", client.ListOptions{}, &api.SecretList{}); !client.IsForbidden(err) {
		t.Errorf("dashboard list secrets: %v, want Forbidden", err)
	}
	if err := dash.List(ctx, resConfigMaps, "default", client.ListOptions{}, &api.ConfigMapList{}); err != nil {
		t.Errorf("dashboard list configmaps: %v", err)
	}

	out := logs.String()
	if !strings.Contains(out, "apiserver: request") {
		t.Fatalf("no request was logged at Debug; the check below proves nothing:\n%s", out)
	}
	for _, v := range []string{value, b64, "db.local"} {
		if strings.Contains(out, v) {
			t.Errorf("the logs hold %q", v)
		}
	}
}

// TestDefaultServiceAccount: every namespace gets a "default"
// ServiceAccount, recreated when deleted, and pods that name none run as
// it.
func TestDefaultServiceAccount(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	c := ts.Client()
	ctx := ctxT(t, 30*time.Second)
	getSA := func(ns string) (*api.ServiceAccount, error) {
		var sa api.ServiceAccount
		return &sa, c.Get(ctx, resSAs, ns, "default", &sa)
	}
	for _, ns := range []string{"default", "kube-system"} {
		eventually(t, 10*time.Second, ns+"/default service account", func() (bool, error) {
			_, err := getSA(ns)
			return err == nil, err
		})
	}
	mustCreateNS(t, c, "team-a")
	eventually(t, 10*time.Second, "team-a/default", func() (bool, error) { _, err := getSA("team-a"); return err == nil, err })
	first, _ := getSA("team-a")
	if err := c.Delete(ctx, resSAs, "team-a", "default", client.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "team-a/default recreated", func() (bool, error) {
		sa, err := getSA("team-a")
		return err == nil && sa.UID != first.UID, err
	})

	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p"}, Spec: api.PodSpec{Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
	if err := c.Create(ctx, resPods, "team-a", pod); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.ServiceAccountName != "default" || pod.Spec.DeprecatedServiceAccount != "default" {
		t.Fatalf("pod serviceAccountName %q serviceAccount %q", pod.Spec.ServiceAccountName, pod.Spec.DeprecatedServiceAccount)
	}
	// A pod naming a ServiceAccount that does not exist is refused, as by
	// Kubernetes' ServiceAccount admission; once it exists the pod is admitted.
	named := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "q"}, Spec: api.PodSpec{ServiceAccountName: "builder", Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
	if err := c.Create(ctx, resPods, "team-a", api.DeepCopy(named)); !client.IsForbidden(err) ||
		!strings.Contains(err.Error(), `error looking up service account team-a/builder: serviceaccount "builder" not found`) {
		t.Fatalf("named, no ServiceAccount: %v", err)
	}
	if err := c.Create(ctx, resSAs, "team-a", &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "builder"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, resPods, "team-a", named); err != nil || named.Spec.ServiceAccountName != "builder" {
		t.Fatalf("named: %v %q", err, named.Spec.ServiceAccountName)
	}
	var sl api.ServiceAccountList
	if err := c.List(ctx, resSAs, "", client.ListOptions{}, &sl); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, sa := range sl.Items {
		count[sa.Namespace+"/"+sa.Name]++
	}
	for k, n := range count {
		if n != 1 || !strings.HasSuffix(k, "/default") && k != "team-a/builder" {
			t.Errorf("service account %s: %d", k, n)
		}
	}
}

func ptr[T any](v T) *T { return &v }
