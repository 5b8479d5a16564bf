package netagent_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/ociarchive"
)

var resEvents = api.Lookup(resources, "v1", "events")

// requireContainerd skips unless containerd and runc are there, and builds
// the static test workload (runtime/containerd/testdata/workload) and a
// static skiff, the shim's logging binary (`skiff containerd-log`: this
// test binary is not skiff).
func requireContainerd(t *testing.T) (workload, skiff string) {
	t.Helper()
	for _, bin := range []string{"containerd", "runc", "containerd-shim-runc-v2"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("needs %s on PATH (hack/install-deps.sh installs containerd and runc)", bin)
		}
	}
	out := filepath.Join(t.TempDir(), "workload")
	cmd := exec.Command("go", "build", "-o", out, "./runtime/containerd/testdata/workload")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the workload: %v: %s", err, b)
	}
	skiff = filepath.Join(t.TempDir(), "skiff")
	cmd = exec.Command("go", "build", "-o", skiff, "../cmd/skiff")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building skiff (CGO_ENABLED=0 go build ./cmd/skiff), the logging binary: %v: %s", err, b)
	}
	return out, skiff
}

func workloadImage(name, bin string) ociarchive.Image {
	return ociarchive.Image{Name: name, Files: []ociarchive.File{{Path: "/workload", Source: bin}},
		Entrypoint: []string{"/workload"}, Cmd: []string{"netexec"}}
}

