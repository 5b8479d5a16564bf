//go:build !skiff_nocontainerd

package netagent

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/skiff-dev/skiff/netagent/runtime/containerd"
)

func TestDefaultContainerdSocket(t *testing.T) {
	if DefaultContainerdSocket != containerd.DefaultSocket || !HasContainerd {
		t.Fatalf("DefaultContainerdSocket %q, runtime/containerd's %q, HasContainerd %v", DefaultContainerdSocket, containerd.DefaultSocket, HasContainerd)
	}
}

func TestSelectRuntime(t *testing.T) {
	dir := t.TempDir()
	none := filepath.Join(dir, "none.sock")
	cases := []struct {
		name, runtime, want string
		binary              string
		wantErr             string
	}{
		{name: "auto without containerd", runtime: "auto", want: "process"},
		{name: "empty is auto", runtime: "", want: "process"},
		{name: "process", runtime: "process", want: "process"},
		{name: "containerd without a socket or a binary", runtime: "containerd", binary: "no-such-containerd-binary", wantErr: "no containerd answers"},
		{name: "unknown", runtime: "docker", wantErr: "unknown runtime"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt, name, err := SelectRuntime(context.Background(), tc.runtime, RuntimeOptions{DataDir: t.TempDir(), ContainerdSocket: none, ContainerdBinary: tc.binary})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error with %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil || name != tc.want || rt.Name() != tc.want {
				t.Fatalf("got %v %q %v", rt, name, err)
			}
		})
	}
}

// TestSelectRuntimeManagedContainerd: --runtime containerd with no
// containerd answering starts one under the data dir; auto then finds it;
// closing the runtime that started it stops it.
func TestSelectRuntimeManagedContainerd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs containerd")
	}
	if _, err := exec.LookPath("containerd"); err != nil {
		t.Skip("needs containerd on PATH (hack/install-deps.sh installs it)")
	}
	ctx := context.Background()
	data, err := os.MkdirTemp("", "sksel")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(data) })
	none := filepath.Join(data, "none.sock")
	rt, name, err := SelectRuntime(ctx, "containerd", RuntimeOptions{DataDir: data, ContainerdSocket: none})
	if err != nil || name != "containerd" || rt.Name() != "containerd" {
		t.Fatalf("got %v %q %v", rt, name, err)
	}
	b, err := os.ReadFile(filepath.Join(ManagedContainerdDir(data), "containerd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	closer := rt.(io.Closer)
	t.Cleanup(func() { closer.Close() })
	if conf, err := os.ReadFile(filepath.Join(ManagedContainerdDir(data), "config.toml")); err != nil || !strings.Contains(string(conf), "io.containerd.grpc.v1.cri") {
		t.Fatalf("config.toml: %v\n%s", err, conf)
	}
	if _, err := rt.List(ctx); err != nil {
		t.Fatalf("List on the managed containerd: %v", err)
	}
	// A second agent on the same data dir finds the managed daemon.
	rt2, name, err := SelectRuntime(ctx, "auto", RuntimeOptions{DataDir: data, ContainerdSocket: none})
	if err != nil || name != "containerd" {
		t.Fatalf("auto with the managed containerd up: %q %v", name, err)
	}
	if err := rt2.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if !containerd.SocketAnswers(ctx, containerd.DaemonSocket(ManagedContainerdDir(data))) {
		t.Fatal("closing a runtime that did not start the daemon stopped it")
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("containerd %d still runs after Close", pid)
	}
	if _, name, err := SelectRuntime(ctx, "auto", RuntimeOptions{DataDir: data, ContainerdSocket: none}); err != nil || name != "process" {
		t.Fatalf("auto after the managed daemon stopped: %q %v", name, err)
	}

	// A daemon left by a killed agent is adopted, and stopped on Close.
	left, err := containerd.StartDaemon(ctx, containerd.DaemonConfig{Dir: ManagedContainerdDir(data)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { left.Stop() })
	rt3, name, err := SelectRuntime(ctx, "containerd", RuntimeOptions{DataDir: data, ContainerdSocket: none})
	if err != nil || name != "containerd" {
		t.Fatalf("containerd with a leftover managed daemon: %q %v", name, err)
	}
	if err := rt3.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if containerd.SocketAnswers(ctx, left.Socket) {
		t.Fatal("the adopted daemon still answers after Close")
	}
}
