// Package registrytest runs a real registry for tests: Debian's
// docker-registry (the CNCF distribution registry) on 127.0.0.1, with
// htpasswd (bcrypt) users and its storage in a temporary dir, started and
// stopped by PID; and pushes a locally built image (ociarchive) into it
// through containerd's client, as `ctr images push` does.
//
// A test that cannot run it (no docker-registry or htpasswd on PATH)
// is skipped with the package to install (hack/install-deps.sh installs
// both: docker-registry and apache2-utils).
package registrytest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	ctrd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes/docker"

	"github.com/skiff-dev/skiff/netagent/runtime/containerd/ociarchive"
)

// Registry is one running docker-registry.
type Registry struct {
	// Addr is its host:port on 127.0.0.1 (plain HTTP).
	Addr string
	// LogPath is the file its stdout and stderr go to.
	LogPath string
	cmd     *exec.Cmd
}

// Start runs a registry whose htpasswd file has users (name -> password)
// and stops it (by PID) when the test ends. It skips the test when
// docker-registry or htpasswd is missing.
func Start(t testing.TB, users map[string]string) *Registry {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		t.Skip("needs docker-registry on PATH (Debian's docker-registry package; hack/install-deps.sh installs it)")
	}
	htpasswd, err := exec.LookPath("htpasswd")
	if err != nil {
		t.Skip("needs htpasswd on PATH (Debian's apache2-utils; hack/install-deps.sh installs it)")
	}
	dir := t.TempDir()
	names := make([]string, 0, len(users))
	for u := range users {
		names = append(names, u)
	}
	slices.Sort(names)
	var pw bytes.Buffer
	for _, u := range names {
		// -i: the password on stdin, not on the command line.
		cmd := exec.Command(htpasswd, "-niB", u)
		cmd.Stdin = strings.NewReader(users[u] + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("htpasswd -niB %s: %v", u, err)
		}
		pw.Write(bytes.TrimSpace(out))
		pw.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "htpasswd"), pw.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: %s
  secret: skiff-registrytest
auth:
  htpasswd:
    realm: skiff-registrytest
    path: %s
`, filepath.Join(dir, "storage"), addr, filepath.Join(dir, "htpasswd"))
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &Registry{Addr: addr, LogPath: filepath.Join(dir, "registry.log")}
	logf, err := os.Create(r.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	r.cmd = exec.Command(bin, "serve", cfgPath)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("starting docker-registry: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = r.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(r.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(r.cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	// Ready when /v2/ asks for credentials.
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return r
			}
			err = fmt.Errorf("GET /v2/: %s, want 401", resp.Status)
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(r.LogPath)
			t.Fatalf("docker-registry exited: %s", b)
		default:
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(r.LogPath)
			t.Fatalf("docker-registry at %s not ready: %v\n%s", addr, err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pushNamespace is the containerd namespace Push imports into; the image
// is removed from it once pushed, so the pulls under test fetch it.
const pushNamespace = "skiff-registrytest"

// Push imports img (as an OCI layout) into the containerd at socket and
// pushes it to ref (on a loopback registry, over plain HTTP) as
// user:password, then deletes it from containerd again.
func Push(ctx context.Context, socket, ref string, img ociarchive.Image, user, password string) error {
	c, err := ctrd.New(socket, ctrd.WithDefaultNamespace(pushNamespace), ctrd.WithTimeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("registrytest: %w", err)
	}
	defer c.Close()
	img.Name = ref
	var buf bytes.Buffer
	if _, err := ociarchive.WriteOCI(&buf, img); err != nil {
		return fmt.Errorf("registrytest: %w", err)
	}
	imgs, err := c.Import(ctx, &buf, ctrd.WithSkipDigestRef(func(name string) bool { return name != "" }))
	if err != nil {
		return fmt.Errorf("registrytest: import: %w", err)
	}
	i := slices.IndexFunc(imgs, func(im images.Image) bool { return im.Name == ref })
	if i < 0 {
		return fmt.Errorf("registrytest: import gave %v, not %s", imgs, ref)
	}
	defer c.ImageService().Delete(context.WithoutCancel(ctx), ref, images.SynchronousDelete())
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: docker.ConfigureDefaultRegistries(
		docker.WithPlainHTTP(docker.MatchLocalhost),
		docker.WithAuthorizer(docker.NewDockerAuthorizer(docker.WithAuthCreds(func(string) (string, string, error) {
			return user, password, nil
		}))))})
	if err := c.Push(ctx, ref, imgs[i].Target, ctrd.WithResolver(resolver)); err != nil {
		return fmt.Errorf("registrytest: push %s: %w", ref, err)
	}
	return nil
}
