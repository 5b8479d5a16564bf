package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/cli"
	"github.com/skiff-dev/skiff/cli/imagecmd"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/kubectl"
	"github.com/skiff-dev/skiff/netagent"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/ociarchive"
)

// exampleImage is the image examples/ names: the static skiff at /skiff
// (`skiff image build --self --name skiff.local/netexec:dev --import`).
const exampleImage = "skiff.local/netexec:dev"

// execProbes are two pods whose probes are exec probes run inside their
// containers: `skiff exit 0` passes; `skiff exit 1` fails (never Ready),
// and a failing liveness probe restarts the container.
const execProbes = `apiVersion: v1
kind: Pod
metadata: {name: exec-ready, labels: {app: exec}}
spec:
  containers:
  - name: netexec
    image: skiff.local/netexec:dev
    command: [skiff, netexec, --http-port=8080, --udp-port=-1]
    readinessProbe:
      exec: {command: [skiff, exit, "0"]}
      periodSeconds: 1
---
apiVersion: v1
kind: Pod
metadata: {name: exec-unready, labels: {app: exec}}
spec:
  containers:
  - name: netexec
    image: skiff.local/netexec:dev
    command: [skiff, netexec, --http-port=8080, --udp-port=-1]
    readinessProbe:
      exec: {command: [skiff, exit, "1"]}
      periodSeconds: 1
      failureThreshold: 1
    livenessProbe:
      exec: {command: [skiff, exit, "3"]}
      periodSeconds: 1
      failureThreshold: 1
`

// configPod reads a ConfigMap and a Secret through env, envFrom and
// volumes, and prints them (skiff cat).
const configPod = `apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data:
  key: v1
  MODE: fast
---
apiVersion: v1
kind: Secret
metadata: {name: db}
stringData: {password: s3cret}
---
apiVersion: v1
kind: Pod
metadata: {name: cfg-ctr}
spec:
  containers:
  - name: c
    image: skiff.local/netexec:dev
    command: [skiff, cat, /etc/cfg/key, /etc/sec/pw]
    envFrom:
    - {prefix: CFG_, configMapRef: {name: cfg}}
    env:
    - {name: FOO, valueFrom: {configMapKeyRef: {name: cfg, key: key}}}
    - {name: PW, valueFrom: {secretKeyRef: {name: db, key: password}}}
    volumeMounts:
    - {name: cfg, mountPath: /etc/cfg}
    - {name: sec, mountPath: /etc/sec}
  volumes:
  - {name: cfg, configMap: {name: cfg}}
  - {name: sec, secret: {secretName: db, items: [{key: password, path: pw}]}}
`

// projectedPod reads the token volume, a downwardAPI volume and a
// projected one (skiff cat prints contents and modes).
const projectedPod = `apiVersion: v1
kind: Pod
metadata: {name: proj-ctr, labels: {app: proj}}
spec:
  containers:
  - name: c
    image: skiff.local/netexec:dev
    command: [skiff, cat, /etc/info/labels, /etc/info/name, /etc/all/conf/key, /etc/all/ns,
      /var/run/secrets/kubernetes.io/serviceaccount/namespace, /var/run/secrets/kubernetes.io/serviceaccount/ca.crt,
      /var/run/secrets/kubernetes.io/serviceaccount/token]
    volumeMounts:
    - {name: info, mountPath: /etc/info}
    - {name: all, mountPath: /etc/all}
  volumes:
  - name: info
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: name, fieldRef: {fieldPath: metadata.name}, mode: 0400}
  - name: all
    projected:
      defaultMode: 0440
      sources:
      - configMap: {name: cfg, items: [{key: key, path: conf/key}]}
      - downwardAPI: {items: [{path: ns, fieldRef: {fieldPath: metadata.namespace}}]}
`

// requireContainerd skips unless containerd, its runc shim and runc are
// on PATH, and builds the image's static skiff (testdata/skiff) and the
// real one (cmd/skiff), which the shim runs as the logging binary
// (`skiff containerd-log`: the test binary the server runs in is not skiff).
func requireContainerd(t testing.TB) (bin, logger string) {
	t.Helper()
	for _, b := range []string{"containerd", "containerd-shim-runc-v2", "runc"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("needs %s on PATH for the containerd runtime (Debian: containerd, runc; hack/install-deps.sh)", b)
		}
	}
	bin = filepath.Join(t.TempDir(), "skiff")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/skiff")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the image's skiff (CGO_ENABLED=0 go build ./testdata/skiff): %v\n%s", err, out)
	}
	logger = filepath.Join(t.TempDir(), "skiff")
	cmd = exec.Command("go", "build", "-o", logger, "../../cmd/skiff")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building skiff (CGO_ENABLED=0 go build ./cmd/skiff), the logging binary: %v\n%s", err, out)
	}
	return bin, logger
}

