package containerd

import (
	"testing"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

func TestPlainHTTPHosts(t *testing.T) {
	plain := PlainHTTPHosts([]string{"reg.lan:5000", "other.lan", "[fd00::1]:5000"})
	for host, want := range map[string]bool{
		"localhost:5000": true, "127.0.0.1:41000": true, "[::1]:5000": true, "localhost": true,
		"reg.lan:5000": true, "reg.lan:5001": false, "reg.lan": false,
		"other.lan": true, "other.lan:443": true,
		"[fd00::1]:5000": true, "[fd00::1]:5001": false,
		"registry-1.docker.io": false, "evil.reg.lan:5000": false,
	} {
		if got, err := plain(host); err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", host, got, err, want)
		}
	}
}

func TestRegistryHost(t *testing.T) {
	for ref, want := range map[string]string{
		"docker.io/library/busybox:latest": "registry-1.docker.io",
		"127.0.0.1:5000/app:v1":            "127.0.0.1:5000",
		"quay.io/team/app@sha256:abc":      "quay.io",
	} {
		if got := registryHost(ref); got != want {
			t.Errorf("%s: %s, want %s", ref, got, want)
		}
	}
}

// TestHostCreds: the credential goes to the image's registry only, not to
// a host the registry redirects to (blob storage).
func TestHostCreds(t *testing.T) {
	creds := hostCreds("127.0.0.1:5000/app:v1", runtime.AuthConfig{Username: "u", Password: "p"})
	if u, p, err := creds("127.0.0.1:5000"); u != "u" || p != "p" || err != nil {
		t.Fatalf("the registry: %q %q %v", u, p, err)
	}
	for _, h := range []string{"127.0.0.1:5001", "storage.example.com", "127.0.0.1"} {
		if u, p, _ := creds(h); u != "" || p != "" {
			t.Fatalf("%s got the credential", h)
		}
	}
	hub := hostCreds("docker.io/library/busybox:latest", runtime.AuthConfig{Username: "u", Password: "p"})
	if u, _, _ := hub("registry-1.docker.io"); u != "u" {
		t.Fatal("Docker Hub's registry host got no credential")
	}
}
