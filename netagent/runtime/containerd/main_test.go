package containerd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/netns"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/ociarchive"
)

// testImage is the image every root test runs: the workload binary of
// testdata/workload at /workload, with ENTRYPOINT [/workload] and CMD
// [netexec].
const testImage = "skiff.local/workload:test"

// env is what the root tests share: one containerd started with
// StartDaemon in a temporary dir (stopped and removed by TestMain), and the
// workload binary built once.
type testEnv struct {
	dir      string
	daemon   *Daemon
	workload string // the static workload binary
	skiff    string // a static skiff (cmd/skiff): the shim's logging binary
	err      error  // why the env is unusable (skip reason)
	fatal    bool   // err is a failure, not a skip
}

var (
	envOnce sync.Once
	env     testEnv
)

func TestMain(m *testing.M) {
	code := m.Run()
	if env.daemon != nil {
		cleanupNamespace(env.daemon.Socket)
		_ = env.daemon.Stop()
	}
	if env.dir != "" {
		os.RemoveAll(env.dir)
	}
	os.Exit(code)
}

// cleanupNamespace removes every container left in the test namespace,
// so that no task (shim, workload) outlives the tests.
func cleanupNamespace(sock string) {
	ctx := context.Background()
	rt, err := New(ctx, Config{Socket: sock})
	if err != nil {
		return
	}
	defer rt.Close()
	cs, _ := rt.List(ctx)
	for _, c := range cs {
		_ = rt.Remove(ctx, c.ID)
	}
}

// requireContainerd skips unless the test can run containerd: root,
// containerd and runc on PATH. It returns the shared env.
func requireContainerd(t testing.TB) *testEnv {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: runs containerd and network namespaces")
	}
	for _, bin := range []string{"containerd", "runc", "containerd-shim-runc-v2"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("needs %s on PATH (hack/install-deps.sh installs containerd and runc)", bin)
		}
	}
	envOnce.Do(func() {
		// A short dir: the socket path must fit a sockaddr_un.
		dir, err := os.MkdirTemp("", "skctrd")
		if err != nil {
			env.err, env.fatal = err, true
			return
		}
		env.dir = dir
		out := filepath.Join(dir, "workload")
		cmd := exec.Command("go", "build", "-o", out, "./testdata/workload")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			env.err, env.fatal = fmt.Errorf("building the workload: %v: %s", err, b), true
			return
		}
		env.workload = out
		// The shim runs the logging binary (`skiff containerd-log`): this
		// test binary is not skiff, so build the real one.
		env.skiff = filepath.Join(dir, "skiff")
		cmd = exec.Command("go", "build", "-o", env.skiff, "../../../cmd/skiff")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			env.err, env.fatal = fmt.Errorf("building skiff (CGO_ENABLED=0 go build ./cmd/skiff), the logging binary: %v: %s", err, b), true
			return
		}
		d, err := StartDaemon(context.Background(), DaemonConfig{Dir: filepath.Join(dir, "containerd")})
		if err != nil {
			env.err, env.fatal = err, true
			return
		}
		env.daemon = d
		rt, err := New(context.Background(), Config{Socket: d.Socket})
		if err != nil {
			env.err, env.fatal = err, true
			return
		}
		defer rt.Close()
		if _, err := importImage(rt, "oci", workloadImage(testImage, out)); err != nil {
			env.err, env.fatal = err, true
		}
	})
	if env.err != nil {
		if env.fatal {
			t.Fatal(env.err)
		}
		t.Skip(env.err)
	}
	return &env
}

// workloadImage is the single-layer image of the workload binary.
func workloadImage(name, bin string) ociarchive.Image {
	return ociarchive.Image{
		Name:       name,
		Files:      []ociarchive.File{{Path: "/workload", Source: bin}, {Path: "/data/hello.txt", Data: []byte("hello\n"), Mode: 0o644}},
		Entrypoint: []string{"/workload"},
		Cmd:        []string{"netexec"},
		Env:        []string{"PATH=/usr/bin:/bin", "IMAGE_ENV=from-image"},
		WorkingDir: "/data",
	}
}

// archive writes img as an OCI layout ("oci") or docker-save ("docker")
// archive.
func archive(format string, img ociarchive.Image) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	if format == "docker" {
		err = ociarchive.WriteDocker(&buf, img)
	} else {
		_, err = ociarchive.WriteOCI(&buf, img)
	}
	return buf.Bytes(), err
}

// importImage imports img, written as format.
func importImage(rt *Runtime, format string, img ociarchive.Image) ([]ImageInfo, error) {
	b, err := archive(format, img)
	if err != nil {
		return nil, err
	}
	return rt.ImportImages(context.Background(), bytes.NewReader(b))
}

func newTestRuntime(t *testing.T, e *testEnv) *Runtime {
	t.Helper()
	rt, err := New(context.Background(), Config{Socket: e.daemon.Socket, LogPollInterval: 20 * time.Millisecond, LogRoot: t.TempDir(), LoggerBinary: e.skiff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// start starts a container and removes it at cleanup.
func start(t *testing.T, rt *Runtime, sb runtime.Sandbox, spec runtime.ContainerSpec) runtime.ContainerStatus {
	t.Helper()
	st, err := rt.Start(context.Background(), sb, spec)
	if err != nil {
		t.Fatalf("Start %s: %v", spec.Name, err)
	}
	t.Cleanup(func() {
		if err := rt.Remove(context.Background(), st.ID); err != nil {
			t.Errorf("Remove %s: %v", st.ID, err)
		}
	})
	return st
}

// newSandbox writes a pod's resolv.conf and hosts and returns its Sandbox.
func newSandbox(t *testing.T, name, netnsPath string) runtime.Sandbox {
	t.Helper()
	dir := t.TempDir()
	sb := runtime.Sandbox{PodUID: "uid-" + name, Namespace: "default", Name: name, NetNSPath: netnsPath,
		ResolvConf: filepath.Join(dir, "resolv.conf"), Hosts: filepath.Join(dir, "hosts"), LogDir: filepath.Join(dir, "logs")}
	writeFile(t, sb.ResolvConf, "nameserver 10.96.0.10\nsearch default.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n")
	writeFile(t, sb.Hosts, "127.0.0.1\tlocalhost\n10.250.0.1\t"+name+"\n")
	return sb
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// clientIn returns an HTTP client whose connections are made in the
// network namespace at path.
func clientIn(path string) *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				var c net.Conn
				err := netns.Do(path, func() error {
					var err error
					c, err = (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
					return err
				})
				return c, err
			},
		},
	}
}

// get polls url until it answers 200 (the server may still be starting)
// and returns the body.
func get(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := c.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return string(b)
			}
			err = fmt.Errorf("status %s: %s", resp.Status, b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitState polls Status until the container is in state want.
func waitState(t *testing.T, rt *Runtime, id string, want runtime.State) runtime.ContainerStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := rt.Status(context.Background(), id)
		if err != nil {
			t.Fatalf("Status %s: %v", id, err)
		}
		if st.State == want {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s is %s, want %s", id, st.State, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func logsOf(t *testing.T, rt *Runtime, id string) string {
	t.Helper()
	var b strings.Builder
	if err := rt.Logs(context.Background(), id, false, &b); err != nil {
		t.Fatalf("Logs %s: %v", id, err)
	}
	return b.String()
}

// waitLogs polls the container's logs until they contain want.
func waitLogs(t *testing.T, rt *Runtime, id, want string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		logs := logsOf(t, rt, id)
		if strings.Contains(logs, want) {
			return logs
		}
		if time.Now().After(deadline) {
			t.Fatalf("the logs of %s lack %q:\n%s", id, want, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
