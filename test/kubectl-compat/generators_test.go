package kubectlcompat

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// writeFiles writes name -> content under dir and returns dir.
func writeFiles(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func wantData(t *testing.T, what string, got map[string]string, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: data %q, want %q", what, got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: data[%s] = %q, want %q", what, k, got[k], v)
		}
	}
}

func secretStrings(s *corev1.Secret) map[string]string {
	out := map[string]string{}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out
}

// TestCreateConfigMapAndSecretSources: kubectl create configmap and
// secret from literals, files (named, keyed, a directory), env files, and
// the tls and docker-registry secrets, stored as kubectl built them.
func TestCreateConfigMapAndSecretSources(t *testing.T) {
	ns := namespace(t, "create-sources")
	dir := writeFiles(t, t.TempDir(), map[string]string{
		"conf/a.txt":   "alpha\n",
		"conf/b.conf":  "beta=1\n",
		"other/c.txt":  "gamma",
		"app.env":      "# a comment\nMODE=prod\nGREETING=hello world\n\nEMPTY=\n",
		"bin/blob.dat": "\xff\xfe\x00binary",
	})
	conf, envFile := filepath.Join(dir, "conf"), filepath.Join(dir, "app.env")
	for _, tc := range []struct {
		args []string
		name string
		data map[string]string
		bin  map[string]string
	}{
		{[]string{"--from-literal=k1=v1", "--from-literal=k2=with=equals"}, "cm-literal", map[string]string{"k1": "v1", "k2": "with=equals"}, nil},
		{[]string{"--from-file=" + filepath.Join(conf, "a.txt"), "--from-file=custom=" + filepath.Join(dir, "other", "c.txt")}, "cm-files", map[string]string{"a.txt": "alpha\n", "custom": "gamma"}, nil},
		{[]string{"--from-file=" + conf}, "cm-dir", map[string]string{"a.txt": "alpha\n", "b.conf": "beta=1\n"}, nil},
		{[]string{"--from-env-file=" + envFile}, "cm-env", map[string]string{"MODE": "prod", "GREETING": "hello world", "EMPTY": ""}, nil},
		{[]string{"--from-file=" + filepath.Join(dir, "bin", "blob.dat")}, "cm-binary", nil, map[string]string{"blob.dat": "\xff\xfe\x00binary"}},
	} {
		out := kubectl(t, append([]string{"create", "configmap", tc.name, "-n", ns}, tc.args...)...)
		if strings.TrimSpace(out) != "configmap/"+tc.name+" created" {
			t.Errorf("create configmap %s: %q", tc.name, out)
		}
		cm, err := env.cs.CoreV1().ConfigMaps(ns).Get(ctx(t), tc.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tc.data != nil || len(cm.Data) > 0 {
			wantData(t, tc.name, cm.Data, tc.data)
		}
		bin := map[string]string{}
		for k, v := range cm.BinaryData {
			bin[k] = string(v)
		}
		if tc.bin != nil || len(bin) > 0 {
			wantData(t, tc.name+" binaryData", bin, tc.bin)
		}
	}

	for _, tc := range []struct {
		args []string
		name string
		data map[string]string
	}{
		{[]string{"--from-literal=user=admin", "--from-file=" + filepath.Join(conf, "a.txt"), "--from-file=key=" + filepath.Join(dir, "other", "c.txt")}, "sec-mixed", map[string]string{"user": "admin", "a.txt": "alpha\n", "key": "gamma"}},
		{[]string{"--from-file=" + conf}, "sec-dir", map[string]string{"a.txt": "alpha\n", "b.conf": "beta=1\n"}},
		{[]string{"--from-env-file=" + envFile}, "sec-env", map[string]string{"MODE": "prod", "GREETING": "hello world", "EMPTY": ""}},
		{[]string{"--type=kubernetes.io/basic-auth", "--from-literal=username=u", "--from-literal=password=p"}, "sec-basic", map[string]string{"username": "u", "password": "p"}},
	} {
		out := kubectl(t, append([]string{"create", "secret", "generic", tc.name, "-n", ns}, tc.args...)...)
		if strings.TrimSpace(out) != "secret/"+tc.name+" created" {
			t.Errorf("create secret generic %s: %q", tc.name, out)
		}
		s, err := env.cs.CoreV1().Secrets(ns).Get(ctx(t), tc.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantData(t, tc.name, secretStrings(s), tc.data)
	}

	cert, key := selfSignedPair(t)
	kubectl(t, "create", "secret", "tls", "sec-tls", "-n", ns, "--cert="+cert, "--key="+key)
	s, err := env.cs.CoreV1().Secrets(ns).Get(ctx(t), "sec-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Type != corev1.SecretTypeTLS || string(s.Data["tls.crt"]) != mustRead(t, cert) || string(s.Data["tls.key"]) != mustRead(t, key) {
		t.Errorf("tls secret: type %q keys %d", s.Type, len(s.Data))
	}

	out := kubectl(t, "create", "secret", "docker-registry", "sec-reg", "-n", ns,
		"--docker-server=registry.example:5000", "--docker-username=robot", "--docker-password=pa55", "--docker-email=robot@example")
	if strings.TrimSpace(out) != "secret/sec-reg created" {
		t.Errorf("create secret docker-registry: %q", out)
	}
	s, err = env.cs.CoreV1().Secrets(ns).Get(ctx(t), "sec-reg", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var dc struct {
		Auths map[string]struct {
			Username, Password, Email, Auth string
		} `json:"auths"`
	}
	if err := json.Unmarshal(s.Data[corev1.DockerConfigJsonKey], &dc); err != nil || s.Type != corev1.SecretTypeDockerConfigJson {
		t.Fatalf("docker-registry secret: type %q, %v: %s", s.Type, err, s.Data[corev1.DockerConfigJsonKey])
	}
	a := dc.Auths["registry.example:5000"]
	if a.Username != "robot" || a.Password != "pa55" || a.Auth != base64.StdEncoding.EncodeToString([]byte("robot:pa55")) {
		t.Errorf("docker-registry auths %+v", dc.Auths)
	}

	// The tables kubectl prints from the server.
	got := kubectl(t, "get", "secrets", "-n", ns)
	for _, want := range []string{"sec-reg kubernetes.io/dockerconfigjson 1", "sec-tls kubernetes.io/tls 2", "sec-mixed Opaque 3", "sec-basic kubernetes.io/basic-auth 2"} {
		if !tableHas(got, want) {
			t.Errorf("get secrets lacks %q:\n%s", want, got)
		}
	}
	got = kubectl(t, "get", "configmaps", "-n", ns)
	for _, want := range []string{"cm-env 3", "cm-dir 2", "cm-binary 1"} {
		if !tableHas(got, want) {
			t.Errorf("get configmaps lacks %q:\n%s", want, got)
		}
	}
}

func tableHas(out, prefix string) bool {
	for _, l := range lines(out) {
		if strings.HasPrefix(strings.Join(fields(l), " "), prefix) {
			return true
		}
	}
	return false
}

// TestApplyKustomizeGenerators: kubectl apply -k with a configMapGenerator
// and a secretGenerator makes hash-suffixed objects, and the Deployment
// that names them is stored with the hashed names in its pod spec.
func TestApplyKustomizeGenerators(t *testing.T) {
	ns := namespace(t, "kustomize")
	dir := writeFiles(t, t.TempDir(), map[string]string{
		"kustomization.yaml": `namespace: ` + ns + `
resources:
- deployment.yaml
configMapGenerator:
- name: app-config
  literals:
  - MODE=prod
  files:
  - settings.conf
secretGenerator:
- name: app-secret
  literals:
  - PASSWORD=kustomized-hunter2
`,
		"settings.conf": "level=debug\n",
		"deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        envFrom:
        - configMapRef: {name: app-config}
        env:
        - name: PASSWORD
          valueFrom:
            secretKeyRef: {name: app-secret, key: PASSWORD}
        volumeMounts:
        - {name: conf, mountPath: /etc/app}
      volumes:
      - name: conf
        configMap: {name: app-config}
      - name: sec
        secret: {secretName: app-secret}
`,
	})
	out := kubectl(t, "apply", "-k", dir)
	hashed := regexp.MustCompile(`(?m)^(configmap/app-config-[a-z0-9]{10}|secret/app-secret-[a-z0-9]{10}|deployment\.apps/web) created$`)
	if n := len(hashed.FindAllString(out, -1)); n != 3 {
		t.Fatalf("apply -k printed %q, want the two hashed objects and the Deployment created", out)
	}
	cmName := regexp.MustCompile(`configmap/(app-config-[a-z0-9]{10})`).FindStringSubmatch(out)[1]
	secName := regexp.MustCompile(`secret/(app-secret-[a-z0-9]{10})`).FindStringSubmatch(out)[1]

	cm, err := env.cs.CoreV1().ConfigMaps(ns).Get(ctx(t), cmName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantData(t, cmName, cm.Data, map[string]string{"MODE": "prod", "settings.conf": "level=debug\n"})
	sec, err := env.cs.CoreV1().Secrets(ns).Get(ctx(t), secName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantData(t, secName, secretStrings(sec), map[string]string{"PASSWORD": "kustomized-hunter2"})

	d, err := env.cs.AppsV1().Deployments(ns).Get(ctx(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef == nil || c.EnvFrom[0].ConfigMapRef.Name != cmName {
		t.Errorf("envFrom %+v, want %s", c.EnvFrom, cmName)
	}
	if len(c.Env) != 1 || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.SecretKeyRef == nil || c.Env[0].ValueFrom.SecretKeyRef.Name != secName {
		t.Errorf("env %+v, want %s", c.Env, secName)
	}
	if len(spec.Volumes) != 2 || spec.Volumes[0].ConfigMap == nil || spec.Volumes[0].ConfigMap.Name != cmName ||
		spec.Volumes[1].Secret == nil || spec.Volumes[1].Secret.SecretName != secName {
		t.Errorf("volumes %+v, want %s and %s", spec.Volumes, cmName, secName)
	}

	// A second apply of the same kustomization changes nothing.
	out = kubectl(t, "apply", "-k", dir)
	for _, l := range lines(out) {
		if !strings.HasSuffix(l, " unchanged") {
			t.Errorf("second apply -k: %q", l)
		}
	}
	// A changed literal makes a new hashed name, and the Deployment follows.
	writeFiles(t, dir, map[string]string{"settings.conf": "level=info\n"})
	out = kubectl(t, "apply", "-k", dir)
	m := regexp.MustCompile(`configmap/(app-config-[a-z0-9]{10}) created`).FindStringSubmatch(out)
	if m == nil || m[1] == cmName || !strings.Contains(out, "deployment.apps/web configured") {
		t.Fatalf("apply -k after a change: %q", out)
	}
	d, err = env.cs.AppsV1().Deployments(ns).Get(ctx(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Volumes[0].ConfigMap.Name; got != m[1] {
		t.Errorf("after the change the Deployment mounts %s, want %s", got, m[1])
	}
}
