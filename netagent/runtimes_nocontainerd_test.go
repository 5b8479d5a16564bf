//go:build skiff_nocontainerd

package netagent

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestSelectRuntimeNoContainerd: in a build without the containerd
// runtime, auto is the process runtime even with a socket path given, and
// containerd is an error saying how the binary was built. Run it with
//
//	go test -tags skiff_nocontainerd -run NoContainerd ./netagent
func TestSelectRuntimeNoContainerd(t *testing.T) {
	if HasContainerd {
		t.Fatal("HasContainerd in a skiff_nocontainerd build")
	}
	o := RuntimeOptions{DataDir: t.TempDir(), ContainerdSocket: filepath.Join(t.TempDir(), "c.sock")}
	for _, name := range []string{"", "auto", "process"} {
		rt, got, err := SelectRuntime(context.Background(), name, o)
		if err != nil || got != "process" || rt.Name() != "process" {
			t.Fatalf("SelectRuntime(%q) = %v, %q, %v; want the process runtime", name, rt, got, err)
		}
	}
	if _, _, err := SelectRuntime(context.Background(), "containerd", o); !errors.Is(err, ErrNoContainerd) {
		t.Fatalf("SelectRuntime(containerd) error %v, want ErrNoContainerd", err)
	}
	if _, _, err := SelectRuntime(context.Background(), "docker", o); err == nil || errors.Is(err, ErrNoContainerd) {
		t.Fatalf("SelectRuntime(docker) error %v, want unknown runtime", err)
	}
}
