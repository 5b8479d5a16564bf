package process

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// TestStdinAfterRestart: a container started with stdin by an agent that
// then exits keeps its stdin (no EOF) and a new Runtime's AttachStdin
// writes to it; with stdinOnce the old agent's exit was its EOF, and a
// new session's stdin is dropped.
func TestStdinAfterRestart(t *testing.T) {
	requireRoot(t)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
	_, podNS := newNetNS(t)
	for _, mode := range []string{"stdin", "once"} {
		t.Run(mode, func(t *testing.T) {
			stateDir, logDir := t.TempDir(), t.TempDir()
			cmd := exec.Command(testBinary(t), "start-detached", stateDir, podNS, "", "", logDir,
				"--", "sh", "-c", "cat; echo stdin-closed; exec sleep 3600")
			cmd.Env = append(os.Environ(), "SKIFF_TEST_STDIN="+mode)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("start-detached: %v (%s)", err, errOutput(err))
			}
			var started runtime.ContainerStatus
			if err := json.Unmarshal(out, &started); err != nil {
				t.Fatalf("start-detached printed %q: %v", out, err)
			}
			killAtCleanup(t, started.Pid)
			t.Cleanup(func() { reap(t, started.Pid) })
			if _, err := os.Stat(filepath.Join(stateDir, started.ID+".stdin")); err != nil {
				t.Fatalf("the stdin FIFO: %v", err)
			}
			rt := newRuntime(t, stateDir)
			ctx := context.Background()
			if mode == "once" {
				waitLog(t, started.LogPath, "stdin-closed")
				if err := rt.AttachStdin(ctx, started.ID, strings.NewReader("late\n")); err != nil {
					t.Fatalf("AttachStdin to a closed stdin: %v, want it dropped", err)
				}
				return
			}
			if err := rt.AttachStdin(ctx, started.ID, strings.NewReader("hello\n")); err != nil {
				t.Fatal(err)
			}
			waitLog(t, started.LogPath, "hello")
			if err := rt.AttachStdin(ctx, started.ID, strings.NewReader("again\n")); err != nil {
				t.Fatal(err)
			}
			waitLog(t, started.LogPath, "again")
			if hasLine(readFile(t, started.LogPath), "stdin-closed") {
				t.Fatalf("the container read EOF: %q", readFile(t, started.LogPath))
			}
			if err := rt.Remove(ctx, started.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(stateDir, started.ID+".stdin")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the stdin FIFO after Remove: %v", err)
			}
		})
	}
}

// TestAttachStdinWithout: a container started without stdin is
// runtime.ErrNoStdin.
func TestAttachStdinWithout(t *testing.T) {
	requireRoot(t)
	_, podNS := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	st := start(t, rt, newSandbox(t, "nostdin", podNS, "", ""), runtime.ContainerSpec{Name: "main", Command: []string{"sleep", "3600"}})
	if err := rt.AttachStdin(context.Background(), st.ID, strings.NewReader("x")); !errors.Is(err, runtime.ErrNoStdin) {
		t.Fatalf("AttachStdin: %v, want ErrNoStdin", err)
	}
	if err := rt.Remove(context.Background(), st.ID); err != nil {
		t.Fatal(err)
	}
}