func podEvents(t *testing.T, c *client.Client, pod string) []string {
	t.Helper()
	var l api.EventList
	if err := c.List(context.Background(), resEvents, "default", client.ListOptions{}, &l); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range l.Items {
		if e.InvolvedObject.Name == pod {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

func hasEvent(evs []string, prefix string) bool {
	return slices.ContainsFunc(evs, func(e string) bool { return strings.HasPrefix(e, prefix) })
}

// TestAgentOnContainerd runs pods through a real agent on the containerd
// runtime, with containerd started by the agent's SelectRuntime in its
// data dir: a pod from an imported image becomes Ready and answers at its
// IP; a pod whose image comes from a loopback registry is pulled with
// events; a Never pod of an absent image waits with ErrImageNeverPull; an
// exec liveness probe works; deletion stops and removes the containers.
func TestAgentOnContainerd(t *testing.T) {
	requireNode(t)
	workload, skiff := requireContainerd(t)
	ctx := context.Background()
	s := startServer(t)
	admin, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	// A short data dir: containerd's socket lives in it.
	dataDir, err := os.MkdirTemp("", "skag")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dataDir) })
	rt, name, err := netagent.SelectRuntime(ctx, "containerd", netagent.RuntimeOptions{DataDir: dataDir, ContainerdSocket: filepath.Join(dataDir, "none.sock"), ContainerdLogger: skiff, Logger: testLog(t)})
	if err != nil || name != "containerd" {
		t.Fatalf("SelectRuntime: %q %v", name, err)
	}
	crt := rt.(*containerd.Runtime)
	t.Cleanup(func() {
		// Whatever the test left, no task outlives it; then the managed
		// containerd stops.
		cs, _ := crt.List(ctx)
		for _, c := range cs {
			t.Errorf("container %s of pod %s left at the end", c.Name, c.PodUID)
			_ = crt.Remove(ctx, c.ID)
		}
		crt.Close()
	})
	var arch bytes.Buffer
	if _, err := ociarchive.WriteOCI(&arch, workloadImage("skiff.local/netexec:test", workload)); err != nil {
		t.Fatal(err)
	}
	if _, err := crt.ImportImages(ctx, &arch); err != nil {
		t.Fatal(err)
	}
	// A registry on the machine's loopback: the agent pulls from its own
	// namespace.
	reg := ociarchive.NewRegistry()
	pulledImg := workloadImage("ignored", workload)
	pulledImg.Files = append(pulledImg.Files, ociarchive.File{Path: "/pulled", Data: []byte("yes")})
	if err := reg.Add("netexec", "v1", pulledImg); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: reg}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	registryRef := ln.Addr().String() + "/netexec:v1"

	ns := netnstest.NewNode(t)
	cfg := netagent.Config{
		Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
		NodeName: "node-ctrd", NodeIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")},
		DataDir: dataDir, Runtime: name, DNSUpstreams: []string{},
		RelistPeriod: 200 * time.Millisecond, Logger: testLog(t),
	}
	agent := startAgent(t, nil, cfg, netagent.Deps{Runtime: rt, NodeNetNS: ns.Do})
	n := &node{t: t, ns: ns, dataDir: dataDir}

	pod := func(name, image, policy string) *api.Pod {
		return &api.Pod{
			ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
			Spec: api.PodSpec{Containers: []api.Container{{
				Name: "netexec", Image: image, ImagePullPolicy: policy,
				Args:  []string{"netexec", "--http-port=8080", "--udp-port=-1"},
				Env:   []api.EnvVar{{Name: "POD_NAME", ValueFrom: &api.EnvVarSource{FieldRef: &api.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080}},
				ReadinessProbe: &api.Probe{ProbeHandler: api.ProbeHandler{HTTPGet: &api.HTTPGetAction{Path: "/healthz", Port: api.FromString("http")}},
					PeriodSeconds: 1, FailureThreshold: 1},
				LivenessProbe: &api.Probe{ProbeHandler: api.ProbeHandler{Exec: &api.ExecAction{Command: []string{"/workload", "exit", "0"}}},
					PeriodSeconds: 1, FailureThreshold: 3},
			}}},
		}
	}
	for _, p := range []*api.Pod{
		pod("local", "skiff.local/netexec:test", api.PullIfNotPresent),
		pod("pulled", registryRef, api.PullIfNotPresent),
		pod("never", "skiff.local/absent:v1", api.PullNever),
	} {
		if err := admin.Create(ctx, resPods, "default", p); err != nil {
			t.Fatal(err)
		}
	}
	podCIDR := agent.PodCIDR()
	for _, name := range []string{"local", "pulled"} {
		p := waitPod(t, admin, name, 30*time.Second, "Ready", podReady)
		ip := netip.MustParseAddr(p.Status.PodIP)
		if !podCIDR.Contains(ip) {
			t.Fatalf("%s: pod IP %s outside %s", name, ip, podCIDR)
		}
		if got := n.get(t, "http://"+net.JoinHostPort(ip.String(), "8080")+"/hostname"); got != name {
			t.Fatalf("%s: /hostname = %q", name, got)
		}
		cs := p.Status.ContainerStatuses
		if len(cs) != 1 || !strings.HasPrefix(cs[0].ContainerID, "containerd://") {
			t.Fatalf("%s: container statuses %+v", name, cs)
		}
	}
	waitPod(t, admin, "never", 20*time.Second, "waiting with ErrImageNeverPull", func(p *api.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "ErrImageNeverPull"
	})
	eventually(t, 10*time.Second, "pull events", func() (bool, error) {
		local, pulled, never := podEvents(t, admin, "local"), podEvents(t, admin, "pulled"), podEvents(t, admin, "never")
		ok := hasEvent(local, `Pulled: Container image "skiff.local/netexec:test" already present on machine`) &&
			hasEvent(pulled, `Pulling: Pulling image "`+registryRef+`"`) &&
			hasEvent(pulled, `Pulling: Pulling image "`+registryRef+`": layer sha256:`) &&
			hasEvent(pulled, `Pulled: Successfully pulled image "`+registryRef+`" in `) &&
			hasEvent(never, `ErrImageNeverPull: Container image "skiff.local/absent:v1" is not present with pull policy of Never`)
		return ok, nil
	})
	// The exec liveness probe keeps passing: no restart.
	time.Sleep(1500 * time.Millisecond)
	var p api.Pod
	if err := admin.Get(ctx, resPods, "default", "local", &p); err != nil || p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Fatalf("local restarted under a passing exec liveness probe: %+v %v", p.Status.ContainerStatuses, err)
	}
	// Logs go to the pod's log dir, read through the runtime.
	cs, err := crt.List(ctx)
	if err != nil || len(cs) != 2 {
		t.Fatalf("containerd lists %d containers (%v), want 2", len(cs), err)
	}
	for _, c := range cs {
		if !strings.HasPrefix(c.LogPath, filepath.Join(dataDir, "pods", c.PodUID)) {
			t.Fatalf("log path %s is outside the pod's dir", c.LogPath)
		}
		if err := crt.Logs(ctx, c.ID, false, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	// An agent restart, with its containerd (stopped with the old agent,
	// started again by the new one on the same data dir), adopts the
	// running containers: same container, same IP, no restart.
	before := map[string]*api.Pod{}
	for _, name := range []string{"local", "pulled"} {
		var p api.Pod
		if err := admin.Get(ctx, resPods, "default", name, &p); err != nil {
			t.Fatal(err)
		}
		before[name] = &p
	}
	agent.stop(t)
	if err := crt.Close(); err != nil {
		t.Fatal(err)
	}
	if containerd.SocketAnswers(ctx, containerd.DaemonSocket(netagent.ManagedContainerdDir(dataDir))) {
		t.Fatal("the managed containerd survived the agent")
	}
	if got := n.get(t, "http://"+net.JoinHostPort(before["local"].Status.PodIP, "8080")+"/hostname"); got != "local" {
		t.Fatalf("local while no agent and no containerd run: %q", got)
	}
	rt, name, err = netagent.SelectRuntime(ctx, "containerd", netagent.RuntimeOptions{DataDir: dataDir, ContainerdSocket: filepath.Join(dataDir, "none.sock"), ContainerdLogger: skiff, Logger: testLog(t)})
	if err != nil || name != "containerd" {
		t.Fatalf("SelectRuntime after the restart: %q %v", name, err)
	}
	crt = rt.(*containerd.Runtime)
	startAgent(t, nil, cfg, netagent.Deps{Runtime: rt, NodeNetNS: ns.Do})
	time.Sleep(2 * time.Second) // a few relists and probe periods
	for name, b := range before {
		p := waitPod(t, admin, name, 10*time.Second, "Ready after the restart", podReady)
		was, is := b.Status.ContainerStatuses[0], p.Status.ContainerStatuses[0]
		if is.ContainerID != was.ContainerID || is.RestartCount != 0 || p.Status.PodIP != b.Status.PodIP {
			t.Fatalf("%s after the agent restart: %s restarts %d ip %s, was %s ip %s", name, is.ContainerID, is.RestartCount, p.Status.PodIP, was.ContainerID, b.Status.PodIP)
		}
	}

	for _, name := range []string{"local", "pulled", "never"} {
		if err := admin.Delete(ctx, resPods, "default", name, client.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "pods gone and containers removed", func() (bool, error) {
		var l api.PodList
		if err := admin.List(ctx, resPods, "default", client.ListOptions{}, &l); err != nil {
			return false, err
		}
		cs, err := crt.List(ctx)
		return len(l.Items) == 0 && len(cs) == 0, err
	})
}

// managedContainerd starts the containerd runtime as the agent does when
// none answers (SelectRuntime starts its own under a fresh short data dir:
// the socket must fit a sockaddr_un) and imports images into it. At
// cleanup, a container still there fails the test (and is removed), then
// the daemon stops and the dir goes. log nil is testLog.
func managedContainerd(t *testing.T, prefix, skiff string, log *slog.Logger, images ...ociarchive.Image) (dataDir string, crt *containerd.Runtime) {
	t.Helper()
	ctx := context.Background()
	dataDir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dataDir) })
	if log == nil {
		log = testLog(t)
	}
	rt, name, err := netagent.SelectRuntime(ctx, "containerd", netagent.RuntimeOptions{DataDir: dataDir,
		ContainerdSocket: filepath.Join(dataDir, "none.sock"), ContainerdLogger: skiff, Logger: log})
	if err != nil || name != "containerd" {
		t.Fatalf("SelectRuntime: %q %v", name, err)
	}
	crt = rt.(*containerd.Runtime)
	t.Cleanup(func() {
		cs, _ := crt.List(ctx)
		for _, c := range cs {
			t.Errorf("container %s of pod %s left at the end", c.Name, c.PodUID)
			_ = crt.Remove(ctx, c.ID)
		}
		crt.Close()
	})
	for _, img := range images {
		var arch bytes.Buffer
		if _, err := ociarchive.WriteOCI(&arch, img); err != nil {
			t.Fatal(err)
		}
		if _, err := crt.ImportImages(ctx, &arch); err != nil {
			t.Fatal(err)
		}
	}
	return dataDir, crt
}
