package kubectlcompat

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/skiff-dev/skiff/internal/config"
	"github.com/skiff-dev/skiff/internal/podtest"
	"github.com/skiff-dev/skiff/server/servertest"
)

// env is what every test shares: the server, kubectl and a client-go client.
var env struct {
	srv        *servertest.Server
	kubeconfig string
	kubectl    string
	home       string
	cs         *kubernetes.Clientset
}

func TestMain(m *testing.M) {
	// The process runtime of the exec tests' and TestPortForward's
	// built-in agents runs this binary as its init helper and as the
	// pod's programs.
	podtest.Dispatch(podtest.Options{ShutdownTimeout: time.Second})
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubectl-compat:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (code int, err error) {
	tmp, err := os.MkdirTemp("", "kubectl-compat-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)

	env.kubectl = os.Getenv("KUBECTL")
	if env.kubectl == "" {
		if env.kubectl, err = buildKubectl(); err != nil {
			return 0, err
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("SKIFF_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	env.srv, err = servertest.New(ctx, servertest.Options{
		DataDir: filepath.Join(tmp, "data"),
		Logger:  log,
		// The test's node sends no heartbeats.
		// TestTop's node metrics are scraped every second, not 15.
		Config: func(cfg *config.Server) { cfg.NodeMonitorGracePeriod = time.Hour; cfg.MetricResolution = time.Second },
	})
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := env.srv.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	env.kubeconfig = env.srv.Kubeconfig()
	env.home = filepath.Join(tmp, "home")
	if err := os.MkdirAll(env.home, 0o700); err != nil {
		return 0, err
	}
	rc, err := clientcmd.BuildConfigFromFlags("", env.kubeconfig)
	if err != nil {
		return 0, err
	}
	// No ContentType: client-go's typed clients then send built-in objects
	// as protobuf (and accept protobuf or JSON), as kubectl's do.
	if env.cs, err = kubernetes.NewForConfig(rc); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// buildKubectl builds ./cmd/kubectl into the user cache directory (go's
// build cache makes a rebuild a link).
func buildKubectl() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "skiff-kubectl-compat")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kubectl")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.Command(gobin, "build", "-o", bin, "./cmd/kubectl")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building kubectl: %w\n%s", err, out.String())
	}
	return bin, nil
}

// kubectlCmd is a kubectl command with the test's kubeconfig and HOME.
func kubectlCmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, env.kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.kubeconfig, "HOME="+env.home, "KUBECACHEDIR="+filepath.Join(env.home, "cache"))
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// kubectl runs kubectl to completion (bounded to a minute) and returns its
// stdout; a non-zero exit fails the test with stderr.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := kubectlErr(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// kubectlErr runs kubectl and returns stdout, stderr and its error.
func kubectlErr(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := kubectlCmd(ctx, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// namespace creates a namespace for one test with kubectl create (which
// sends it as protobuf).
func namespace(t *testing.T, name string) string {
	t.Helper()
	kubectl(t, "create", "namespace", name)
	return name
}

// manifest writes a manifest into the test's temp dir.
func manifest(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// eventually polls f every 100ms until it returns nil or d passes.
func eventually(t *testing.T, d time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// fields splits a table line on runs of spaces.
func fields(line string) []string { return strings.Fields(line) }

// lines splits output into non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
