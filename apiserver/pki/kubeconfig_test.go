package pki

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const testCAPEM = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"

func TestWriteKubeconfigStructure(t *testing.T) {
	p := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := WriteKubeconfig(p, "https://127.0.0.1:6443", []byte(testCAPEM), "admin", "s3cr3t"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != secretMode {
		t.Errorf("mode %v, want %v", st.Mode().Perm(), secretMode)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(data, &got); err != nil {
		t.Fatalf("not YAML: %v\n%s", err, data)
	}
	want := map[string]any{
		"apiVersion":  "v1",
		"kind":        "Config",
		"preferences": map[string]any{},
		"clusters": []any{map[string]any{
			"name": "skiff",
			"cluster": map[string]any{
				"server":                     "https://127.0.0.1:6443",
				"certificate-authority-data": base64.StdEncoding.EncodeToString([]byte(testCAPEM)),
			},
		}},
		"users": []any{map[string]any{
			"name": "admin",
			"user": map[string]any{"token": "s3cr3t"},
		}},
		"contexts": []any{map[string]any{
			"name":    "skiff",
			"context": map[string]any{"cluster": "skiff", "user": "admin", "namespace": "default"},
		}},
		"current-context": "skiff",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("kubeconfig structure\n got: %#v\nwant: %#v\nfile:\n%s", got, want, data)
	}
	if strings.Contains(string(data), "BEGIN CERTIFICATE") {
		t.Error("CA stored as PEM text, want base64")
	}

	k, err := LoadKubeconfig(p)
	if err != nil {
		t.Fatal(err)
	}
	wantK := &Kubeconfig{Context: "skiff", Server: "https://127.0.0.1:6443", CAPEM: []byte(testCAPEM), Token: "s3cr3t", Namespace: "default"}
	if !reflect.DeepEqual(k, wantK) {
		t.Fatalf("round trip %+v, want %+v", k, wantK)
	}
}

func TestWriteKubeconfigEmptyUser(t *testing.T) {
	if err := WriteKubeconfig(filepath.Join(t.TempDir(), "k"), "https://x", nil, "", "t"); err == nil {
		t.Fatal("empty user accepted")
	}
}

func TestLoadKubeconfig(t *testing.T) {
	caB64 := base64.StdEncoding.EncodeToString([]byte(testCAPEM))
	tests := []struct {
		name    string
		yaml    string
		files   map[string]string // written beside the kubeconfig
		want    *Kubeconfig
		wantErr bool
	}{
		{
			name: "kubectl style with several contexts",
			yaml: `apiVersion: v1
kind: Config
clusters:
- name: other
  cluster: {server: "https://other:6443"}
- name: home
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: ` + caB64 + `
    extensions: []
users:
- name: me
  user: {token: abc}
contexts:
- name: a
  context: {cluster: other, user: me}
- name: b
  context: {cluster: home, user: me, namespace: prod}
current-context: b
`,
			want: &Kubeconfig{Context: "b", Server: "https://10.0.0.1:6443", CAPEM: []byte(testCAPEM), Token: "abc", Namespace: "prod"},
		},
		{
			name: "relative CA file and token file, default namespace",
			yaml: `clusters: [{name: c, cluster: {server: "https://h", certificate-authority: ca.crt}}]
users: [{name: u, user: {tokenFile: tok}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
			files: map[string]string{"ca.crt": testCAPEM, "tok": "fromfile\n"},
			want:  &Kubeconfig{Context: "x", Server: "https://h", CAPEM: []byte(testCAPEM), Token: "fromfile", Namespace: "default"},
		},
		{
			name: "insecure and no user",
			yaml: `clusters: [{name: c, cluster: {server: "https://h", insecure-skip-tls-verify: true}}]
contexts: [{name: x, context: {cluster: c}}]
current-context: x
`,
			want: &Kubeconfig{Context: "x", Server: "https://h", InsecureSkipTLSVerify: true, Namespace: "default"},
		},
		{name: "no current context", yaml: "clusters: []\n", wantErr: true},
		{name: "undefined context", yaml: "current-context: nope\n", wantErr: true},
		{name: "undefined cluster", yaml: "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n", wantErr: true},
		{
			name: "undefined user",
			yaml: `clusters: [{name: c, cluster: {server: "https://h"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
			wantErr: true,
		},
		{
			name: "cluster without server",
			yaml: `clusters: [{name: c, cluster: {}}]
contexts: [{name: x, context: {cluster: c}}]
current-context: x
`,
			wantErr: true,
		},
		{
			name: "missing CA file",
			yaml: `clusters: [{name: c, cluster: {server: "https://h", certificate-authority: nope.crt}}]
contexts: [{name: x, context: {cluster: c}}]
current-context: x
`,
			wantErr: true,
		},
		{name: "not YAML", yaml: "clusters: [\n", wantErr: true},
		{name: "bad base64", yaml: `clusters: [{name: c, cluster: {server: "https://h", certificate-authority-data: "!!!"}}]
contexts: [{name: x, context: {cluster: c}}]
current-context: x
`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p := filepath.Join(dir, "config")
			if err := os.WriteFile(p, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadKubeconfig(p)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidKubeconfig) {
					t.Fatalf("err = %v, want ErrInvalidKubeconfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLoadKubeconfigMissingFile(t *testing.T) {
	_, err := LoadKubeconfig(filepath.Join(t.TempDir(), "nope"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want not-exist", err)
	}
}

func TestRenderKubeconfigDeterministic(t *testing.T) {
	a, err := renderKubeconfig("https://h", []byte(testCAPEM), "admin", "t")
	if err != nil {
		t.Fatal(err)
	}
	b, err := renderKubeconfig("https://h", []byte(testCAPEM), "admin", "t")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("two renders differ")
	}
}
