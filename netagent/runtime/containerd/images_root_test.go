package containerd

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/ociarchive"
)

// TestImportArchives imports the workload as an OCI layout and as a
// docker-save archive, finds both in Images, and runs the docker one.
func TestImportArchives(t *testing.T) {
	e := requireContainerd(t)
	rt := newTestRuntime(t, e)
	ctx := context.Background()
	for _, format := range []string{"oci", "docker"} {
		name := "skiff.local/import-" + format + ":v1"
		infos, err := importImage(rt, format, workloadImage(name, e.workload))
		if err != nil {
			t.Fatalf("import %s: %v", format, err)
		}
		if len(infos) != 1 || infos[0].Name != name || infos[0].Size == 0 || !strings.HasPrefix(infos[0].Digest, "sha256:") {
			t.Fatalf("import %s: %+v", format, infos)
		}
		t.Cleanup(func() { _ = rt.RemoveImage(ctx, name) })
	}
	imgs, err := rt.Images(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, im := range imgs {
		names = append(names, im.Name)
	}
	for _, want := range []string{"skiff.local/import-oci:v1", "skiff.local/import-docker:v1", testImage} {
		if !slices.Contains(names, want) {
			t.Fatalf("Images lacks %s: %v", want, names)
		}
	}
	pod := netnstest.New(t, "pod")
	st := start(t, rt, newSandbox(t, "docker-img", pod.Path), runtime.ContainerSpec{Name: "main", Image: "skiff.local/import-docker:v1", Args: []string{"exit", "7"}})
	if fin := waitState(t, rt, st.ID, runtime.StateExited); fin.ExitCode != 7 {
		t.Fatalf("the docker-archive image ran with exit code %d, want 7", fin.ExitCode)
	}
	if _, err := rt.ImportImages(ctx, strings.NewReader("not a tar")); err == nil {
		t.Fatal("importing garbage succeeded")
	}
}

// serveRegistry serves img as <addr>/workload:<tag> on 127.0.0.1 and
// returns addr.
func serveRegistry(t *testing.T, tag string, img ociarchive.Image) (string, *ociarchive.Registry) {
	t.Helper()
	g := ociarchive.NewRegistry()
	if err := g.Add("workload", tag, img); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: g}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), g
}

// slowBlobs serves blob bodies in two halves a pause apart, so that a
// pull has a blob in flight for a while.
type slowBlobs struct {
	h     http.Handler
	pause time.Duration
}

func (s slowBlobs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.Contains(r.URL.Path, "/blobs/") && r.Method == http.MethodGet {
		w = &halfWriter{ResponseWriter: w, pause: s.pause}
	}
	s.h.ServeHTTP(w, r)
}

type halfWriter struct {
	http.ResponseWriter
	pause time.Duration
}

func (h *halfWriter) Write(p []byte) (int, error) {
	if len(p) < 1024 {
		return h.ResponseWriter.Write(p)
	}
	n, err := h.ResponseWriter.Write(p[:len(p)/2])
	if err != nil {
		return n, err
	}
	h.ResponseWriter.(http.Flusher).Flush()
	time.Sleep(h.pause)
	m, err := h.ResponseWriter.Write(p[len(p)/2:])
	return n + m, err
}

// TestPullProgressBytes: a blob in flight is reported with the bytes
// fetched so far.
func TestPullProgressBytes(t *testing.T) {
	e := requireContainerd(t)
	rt, err := New(context.Background(), Config{Socket: e.daemon.Socket, LoggerBinary: e.skiff, PullProgressInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := context.Background()
	img := workloadImage("ignored", e.workload)
	img.Files = append(img.Files, ociarchive.File{Path: "/data/slow.txt", Data: []byte(t.Name())})
	g := ociarchive.NewRegistry()
	if err := g.Add("workload", "slow", img); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: slowBlobs{h: g, pause: 600 * time.Millisecond}}
	go srv.Serve(ln)
	defer srv.Close()
	ref := ln.Addr().String() + "/workload:slow"
	t.Cleanup(func() { _ = rt.RemoveImage(ctx, ref) })
	var mu sync.Mutex
	var partial []PullProgress
	if _, err := rt.PullImage(ctx, ref, nil, func(p PullProgress) {
		if p.Fetched > 0 {
			mu.Lock()
			partial = append(partial, p)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(partial, func(p PullProgress) bool {
		return p.MediaType == ociarchive.MediaTypeLayer && p.Fetched < p.Size && p.Size > 1<<20
	}) {
		t.Fatalf("no report of the layer half fetched: %+v", partial)
	}
}

// TestPullFromLoopbackRegistry pulls over plain HTTP from a registry on
// 127.0.0.1, with progress, and runs the pulled image.
func TestPullFromLoopbackRegistry(t *testing.T) {
	e := requireContainerd(t)
	rt := newTestRuntime(t, e)
	ctx := context.Background()
	// A layer of its own, so that nothing of it is in the content store.
	img := workloadImage("ignored", e.workload)
	img.Files = append(img.Files, ociarchive.File{Path: "/data/pulled.txt", Data: []byte(t.Name())})
	addr, g := serveRegistry(t, "v2", img)
	ref := addr + "/workload:v2"
	t.Cleanup(func() { _ = rt.RemoveImage(ctx, ref) })
	if ok, err := rt.ImagePresent(ctx, ref); err != nil || ok {
		t.Fatalf("ImagePresent before the pull: %v %v", ok, err)
	}
	var steps []PullProgress
	info, err := rt.PullImage(ctx, ref, nil, func(p PullProgress) { steps = append(steps, p) })
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != ref || info.Size == 0 {
		t.Fatalf("pulled %+v", info)
	}
	var types []string
	for _, s := range steps {
		types = append(types, s.MediaType)
	}
	for _, want := range []string{ociarchive.MediaTypeManifest, ociarchive.MediaTypeConfig, ociarchive.MediaTypeLayer} {
		if !slices.Contains(types, want) {
			t.Fatalf("progress lacks %s: %v", want, types)
		}
	}
	if n := g.BlobFetches(); n != 2 {
		t.Fatalf("%d blob fetches, want 2 (config and layer)", n)
	}
	if ok, err := rt.ImagePresent(ctx, ref); err != nil || !ok {
		t.Fatalf("ImagePresent after the pull: %v %v", ok, err)
	}
	pod := netnstest.New(t, "pod")
	st := start(t, rt, newSandbox(t, "pulled", pod.Path), runtime.ContainerSpec{Name: "main", Image: ref, Args: []string{"exit", "5"}})
	if fin := waitState(t, rt, st.ID, runtime.StateExited); fin.ExitCode != 5 {
		t.Fatalf("the pulled image ran with exit code %d, want 5", fin.ExitCode)
	}
	if _, err := rt.PullImage(ctx, addr+"/workload:absent", nil, nil); err == nil {
		t.Fatal("pulling an absent tag succeeded")
	}
}
