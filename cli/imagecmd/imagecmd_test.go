//go:build !skiff_nocontainerd

package imagecmd

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/cli"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd"
)

func TestBuildImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	if err := os.WriteFile(bin, []byte("#!/bin/true\n"), 0o750); err != nil {
		t.Fatal(err)
	}
	img, err := BuildImage(cli.ImageBuildOptions{Name: "skiff.local/t:1", Files: []string{bin, bin + ":/usr/bin/other"}, Cmd: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(img.Files) != 2 || img.Files[0].Path != "/tool" || img.Files[1].Path != "/usr/bin/other" || img.Files[0].Mode != 0o750 {
		t.Fatalf("files: %+v", img.Files)
	}
	if len(img.Env) != 1 || !strings.HasPrefix(img.Env[0], "PATH=") {
		t.Fatalf("default env: %v", img.Env)
	}
	if _, err := BuildImage(cli.ImageBuildOptions{Name: "x", Files: []string{dir}}); err == nil {
		t.Fatal("a directory was accepted as a file")
	}
	// The test binary is linked the way `go test` links it; --self must
	// accept a static binary and refuse a dynamic one.
	exe, _ := os.Executable()
	static := requireStatic(exe) == nil
	self, err := BuildImage(cli.ImageBuildOptions{Name: "x", Self: true})
	if (err == nil) != static {
		t.Fatalf("--self on a binary that is static=%v: %v", static, err)
	}
	if err == nil && (len(self.Env) != 1 || self.Env[0] != SelfPath || !strings.HasSuffix(self.Env[0], ":/")) {
		t.Fatalf("--self env %v: want PATH ending in / (where skiff is)", self.Env)
	}
	if err := requireStatic("/bin/sh"); err == nil {
		t.Skip("/bin/sh is static here; cannot check the refusal")
	}
}

func TestMaybeGunzip(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte("hello"))
	w.Close()
	for _, tc := range []struct{ in, want string }{{gz.String(), "hello"}, {"hello", "hello"}, {"h", "h"}, {"", ""}} {
		rd, err := maybeGunzip(strings.NewReader(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		out.ReadFrom(rd)
		if out.String() != tc.want {
			t.Fatalf("got %q, want %q", out.String(), tc.want)
		}
	}
}

// TestImageVerbs runs build (-o, docker format, gzipped), import, ls and
// rm against a containerd the test starts.
func TestImageVerbs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs containerd")
	}
	if _, err := exec.LookPath("containerd"); err != nil {
		t.Skip("needs containerd on PATH (hack/install-deps.sh installs it)")
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "skimg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d, err := containerd.StartDaemon(ctx, containerd.DaemonConfig{Dir: filepath.Join(dir, "containerd")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Stop() })
	// The socket is found through --data-dir.
	o := cli.ImageOptions{Namespace: "skiff-test", DataDirs: []string{filepath.Join(dir, "nothing"), dir}}
	if s, err := Socket(ctx, o); err != nil || s != d.Socket {
		t.Fatalf("Socket = %q %v, want %s", s, err, d.Socket)
	}
	payload := filepath.Join(dir, "payload")
	os.WriteFile(payload, []byte("data"), 0o644)
	archive := filepath.Join(dir, "img.tar")
	var out bytes.Buffer
	if err := Build(ctx, o, cli.ImageBuildOptions{Name: "skiff.local/payload:v1", Files: []string{payload}, Format: "docker", Output: archive}, &out); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(archive)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	os.WriteFile(archive+".gz", gz.Bytes(), 0o644)
	out.Reset()
	if err := Import(ctx, o, []string{archive + ".gz"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "skiff.local/payload:v1\tsha256:") {
		t.Fatalf("import printed %q", out.String())
	}
	out.Reset()
	if err := Build(ctx, o, cli.ImageBuildOptions{Name: "skiff.local/payload:v2", Files: []string{payload}, Format: "oci", Import: true}, &out); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := List(ctx, o, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"IMAGE", "skiff.local/payload:v1", "skiff.local/payload:v2"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("ls lacks %s:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := Remove(ctx, o, []string{"skiff.local/payload:v1", "skiff.local/payload:v2"}, &out); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	List(ctx, o, &out)
	if strings.Contains(out.String(), "payload") {
		t.Fatalf("rm left images:\n%s", out.String())
	}
	if err := Import(ctx, o, []string{filepath.Join(dir, "missing.tar")}, &out); err == nil {
		t.Fatal("importing a missing file succeeded")
	}
}
