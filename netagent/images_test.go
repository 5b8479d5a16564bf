package netagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd"
)

// pullingRuntime is the fake runtime with an image store: images present,
// pulls recorded, and a number of failures to serve per image before a
// pull succeeds. Start refuses an image that is not present, as
// containerd's does.
type pullingRuntime struct {
	*fakeRuntime
	mu      sync.Mutex
	present map[string]bool
	failN   map[string]int
	pulls   []string
}

func (r *pullingRuntime) ImagePresent(_ context.Context, image string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.present[image], nil
}

func (r *pullingRuntime) PullImage(_ context.Context, image string, _ *runtime.AuthConfig, progress func(containerd.PullProgress)) (containerd.ImageInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pulls = append(r.pulls, image)
	if r.failN[image] > 0 {
		r.failN[image]--
		return containerd.ImageInfo{}, errors.New("connection refused")
	}
	progress(containerd.PullProgress{Ref: image, MediaType: "application/vnd.oci.image.layer.v1.tar", Digest: "sha256:0123456789abcdef0123", Size: 42})
	r.present[image] = true
	return containerd.ImageInfo{Name: image, Size: 42}, nil
}

func (r *pullingRuntime) Start(ctx context.Context, sb runtime.Sandbox, c runtime.ContainerSpec) (runtime.ContainerStatus, error) {
	r.mu.Lock()
	ok := r.present[c.Image]
	r.mu.Unlock()
	if !ok {
		return runtime.ContainerStatus{}, fmt.Errorf("image %s is not present", c.Image)
	}
	return r.fakeRuntime.Start(ctx, sb, c)
}

func (r *pullingRuntime) pulled(image string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, p := range r.pulls {
		if p == image {
			n++
		}
	}
	return n
}

func TestPullPolicyDefaults(t *testing.T) {
	for image, want := range map[string]string{
		"busybox": "Always", "busybox:latest": "Always", "reg:5000/app": "Always", "reg:5000/app:v1": "IfNotPresent",
		"app@sha256:abc": "IfNotPresent", "skiff.local/netexec:dev": "IfNotPresent",
	} {
		if got := pullPolicy(&api.Container{Image: image}); got != want {
			t.Errorf("%s: %s, want %s", image, got, want)
		}
	}
	if got := pullPolicy(&api.Container{Image: "busybox", ImagePullPolicy: api.PullNever}); got != api.PullNever {
		t.Errorf("an explicit policy is kept: %s", got)
	}
}

// TestImagePulls: the worker pulls per imagePullPolicy before Start, with
// the kubelet's events and waiting reasons (ErrImagePull, then
// ImagePullBackOff while the retry waits; ErrImageNeverPull).
func TestImagePulls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &callLog{start: time.Now()}
		rt := &pullingRuntime{fakeRuntime: newFakeRuntime(log),
			present: map[string]bool{"reg/cached:v1": true, "reg/latest:latest": true},
			failN:   map[string]int{"reg/flaky:v1": 2}}
		h := &harness{t: t, log: log, rt: rt.fakeRuntime, net: newFakeNet(log), api: newFakeAPI(log), rec: &fakeRecorder{}}
		dir := t.TempDir()
		rc := filepath.Join(dir, "host-resolv.conf")
		if err := os.WriteFile(rc, []byte("nameserver 192.0.2.53\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		h.cfg = &Config{Server: "https://127.0.0.1:1", DataDir: dir, NodeName: "node-1", HostResolvConf: rc, Logger: testLogger(t)}
		if err := h.cfg.defaults(); err != nil {
			t.Fatal(err)
		}
		h.ctx, h.cancel = context.WithCancel(context.Background())
		h.m = newPodManager(h.cfg, rt, h.net, nil, fakeAPIClient{h.api}, h.api, h.rec, fakeGateway)
		h.api.notify = func(obj api.Object, deleted bool) {
			if deleted {
				h.m.onPodDelete(obj)
			} else {
				h.m.onPod(obj)
			}
		}
		h.m.start(h.ctx, nil)
		h.m.wg.Go(func() { h.m.run(h.ctx) })
		h.m.wg.Go(func() { h.m.relist(h.ctx) })
		h.m.wg.Go(func() { h.m.status.run(h.ctx, 2) })
		defer h.stop()

		pod := func(name, image, policy string) *api.Pod {
			return testPod(name, api.Container{Name: "app", Image: image, ImagePullPolicy: policy, Command: []string{"netexec"}})
		}
		h.api.put(pod("new", "reg/new:v1", api.PullIfNotPresent))
		h.api.put(pod("cached", "reg/cached:v1", api.PullIfNotPresent))
		h.api.put(pod("latest", "reg/latest:latest", ""))
		h.api.put(pod("never", "reg/absent:v1", api.PullNever))
		h.api.put(pod("flaky", "reg/flaky:v1", api.PullIfNotPresent))
		running := func(name string) func() bool {
			return func() bool { return h.containerStatus(name, "app").State.Running != nil }
		}
		for _, name := range []string{"new", "cached", "latest"} {
			h.waitFor(name+" running", 5*time.Second, running(name))
		}
		if rt.pulled("reg/new:v1") != 1 || rt.pulled("reg/cached:v1") != 0 || rt.pulled("reg/latest:latest") != 1 {
			t.Fatalf("pulls: %v", rt.pulls)
		}
		for _, ev := range []string{
			`Normal Pulling: Pulling image "reg/new:v1"`,
			`Normal Pulling: Pulling image "reg/new:v1": layer sha256:0123456789ab (42 bytes)`,
			`Normal Pulled: Successfully pulled image "reg/new:v1" in `,
			`Normal Pulled: Container image "reg/cached:v1" already present on machine`,
			`Normal Pulled: Successfully pulled image "reg/latest:latest"`,
			`Warning ErrImageNeverPull: Container image "reg/absent:v1" is not present with pull policy of Never`,
			`Warning Failed: Failed to pull image "reg/flaky:v1": connection refused`,
			`Warning Failed: Error: ErrImagePull`,
		} {
			if !h.rec.has(ev) {
				t.Errorf("no event %q in\n%s", ev, strings.Join(h.rec.events, "\n"))
			}
		}
		if w := h.containerStatus("never", "app").State.Waiting; w == nil || w.Reason != reasonErrImageNeverPull {
			t.Fatalf("never: waiting %+v", w)
		}
		if rt.pulled("reg/absent:v1") != 0 {
			t.Fatal("a Never image was pulled")
		}
		// The failed pull waits its back-off as ImagePullBackOff, then
		// succeeds on the third try.
		h.waitFor("flaky in ImagePullBackOff", 5*time.Second, func() bool {
			w := h.containerStatus("flaky", "app").State.Waiting
			return w != nil && w.Reason == reasonImagePullBackOff
		})
		if !h.rec.has(`Normal BackOff: Back-off pulling image "reg/flaky:v1"`) {
			t.Fatalf("no BackOff event:\n%s", strings.Join(h.rec.events, "\n"))
		}
		h.waitFor("flaky running after its retries", 2*time.Minute, running("flaky"))
		if n := rt.pulled("reg/flaky:v1"); n != 3 {
			t.Fatalf("flaky pulled %d times, want 3", n)
		}
	})
}
