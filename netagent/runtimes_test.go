package netagent

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"
)

func TestSelectRuntime(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "containerd.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cases := []struct {
		name, runtime, socket, want string
		err                         error
	}{
		{"auto without containerd", "auto", filepath.Join(dir, "none.sock"), "process", nil},
		{"auto with containerd answering falls back", "auto", sock, "process", nil},
		{"empty is auto", "", filepath.Join(dir, "none.sock"), "process", nil},
		{"process", "process", sock, "process", nil},
		{"containerd is not built", "containerd", sock, "", ErrContainerdNotBuilt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt, name, err := SelectRuntime(context.Background(), tc.runtime, RuntimeOptions{DataDir: t.TempDir(), ContainerdSocket: tc.socket})
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("want %v, got %v", tc.err, err)
				}
				return
			}
			if err != nil || name != tc.want || rt.Name() != tc.want {
				t.Fatalf("got %v %q %v", rt, name, err)
			}
		})
	}
	if _, _, err := SelectRuntime(context.Background(), "docker", RuntimeOptions{DataDir: dir}); err == nil {
		t.Fatal("unknown runtime accepted")
	}
}