// newContainerdCluster is newCluster with --runtime containerd: no
// containerd answers at the socket it is given, so the built-in agent
// starts one itself under <data-dir>/containerd (the data dir is short:
// the daemon's socket lives in it). The example image is imported into
// it before anything is applied. Cleanup removes any container left
// (through containerd), then checks, once the server stopped, that the
// agent's containerd, every shim and every mount under the data dir are
// gone (killing by PID and unmounting what is not, as an error).
func newContainerdCluster(t testing.TB, mode string) *cluster {
	t.Helper()
	requireRoot(t)
	bin, logger := requireContainerd(t)
	dataDir, err := os.MkdirTemp("", "ske2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dataDir) })
	c := newCluster(t, mode, func(cfg *config.Server) {
		cfg.DataDir = dataDir
		cfg.Runtime = netagent.RuntimeContainerd
		cfg.ContainerdSocket = filepath.Join(dataDir, "none.sock")
		cfg.ContainerdLogger = logger
	})
	ctx := context.Background()
	dir := netagent.ManagedContainerdDir(dataDir)
	sock := containerd.DaemonSocket(dir)
	rt, err := containerd.New(ctx, containerd.Config{Socket: sock})
	if err != nil {
		t.Fatalf("the agent's containerd at %s: %v", sock, err)
	}
	var daemonPid int
	c.beforeStop = func() {
		defer rt.Close()
		b, _ := os.ReadFile(filepath.Join(dir, "containerd.pid"))
		daemonPid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		// The agent removes a pod's containers just after it deleted the
		// pod object: give it that moment.
		var cs []runtime.ContainerStatus
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if cs, _ = rt.List(ctx); len(cs) == 0 {
				break
			}
		}
		for _, ct := range cs {
			c.t.Errorf("container %s of pod %s still there 10 s after its pod was gone: removed", ct.Name, ct.PodUID)
			_ = rt.Stop(ctx, ct.ID, 0)
			_ = rt.Remove(ctx, ct.ID)
		}
	}
	c.afterStop = func() {
		if daemonPid > 0 && syscall.Kill(daemonPid, 0) == nil {
			c.t.Errorf("the agent's containerd (pid %d) outlived the server: killed", daemonPid)
			_ = syscall.Kill(daemonPid, syscall.SIGKILL)
		}
		for _, pid := range pidsWith(sock) {
			c.t.Errorf("process %d (%s) still talks to %s: killed", pid, cmdline(pid), sock)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		mounts, _ := os.ReadFile("/proc/mounts")
		for _, l := range strings.Split(string(mounts), "\n") {
			if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[1], dataDir+"/") {
				c.t.Errorf("mount %s left under the data dir: unmounted", f[1])
				_ = syscall.Unmount(f[1], syscall.MNT_DETACH)
			}
		}
	}
	importExampleImage(t, rt, bin)
	return c
}

// importExampleImage imports exampleImage, the static skiff bin at /skiff,
// into rt's containerd.
func importExampleImage(t testing.TB, rt *containerd.Runtime, bin string) {
	t.Helper()
	var arch bytes.Buffer
	img := ociarchive.Image{Name: exampleImage, Files: []ociarchive.File{{Path: "/skiff", Source: bin, Mode: 0o755}},
		Entrypoint: []string{"/skiff"}, Cmd: []string{"netexec"}, Env: []string{imagecmd.SelfPath}}
	if _, err := ociarchive.WriteOCI(&arch, img); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.ImportImages(context.Background(), &arch); err != nil {
		t.Fatalf("importing %s: %v", exampleImage, err)
	}
}

