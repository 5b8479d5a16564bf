package containerd

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	specs "github.com/opencontainers/runtime-spec/specs-go"
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

// TestImageUser checks USER resolution against containerd's rules
// (oci.WithUser + oci.WithAdditionalGIDs) on a rootfs with and without
// /etc/passwd and /etc/group.
func TestImageUser(t *testing.T) {
	full := fstest.MapFS{
		"etc/passwd": {Data: []byte("root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000::/home/app:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n")},
		"etc/group":  {Data: []byte("root:x:0:\nwheel:x:10:root\napp:x:1000:app\nextra:x:2000:app,nobody\nother:x:3000:nobody\n")},
	}
	empty := fstest.MapFS{}
	cases := []struct {
		name string
		root fstest.MapFS
		user string
		want specs.User
		err  string
	}{
		{name: "none is root with root's groups", root: full, user: "", want: specs.User{UID: 0, GID: 0, AdditionalGids: []uint32{0, 10}}},
		{name: "none without files", root: empty, user: "", want: specs.User{AdditionalGids: []uint32{0}}},
		{name: "name", root: full, user: "app", want: specs.User{UID: 1000, GID: 1000, AdditionalGids: []uint32{1000, 2000}}},
		{name: "uid takes its passwd group", root: full, user: "1000", want: specs.User{UID: 1000, GID: 1000, AdditionalGids: []uint32{1000, 2000}}},
		{name: "unknown uid gets group 0", root: full, user: "4242", want: specs.User{UID: 4242, AdditionalGids: []uint32{0}}},
		{name: "uid without passwd", root: empty, user: "4242", want: specs.User{UID: 4242, AdditionalGids: []uint32{0}}},
		{name: "name:group", root: full, user: "app:other", want: specs.User{UID: 1000, GID: 3000, AdditionalGids: []uint32{3000, 2000}}},
		{name: "uid:gid", root: empty, user: "4242:4343", want: specs.User{UID: 4242, GID: 4343, AdditionalGids: []uint32{4343}}},
		{name: "nobody", root: full, user: "nobody:65534", want: specs.User{UID: 65534, GID: 65534, AdditionalGids: []uint32{65534, 2000, 3000}}},
		{name: "unknown name", root: full, user: "ghost", err: `user "ghost" in the image's /etc/passwd`},
		{name: "name without passwd", root: empty, user: "app", err: `user "app"`},
		{name: "unknown group", root: full, user: "app:ghosts", err: `group "ghosts" in the image's /etc/group`},
		{name: "uid out of range", root: empty, user: "2147483648", err: "out of range"},
		{name: "negative gid", root: empty, user: "1:-1", err: "gid -1 out of range"},
		{name: "three parts", root: empty, user: "a:b:c", err: "want user or user:group"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := imageUser(tc.root, tc.user)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("imageUser(%q) = %+v, %v; want an error with %q", tc.user, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.UID != tc.want.UID || got.GID != tc.want.GID || !slices.Equal(got.AdditionalGids, tc.want.AdditionalGids) {
				t.Fatalf("imageUser(%q) = %+v, want %+v", tc.user, got, tc.want)
			}
		})
	}
}
