package containerd

import (
	"slices"
	"strings"
	"testing"
)

func TestContainerArgv(t *testing.T) {
	ep, cmd := []string{"/ep", "-x"}, []string{"serve"}
	cases := []struct {
		name          string
		command, args []string
		want          []string
	}{
		{"image defaults", nil, nil, []string{"/ep", "-x", "serve"}},
		{"args replace CMD", nil, []string{"a"}, []string{"/ep", "-x", "a"}},
		{"command replaces ENTRYPOINT and drops CMD", []string{"/bin/c"}, nil, []string{"/bin/c"}},
		{"command and args", []string{"/bin/c"}, []string{"a", "b"}, []string{"/bin/c", "a", "b"}},
	}
	for _, tc := range cases {
		if got := containerArgv(ep, cmd, tc.command, tc.args); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := containerArgv(nil, nil, nil, nil); len(got) != 0 {
		t.Errorf("nothing set: %q", got)
	}
	// The image's slices are not aliased.
	got := containerArgv(ep[:1:2], nil, nil, []string{"z"})
	got[0] = "changed"
	if ep[0] != "/ep" {
		t.Fatal("containerArgv wrote into the image config")
	}
}

func TestNormalizeRef(t *testing.T) {
	for in, want := range map[string]string{
		"busybox":                 "docker.io/library/busybox:latest",
		"skiff.local/netexec:dev": "skiff.local/netexec:dev",
		"127.0.0.1:5000/app":      "127.0.0.1:5000/app:latest",
	} {
		if got, err := NormalizeRef(in); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "Busybox", "a b", "app:bad tag"} {
		if _, err := NormalizeRef(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	for image, want := range map[string]string{
		"busybox": "Always", "busybox:latest": "Always", "localhost:5000/app": "Always",
		"localhost:5000/app:v1": "IfNotPresent", "app@sha256:0123": "IfNotPresent",
	} {
		if got := DefaultPullPolicy(image); got != want {
			t.Errorf("%s: %s, want %s", image, got, want)
		}
	}
}

func TestDaemonConfig(t *testing.T) {
	c := daemonConfig("/data/containerd")
	for _, want := range []string{
		"version = 2\n",
		`root = "/data/containerd/root"`,
		`state = "/data/containerd/state"`,
		`disabled_plugins = ["io.containerd.grpc.v1.cri"]`,
		"[grpc]\n  address = \"/data/containerd/containerd.sock\"",
		"[ttrpc]\n  address = \"/data/containerd/containerd.sock.ttrpc\"",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("config lacks %q:\n%s", want, c)
		}
	}
	if podHostname(strings.Repeat("a", 62)+"-b") != strings.Repeat("a", 62) {
		t.Error("a 64-byte pod name is not cut to a host name")
	}
}