// containerdFloorStart starts a containerd of the floor's own (no agent:
// StartDaemon under a short temporary dir, as the agent runs its own),
// imports exampleImage into it and returns a benchfloor start that runs
// the examples' container (`skiff netexec --http-port=8080
// --udp-port=8081` from the image) in a pod's namespace through the
// containerd runtime: the snapshot, container and task of one pod start,
// without the agent. Cleanup stops the daemon.
func containerdFloorStart(b *testing.B, bin, logger string) func(ctx context.Context, i int, netnsPath string) (func() error, error) {
	b.Helper()
	dir, err := os.MkdirTemp("", "skfloor")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	d, err := containerd.StartDaemon(ctx, containerd.DaemonConfig{Dir: dir})
	if err != nil {
		_ = os.RemoveAll(dir)
		b.Fatalf("floor: containerd: %v", err)
	}
	b.Cleanup(func() {
		if err := d.Stop(); err != nil {
			b.Errorf("floor: stopping containerd: %v", err)
		}
		mounts, _ := os.ReadFile("/proc/mounts")
		for _, l := range strings.Split(string(mounts), "\n") {
			if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[1], dir+"/") {
				b.Errorf("floor: mount %s left under containerd's dir: unmounted", f[1])
				_ = syscall.Unmount(f[1], syscall.MNT_DETACH)
			}
		}
		_ = os.RemoveAll(dir)
	})
	rt, err := containerd.New(ctx, containerd.Config{Socket: d.Socket, LogRoot: b.TempDir(), LoggerBinary: logger})
	if err != nil {
		b.Fatalf("floor: %v", err)
	}
	b.Cleanup(func() { _ = rt.Close() })
	importExampleImage(b, rt, bin)
	return func(ctx context.Context, i int, netnsPath string) (func() error, error) {
		sb := runtime.Sandbox{PodUID: fmt.Sprintf("floor-uid-%d", i), Namespace: "default", Name: fmt.Sprintf("floor-%d", i),
			NetNSPath: netnsPath, LogDir: b.TempDir()}
		st, err := rt.Start(ctx, sb, runtime.ContainerSpec{Name: "netexec", Image: exampleImage,
			Command: []string{"skiff", "netexec", "--http-port=8080", "--udp-port=8081"}})
		if err != nil {
			return nil, err
		}
		return func() error {
			ctx := context.Background()
			if err := rt.Stop(ctx, st.ID, 5*time.Second); err != nil {
				return err
			}
			return rt.Remove(ctx, st.ID)
		}, nil
	}
}

