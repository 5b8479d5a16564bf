package containerd

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/ociarchive"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/registrytest"
)

// syncBuffer is a bytes.Buffer a logger writes from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPullWithCredentials pushes the workload image into a real
// docker-registry on 127.0.0.1 with htpasswd auth, then pulls it: without
// credentials and with a wrong password the pull fails as unauthorized,
// with the right ones it pulls and runs. No password reaches an error or
// the runtime's debug log (which has the containerd client's request
// lines).
func TestPullWithCredentials(t *testing.T) {
	e := requireContainerd(t)
	const password, wrong = "registry-pw-7f3a", "wrong-pw-91c2"
	reg := registrytest.Start(t, map[string]string{"alice": password})
	ctx := context.Background()
	img := workloadImage("ignored", e.workload)
	img.Files = append(img.Files, ociarchive.File{Path: "/data/private.txt", Data: []byte(t.Name())})
	ref := reg.Addr + "/private/workload:v1"
	if err := registrytest.Push(ctx, e.daemon.Socket, ref, img, "alice", password); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	rt, err := New(ctx, Config{Socket: e.daemon.Socket, LogRoot: t.TempDir(), LoggerBinary: e.skiff,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	t.Cleanup(func() { _ = rt.RemoveImage(ctx, ref) })
	if ok, _ := rt.ImagePresent(ctx, ref); ok {
		t.Fatal("the image is present before the pull")
	}
	var errs []string
	for name, auth := range map[string]*runtime.AuthConfig{
		"anonymous": nil, "wrong password": {Username: "alice", Password: wrong}, "unknown user": {Username: "mallory", Password: password},
	} {
		_, err := rt.PullImage(ctx, ref, auth, nil)
		if err == nil {
			t.Fatalf("%s: the pull succeeded", name)
		}
		if !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
			t.Errorf("%s: %v, want unauthorized", name, err)
		}
		errs = append(errs, err.Error())
		if ok, _ := rt.ImagePresent(ctx, ref); ok {
			t.Fatalf("%s: the image is present after a failed pull", name)
		}
	}
	t.Logf("errors: %q", errs)
	info, err := rt.PullImage(ctx, ref, &runtime.AuthConfig{Username: "alice", Password: password}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != ref || info.Size == 0 {
		t.Fatalf("pulled %+v", info)
	}
	pod := netnstest.New(t, "pod")
	st := start(t, rt, newSandbox(t, "private", pod.Path), runtime.ContainerSpec{Name: "main", Image: ref, Args: []string{"exit", "3"}})
	if fin := waitState(t, rt, st.ID, runtime.StateExited); fin.ExitCode != 3 {
		t.Fatalf("the pulled image ran with exit code %d, want 3", fin.ExitCode)
	}
	if !strings.Contains(logs.String(), "containerd client") {
		t.Fatalf("the debug log has no client lines (the check below would be vacuous):\n%s", logs.String())
	}
	for _, s := range append(errs, logs.String()) {
		if strings.Contains(s, password) || strings.Contains(s, wrong) {
			t.Fatalf("a password was printed:\n%s", s)
		}
	}
}
