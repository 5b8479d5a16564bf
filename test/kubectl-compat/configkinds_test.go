package kubectlcompat

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// selfSignedPair writes a throwaway certificate and key for
// `kubectl create secret tls`.
func selfSignedPair(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "web.example"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestConfigMapsSecretsServiceAccounts: kubectl's create verbs (protobuf
// bodies), get tables, and apply of a Secret written with stringData.
func TestConfigMapsSecretsServiceAccounts(t *testing.T) {
	ns := namespace(t, "config-kinds")
	if out := kubectl(t, "create", "configmap", "x", "-n", ns, "--from-literal=a=b"); strings.TrimSpace(out) != "configmap/x created" {
		t.Errorf("create configmap: %q", out)
	}
	if out := kubectl(t, "create", "secret", "generic", "s", "-n", ns, "--from-literal=p=q"); strings.TrimSpace(out) != "secret/s created" {
		t.Errorf("create secret generic: %q", out)
	}
	cert, key := selfSignedPair(t)
	if out := kubectl(t, "create", "secret", "tls", "t", "-n", ns, "--cert="+cert, "--key="+key); strings.TrimSpace(out) != "secret/t created" {
		t.Errorf("create secret tls: %q", out)
	}
	// The namespace's default ServiceAccount comes from the controller.
	eventually(t, 10*time.Second, func() error {
		_, err := env.cs.CoreV1().ServiceAccounts(ns).Get(ctx(t), "default", metav1.GetOptions{})
		return err
	})

	out := kubectl(t, "get", "cm,secret,sa", "-n", ns)
	for _, want := range []string{
		"NAME DATA AGE", "configmap/x 1",
		"NAME TYPE DATA AGE", "secret/s Opaque 1", "secret/t kubernetes.io/tls 2",
		"NAME SECRETS AGE", "serviceaccount/default 0",
	} {
		found := false
		for _, l := range lines(out) {
			if strings.HasPrefix(strings.Join(fields(l), " "), want) {
				found = true
			}
		}
		if !found {
			t.Errorf("get cm,secret,sa lacks %q:\n%s", want, out)
		}
	}
	if got := kubectl(t, "get", "secret", "s", "-n", ns, "-o", "jsonpath={.data.p}"); got != base64.StdEncoding.EncodeToString([]byte("q")) {
		t.Errorf("secret s data.p = %q", got)
	}

	f := manifest(t, "secret.yaml", `apiVersion: v1
kind: Secret
metadata:
  name: app
stringData:
  DB_PASSWORD: hunter2
data:
  other: b3RoZXI=
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-conf
immutable: true
data:
  key: value
`)
	if out := kubectl(t, "apply", "-n", ns, "-f", f); !strings.Contains(out, "secret/app created") || !strings.Contains(out, "configmap/app-conf created") {
		t.Errorf("apply: %q", out)
	}
	sec, err := env.cs.CoreV1().Secrets(ns).Get(ctx(t), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(sec.Data["DB_PASSWORD"]) != "hunter2" || string(sec.Data["other"]) != "other" || len(sec.StringData) != 0 || sec.Type != corev1.SecretTypeOpaque {
		t.Errorf("applied secret: data %q stringData %q type %q", sec.Data, sec.StringData, sec.Type)
	}
	// A changed stringData value reaches data on the next apply.
	f2 := manifest(t, "secret2.yaml", strings.Replace(mustRead(t, f), "hunter2", "hunter3", 1))
	kubectl(t, "apply", "-n", ns, "-f", f2)
	if got := kubectl(t, "get", "secret", "app", "-n", ns, "-o", "jsonpath={.data.DB_PASSWORD}"); got != base64.StdEncoding.EncodeToString([]byte("hunter3")) {
		t.Errorf("after re-apply: %q", got)
	}
	// The immutable ConfigMap refuses a data change.
	f3 := manifest(t, "secret3.yaml", strings.Replace(mustRead(t, f2), "key: value", "key: other", 1))
	_, errOut, err := kubectlErr(t, "apply", "-n", ns, "-f", f3)
	if err == nil || !strings.Contains(errOut, "data: Forbidden: field is immutable when `immutable` is set") {
		t.Errorf("apply to an immutable ConfigMap: %v: %s", err, errOut)
	}

	// client-go's typed client sends protobuf: stringData is merged there too.
	made, err := env.cs.CoreV1().Secrets(ns).Create(ctx(t), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "pb"}, Type: corev1.SecretTypeBasicAuth,
		StringData: map[string]string{"username": "admin"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(made.Data["username"]) != "admin" || len(made.StringData) != 0 {
		t.Errorf("protobuf create: data %q stringData %q", made.Data, made.StringData)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