// pidsWith are the processes whose command line mentions s.
func pidsWith(s string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if strings.Contains(cmdline(pid), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// cliCtx is cli with a context (for `skiff logs -f`).
func (c *cluster) cliCtx(ctx context.Context, args ...string) (string, error) {
	var out bytes.Buffer
	kc := filepath.Join(c.dataDir, "admin.kubeconfig")
	env := kubectl.Env{In: strings.NewReader(""), Out: &out, ErrOut: &out,
		Getenv: func(k string) string {
			if k == "KUBECONFIG" {
				return kc
			}
			return ""
		}}
	root := cli.NewRootWith(cli.Runners{}, env)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// TestContainerdRuntime runs the flow's runtime-relevant cases with pods
// in containerd (the agent's own daemon), from the local image examples/
// name, with examples/' manifests unchanged: the spread over the backends
// through the ClusterIP, logs through `skiff logs` (the server's
// pods/log), a pod failing readiness dropping out and coming back, exec
// probes run in the container, graceful termination (out of the rules
// while still serving, then SIGTERM and a clean exit, seen in its logs),
// and a rolling update under load with zero failed requests.
func TestContainerdRuntime(t *testing.T) {
	for _, mode := range []string{"iptables", "nftables"} {
		t.Run(mode, func(t *testing.T) { runContainerd(t, mode) })
	}
}

func runContainerd(t *testing.T, mode string) {
	c := newContainerdCluster(t, mode)
	ctx := context.Background()
	ex := examplesDir(t)
	start := time.Now()
	c.mustCLI("apply", "-f", filepath.Join(ex, "backend.yaml"), "-f", filepath.Join(ex, "client.yaml"), "-f", filepath.Join(ex, "nodeport.yaml"))
	eventually(t, 60*time.Second, "client reaches http://backend-svc", func() (bool, error) {
		if p := c.pod("default", "client"); !api.IsPodReady(p) {
			return false, fmt.Errorf("client not Ready: %+v", p.Status.ContainerStatuses)
		}
		_, err := c.spread("backend-svc", 80, 1)
		return err == nil, err
	})
	t.Logf("%s, containerd: skiff apply -> first response through the ClusterIP: %v", mode, time.Since(start).Round(time.Millisecond))
	var svc api.Service
	if err := c.admin.Get(ctx, resServices, "default", "backend-svc", &svc); err != nil {
		t.Fatal(err)
	}
	vip := svc.Spec.ClusterIP
	eventually(t, 30*time.Second, "3 backends Ready", func() (bool, error) {
		n := c.readyPodNames("default", "app=backend")
		return len(n) == 3, fmt.Errorf("ready: %v", n)
	})

	c.run(t, "containerd pods spread behind the ClusterIP", func(t *testing.T) {
		backends := c.readyPodNames("default", "app=backend")
		for _, name := range append(slices.Clone(backends), "client") {
			cs := c.pod("default", name).Status.ContainerStatuses
			if len(cs) != 1 || !strings.HasPrefix(cs[0].ContainerID, "containerd://") {
				t.Fatalf("%s: container statuses %+v, want a containerd:// container", name, cs)
			}
		}
		eventually(t, 20*time.Second, "all three answer at "+vip, func() (bool, error) {
			seen, err := c.spread(vip, 80, 30)
			return err == nil && slices.Equal(seen, backends), fmt.Errorf("seen %v want %v (%v)", seen, backends, err)
		})
		if in, ready := c.ruleEndpointIPs("default", "backend-svc", "http"), c.readyIPs(); !slices.Equal(in, ready) {
			t.Fatalf("kernel rules send to %v, want the slice's %v", in, ready)
		}
	})

	c.run(t, "skiff logs reads the container's log", func(t *testing.T) {
		pod := c.readyPodNames("default", "app=backend")[0]
		out := c.mustCLI("logs", pod)
		if !strings.Contains(out, "netexec: serving") || !strings.Contains(out, "pod="+pod) {
			t.Fatalf("skiff logs %s: no start line of its netexec in\n%s", pod, out)
		}
	})

	c.run(t, "a pod failing readiness drops out and comes back", func(t *testing.T) {
		victim := c.readyPodNames("default", "app=backend")[0]
		ip := c.podIP("default", victim)
		hc := httpIn(c.node, 5*time.Second)
		if _, err := get(hc, "http://"+net.JoinHostPort(ip, "8080")+"/sethealth?status=503"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 15*time.Second, victim+" out of the slice's ready endpoints and of the rules", func() (bool, error) {
			ready, notReady, _ := c.sliceEndpoints("default", "backend-svc")
			in := c.ruleEndpointIPs("default", "backend-svc", "http")
			return !slices.Contains(ready, ip) && slices.Contains(notReady, ip) && len(in) == 2 && !slices.Contains(in, ip),
				fmt.Errorf("ready %v, rules to %v", ready, in)
		})
		if seen, err := c.spread(vip, 80, 30); err != nil || slices.Contains(seen, victim) || len(seen) != 2 {
			t.Fatalf("after %s failed readiness: %v %v", victim, seen, err)
		}
		if _, err := get(hc, "http://"+net.JoinHostPort(ip, "8080")+"/sethealth?status=200"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, victim+" back in rotation", func() (bool, error) {
			seen, err := c.spread(vip, 80, 30)
			return err == nil && slices.Contains(seen, victim), fmt.Errorf("%v %v", seen, err)
		})
	})

	c.run(t, "exec probes run in the container", func(t *testing.T) {
		c.mustCLI("apply", "-f", writeFile(t, "exec.yaml", execProbes))
		eventually(t, 30*time.Second, "exec-ready Ready (skiff exit 0 in its container)", func() (bool, error) {
			return api.IsPodReady(c.pod("default", "exec-ready")), nil
		})
		eventually(t, 15*time.Second, "exec-unready restarted by its failing liveness probe, with an Unhealthy event", func() (bool, error) {
			p := c.pod("default", "exec-unready")
			cs := p.Status.ContainerStatuses
			if api.IsPodReady(p) {
				t.Fatalf("exec-unready Ready though its readiness probe exits 1: %+v", cs)
			}
			return len(cs) == 1 && cs[0].RestartCount >= 1 && c.hasEvent("exec-unready", "Unhealthy", "Liveness probe failed"), fmt.Errorf("%+v", cs)
		})
		c.mustCLI("delete", "pod", "exec-ready", "exec-unready", "--grace-period=1")
	})

	c.run(t, "env and volumes from a ConfigMap and a Secret", func(t *testing.T) {
		c.mustCLI("apply", "-f", writeFile(t, "cfg.yaml", configPod))
		eventually(t, 30*time.Second, "cfg-ctr shows the env and the files", func() (bool, error) {
			out, _ := c.cli("logs", "cfg-ctr")
			ok := strings.Contains(out, "FOO=v1\n") && strings.Contains(out, "CFG_MODE=fast\n") && strings.Contains(out, "PW=s3cret\n") &&
				strings.Contains(out, "/etc/cfg/key=v1\n") && strings.Contains(out, "/etc/sec/pw=s3cret\n")
			return ok, fmt.Errorf("logs %q", out)
		})
		c.mustCLI("apply", "-f", writeFile(t, "cfg2.yaml", strings.Replace(configPod, "key: v1", "key: v2", 1)))
		eventually(t, 30*time.Second, "the configMap volume follows the update", func() (bool, error) {
			out, _ := c.cli("logs", "cfg-ctr")
			return strings.Contains(out, "/etc/cfg/key=v2\n"), fmt.Errorf("logs end %q", out[max(0, len(out)-200):])
		})
		c.mustCLI("delete", "pod", "cfg-ctr", "--grace-period=1")
	})

	c.run(t, "downwardAPI projected and token volumes", func(t *testing.T) {
		c.mustCLI("apply", "-f", writeFile(t, "cfg.yaml", configPod))
		c.mustCLI("apply", "-f", writeFile(t, "proj.yaml", projectedPod))
		sa := "/var/run/secrets/kubernetes.io/serviceaccount/"
		ca := string(c.s.Server().Bundle().CACertPEM)
		eventually(t, 30*time.Second, "proj-ctr shows its files", func() (bool, error) {
			out, _ := c.cli("logs", "proj-ctr")
			ok := strings.Contains(out, "/etc/info/labels=app=\"proj\"\n") && strings.Contains(out, "/etc/info/name=proj-ctr\n") &&
				strings.Contains(out, "/etc/info/name mode=400\n") && strings.Contains(out, "/etc/all/conf/key=v") &&
				strings.Contains(out, "/etc/all/conf/key mode=440\n") && strings.Contains(out, "/etc/all/ns=default\n") &&
				strings.Contains(out, sa+"namespace=default\n") && strings.Contains(out, sa+"ca.crt="+ca) &&
				strings.Contains(out, sa+"token=ey") && strings.Contains(out, sa+"token mode=644\n") &&
				strings.Contains(out, "KUBERNETES_SERVICE_HOST=10.96.0.1\n")
			return ok, fmt.Errorf("logs %q", out[max(0, len(out)-1500):])
		})
		c.mustCLI("label", "pod", "proj-ctr", "tier=back")
		eventually(t, 30*time.Second, "the labels file follows the label", func() (bool, error) {
			out, _ := c.cli("logs", "proj-ctr")
			return strings.Contains(out, "/etc/info/labels=app=\"proj\"\ntier=\"back\"\n"), fmt.Errorf("logs end %q", out[max(0, len(out)-600):])
		})
		c.mustCLI("delete", "pod", "proj-ctr", "cfg-ctr", "--grace-period=1")
	})

	c.run(t, "graceful termination: out of the rules while serving, then SIGTERM", func(t *testing.T) {
		victim := c.readyPodNames("default", "app=backend")[0]
		ip := c.podIP("default", victim)
		// Follow its log: it ends when the container exits.
		lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		logs := make(chan string, 1)
		go func() {
			out, _ := c.cliCtx(lctx, "logs", "-f", victim)
			logs <- out
		}()
		c.mustCLI("delete", "pod", victim, "--wait=false")
		eventually(t, 5*time.Second, victim+" terminating and out of the rules", func() (bool, error) {
			in := c.ruleEndpointIPs("default", "backend-svc", "http")
			return c.terminatingServing(ip) && len(in) >= 2 && !slices.Contains(in, ip), fmt.Errorf("rules to %v", in)
		})
		if body, err := get(httpIn(c.node, 2*time.Second), "http://"+net.JoinHostPort(ip, "8080")+"/hostname"); err != nil || body != victim {
			t.Fatalf("out of the rules, %s no longer answers: %q %v", victim, body, err)
		}
		var out string
		select {
		case out = <-logs:
		case <-lctx.Done():
			t.Fatalf("skiff logs -f %s did not end with its container", victim)
		}
		if !strings.Contains(out, "netexec: stopped gracefully") {
			t.Fatalf("skiff logs -f %s: no graceful stop (SIGTERM) in\n%s", victim, out)
		}
		eventually(t, 30*time.Second, "3 ready backends again", func() (bool, error) {
			n := c.readyPodNames("default", "app=backend")
			return len(n) == 3 && !slices.Contains(n, victim), fmt.Errorf("%v", n)
		})
	})

	c.run(t, "rolling update under load: zero failed requests", func(t *testing.T) {
		res := rollingUpdateUnderLoad(t, c, vip)
		t.Logf("%s, containerd: rolling update in %v: ClusterIP from a pod %d requests (%.0f/s), %d failed; NodePort from another netns %d requests (%.0f/s), %d failed",
			mode, res.elapsed.Round(time.Millisecond), res.pod, res.podRate(), res.podFailed, res.node, res.nodeRate(), res.nodeFailed)
		if res.podFailed > 0 || res.nodeFailed > 0 {
			t.Fatalf("failed requests during the rolling update: %d through the ClusterIP (%v), %d through the NodePort (%v)",
				res.podFailed, res.podErr, res.nodeFailed, res.nodeErr)
		}
		if res.podRate() < 50 || res.nodeRate() < 50 {
			t.Fatalf("load too light to mean anything: %.0f/s and %.0f/s, want >= 50/s each", res.podRate(), res.nodeRate())
		}
	})
}

// readyIPs are backend-svc's ready endpoint addresses, sorted.
func (c *cluster) readyIPs() []string {
	ready, _, _ := c.sliceEndpoints("default", "backend-svc")
	return ready
}

// terminatingServing says whether ip is a terminating, serving, not ready
// endpoint of backend-svc.
func (c *cluster) terminatingServing(ip string) bool {
	var l api.EndpointSliceList
	if err := c.admin.List(context.Background(), resSlices, "default", client.ListOptions{LabelSelector: "kubernetes.io/service-name=backend-svc"}, &l); err != nil {
		return false
	}
	for _, sl := range l.Items {
		for _, e := range sl.Endpoints {
			cd := e.Conditions
			if e.Addresses[0] == ip && cd.Terminating != nil && *cd.Terminating && cd.Serving != nil && *cd.Serving &&
				cd.Ready != nil && !*cd.Ready {
				return true
			}
		}
	}
	return false
}

var resEvents = api.Lookup(resources, "v1", "events")

// hasEvent says whether pod (in default) has an event of reason whose
// message contains substr.
func (c *cluster) hasEvent(pod, reason, substr string) bool {
	var l api.EventList
	if err := c.admin.List(context.Background(), resEvents, "default", client.ListOptions{}, &l); err != nil {
		return false
	}
	return slices.ContainsFunc(l.Items, func(e api.Event) bool {
		return e.InvolvedObject.Name == pod && e.Reason == reason && strings.Contains(e.Message, substr)
	})
}

// BenchmarkApplyToFirstResponseContainerd is BenchmarkApplyToFirstResponse
// with the pods in containerd (the agent's own daemon, the example image
// imported before the apply). Its floor (floor-s, floor-all-s,
// first-over-floor: see BenchmarkApplyToFirstResponse) starts the same
// pods' containers from the same image in a containerd of its own, through
// the containerd runtime without the agent (containerdFloorStart).
//
//	go test -run '^$' -bench ApplyToFirstResponseContainerd -benchtime 3x ./test/e2e/
func BenchmarkApplyToFirstResponseContainerd(b *testing.B) {
	for _, mode := range []string{"iptables", "nftables"} {
		b.Run(mode, func(b *testing.B) {
			requireRoot(b)
			bin, logger := requireContainerd(b)
			start := containerdFloorStart(b, bin, logger)
			sum := map[string]time.Duration{}
			var floor applyFloorSum
			for range b.N {
				c := newContainerdCluster(b, mode)
				at := applyToFirstResponseIn(b, c, mode)
				c.cleanup()
				for k, v := range at {
					sum[k] += v
				}
				floor.add(applyFloor(b, start))
			}
			reportApply(b, sum, floor)
		})
	}
}
