package kubectl_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
)

var (
	resCM  = api.Lookup(resources, "v1", "configmaps")
	resSec = api.Lookup(resources, "v1", "secrets")
)

// TestCreateConfigMapAndSecret: `skiff create configmap` and `create
// secret generic|tls|docker-registry` build the objects kubectl builds
// from literals, files (keyed, a directory), env files and flags.
func TestCreateConfigMapAndSecret(t *testing.T) {
	h := newHarness(t)
	h.env["FROM_ENV"] = "inherited"
	dir := t.TempDir()
	for name, content := range map[string]string{
		"conf/a.txt": "alpha\n", "conf/b.conf": "beta=1\n", "c.txt": "gamma", "blob.dat": "\xff\xfe\x00bin",
		"app.env": "\xef\xbb\xbf# comment\nMODE=prod\n  GREETING=hello world\n\nFROM_ENV\nEMPTY=\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "conf", "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	at := func(p string) string { return filepath.Join(dir, p) }

	for _, tc := range []struct {
		name string
		args []string
		data map[string]string
		bin  map[string]string
	}{
		{"lit", []string{"--from-literal=k1=v1", "--from-literal=k2=a=b"}, map[string]string{"k1": "v1", "k2": "a=b"}, nil},
		{"files", []string{"--from-file=" + at("conf/a.txt"), "--from-file=custom=" + at("c.txt"), "--from-file=" + at("blob.dat")},
			map[string]string{"a.txt": "alpha\n", "custom": "gamma"}, map[string]string{"blob.dat": "\xff\xfe\x00bin"}},
		{"dir", []string{"--from-file=" + at("conf")}, map[string]string{"a.txt": "alpha\n", "b.conf": "beta=1\n"}, nil},
		{"env", []string{"--from-env-file=" + at("app.env")}, map[string]string{"MODE": "prod", "GREETING": "hello world", "FROM_ENV": "inherited", "EMPTY": ""}, nil},
	} {
		if out := h.ok(append([]string{"create", "configmap", tc.name}, tc.args...)...); out != "configmap/"+tc.name+" created\n" {
			t.Errorf("create configmap %s: %q", tc.name, out)
		}
		var cm api.ConfigMap
		h.getObj(resCM, tc.name, &cm)
		if !equalStrings(cm.Data, tc.data) || !equalStrings(bytesToStrings(cm.BinaryData), tc.bin) {
			t.Errorf("configmap %s: data %q binaryData %q, want %q %q", tc.name, cm.Data, cm.BinaryData, tc.data, tc.bin)
		}
	}

	if out := h.ok("create", "secret", "generic", "gen", "--from-literal=user=admin", "--from-file="+at("conf"), "--from-file=k="+at("c.txt")); out != "secret/gen created\n" {
		t.Errorf("create secret generic: %q", out)
	}
	var s api.Secret
	h.getObj(resSec, "gen", &s)
	if want := map[string]string{"user": "admin", "a.txt": "alpha\n", "b.conf": "beta=1\n", "k": "gamma"}; !equalStrings(bytesToStrings(s.Data), want) || s.Type != api.SecretTypeOpaque {
		t.Errorf("secret gen: %q %q", s.Data, s.Type)
	}
	h.ok("create", "secret", "generic", "basic", "--type=kubernetes.io/basic-auth", "--from-literal=username=u", "--from-literal=password=p")
	s = api.Secret{}
	h.getObj(resSec, "basic", &s)
	if s.Type != api.SecretTypeBasicAuth || string(s.Data["password"]) != "p" {
		t.Errorf("secret basic: %q %q", s.Data, s.Type)
	}

	cert, key := testKeyPair(t, dir)
	if out := h.ok("create", "secret", "tls", "web-tls", "--cert="+cert, "--key="+key); out != "secret/web-tls created\n" {
		t.Errorf("create secret tls: %q", out)
	}
	s = api.Secret{}
	h.getObj(resSec, "web-tls", &s)
	if c, _ := os.ReadFile(cert); s.Type != api.SecretTypeTLS || string(s.Data["tls.crt"]) != string(c) || len(s.Data["tls.key"]) == 0 {
		t.Errorf("secret tls: %q", s.Type)
	}

	h.ok("create", "secret", "docker-registry", "reg", "--docker-server=registry.example:5000", "--docker-username=robot", "--docker-password=pa55", "--docker-email=r@example")
	s = api.Secret{}
	h.getObj(resSec, "reg", &s)
	var dc struct {
		Auths map[string]map[string]string `json:"auths"`
	}
	if err := json.Unmarshal(s.Data[api.DockerConfigJSONKey], &dc); err != nil || s.Type != api.SecretTypeDockerConfigJSON {
		t.Fatalf("secret reg: %q %v", s.Type, err)
	}
	if a := dc.Auths["registry.example:5000"]; a["username"] != "robot" || a["password"] != "pa55" || a["email"] != "r@example" ||
		a["auth"] != base64.StdEncoding.EncodeToString([]byte("robot:pa55")) {
		t.Errorf("docker config %+v", dc.Auths)
	}

	// --dry-run=client -o yaml prints without creating.
	if out := h.ok("create", "configmap", "dry", "--from-literal=a=b", "--dry-run=client", "-o", "yaml"); !strings.Contains(out, "kind: ConfigMap") || !strings.Contains(out, "a: b") {
		t.Errorf("dry run: %q", out)
	}
	h.fails(1, `configmaps "dry" not found`, "get", "cm", "dry")

	// kubectl's refusals.
	h.fails(1, "from-env-file cannot be combined with from-file or from-literal", "create", "cm", "x", "--from-env-file="+at("app.env"), "--from-literal=a=b")
	h.fails(1, "cannot give a key name for a directory path", "create", "cm", "x", "--from-file=k="+at("conf"))
	h.fails(1, `cannot add key a, another key by that name already exists in data for ConfigMap "x"`, "create", "cm", "x", "--from-literal=a=1", "--from-literal=a=2")
	h.fails(1, "invalid literal source nokey, expected key=value", "create", "secret", "generic", "x", "--from-literal=nokey")
	h.fails(1, "requires both --cert and --key", "create", "secret", "tls", "x", "--cert="+cert)
	h.fails(1, "failed to load key pair", "create", "secret", "tls", "x", "--cert="+cert, "--key="+at("c.txt"))
	h.fails(1, "either --from-file or the combination of --docker-username", "create", "secret", "docker-registry", "x")
	// The server's checks name the field.
	h.fails(1, `data[bad key]`, "create", "cm", "x", "--from-literal=bad key=1")
}

func equalStrings(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func bytesToStrings(m map[string][]byte) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}

func testKeyPair(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "web"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
