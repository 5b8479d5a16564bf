package process

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// TestBindMounts: Mounts show at their destinations in the container's
// mount namespace only (a missing mount point is created, empty, on the
// node), a read-only one refuses writes, and the host's view of the
// destination is unchanged.
func TestBindMounts(t *testing.T) {
	requireRoot(t)
	_, ns := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "key"), "v1")
	rw := t.TempDir()
	dst := filepath.Join(t.TempDir(), "etc", "cfg") // does not exist yet
	rwDst := filepath.Join(t.TempDir(), "data")
	sb := newSandbox(t, "mounts", ns, "", "")
	st := start(t, rt, sb, runtime.ContainerSpec{Name: "c", Command: []string{"sh", "-c",
		`cat ` + dst + `/key; echo; touch ` + dst + `/new 2>/dev/null && echo ro-writable || echo ro-refused; echo hi > ` + rwDst + `/out && echo rw-ok`},
		Mounts: []runtime.Mount{{Source: src, Destination: dst, ReadOnly: true}, {Source: rw, Destination: rwDst}}})
	fin := waitExited(t, rt, st.ID)
	out := readFile(t, st.LogPath)
	if fin.ExitCode != 0 || !strings.Contains(out, "v1\nro-refused\nrw-ok") {
		t.Fatalf("exit %d, output %q", fin.ExitCode, out)
	}
	if b, err := os.ReadFile(filepath.Join(rw, "out")); err != nil || string(b) != "hi\n" {
		t.Fatalf("the read-write mount's source: %q, %v", b, err)
	}
	if ents, err := os.ReadDir(dst); err != nil || len(ents) != 0 {
		t.Fatalf("the host's %s: %v, %v (want the empty mount point)", dst, ents, err)
	}
	if _, err := rt.Start(t.Context(), sb, runtime.ContainerSpec{Name: "bad", Command: []string{"true"},
		Mounts: []runtime.Mount{{Source: filepath.Join(src, "missing"), Destination: dst}}}); err == nil {
		t.Fatal("a mount of a missing source started")
	}
}
