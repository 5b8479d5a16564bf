package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/cli"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/logdriver"
	"github.com/skiff-dev/skiff/netagent/runtime/process"
)

// TestMain makes this test binary skiff itself when SKIFF_TEST_MAIN=1, so
// tests can run the real command line (and the process runtime can use it
// as its helper).
func TestMain(m *testing.M) {
	if os.Getenv("SKIFF_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestRuntimeInitName(t *testing.T) {
	if process.InitCommand != cli.RuntimeInitCommand {
		t.Fatalf("process.InitCommand %q != cli.RuntimeInitCommand %q", process.InitCommand, cli.RuntimeInitCommand)
	}
}

func TestContainerdLogName(t *testing.T) {
	if logdriver.LogCommand != cli.ContainerdLogCommand {
		t.Fatalf("logdriver.LogCommand %q != cli.ContainerdLogCommand %q", logdriver.LogCommand, cli.ContainerdLogCommand)
	}
}

// TestNetexecPodThroughMain runs `skiff netexec` as a process-runtime pod
// with skiff's own main as the init helper, and makes it exit with
// /exit?code=5.
func TestNetexecPodThroughMain(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates a network namespace")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip to create a test network namespace")
	}
	var b [4]byte
	rand.Read(b[:])
	ns := fmt.Sprintf("skmain-%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	if out, err := exec.Command("ip", "-n", ns, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v %s", err, out)
	}
	nsPath := "/run/netns/" + ns

	rt, err := process.New(process.Config{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	os.WriteFile(resolv, []byte("nameserver 10.250.9.9\n"), 0o644)
	ctx := context.Background()
	st, err := rt.Start(ctx, runtime.Sandbox{PodUID: "u1", Namespace: "default", Name: "main-pod", NetNSPath: nsPath, ResolvConf: resolv, LogDir: filepath.Join(dir, "logs")},
		runtime.ContainerSpec{Name: "netexec", Command: []string{exe, "netexec"}, Args: []string{"--http-port=8080", "--udp-port=8081"},
			Env: []string{"SKIFF_TEST_MAIN=1", "POD_NAME=from-env"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Remove(context.Background(), st.ID) })

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialIn(nsPath, network, addr)
		}}}
	get := func(path string) (string, error) {
		resp, err := client.Get("http://127.0.0.1:8080" + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	var name string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if name, err = get("/hostname"); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || name != "from-env" {
		t.Fatalf("/hostname = %q, %v (log: %s)", name, err, readLog(st.LogPath))
	}
	if body, err := get("/exit?code=5"); err != nil || body != "exiting with code 5" {
		t.Fatalf("/exit = %q, %v", body, err)
	}
	var got runtime.ContainerStatus
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got, err = rt.Status(ctx, st.ID); err != nil || got.State == runtime.StateExited {
			break
		}
	}
	if got.State != runtime.StateExited || got.ExitCode != 5 {
		t.Fatalf("after /exit?code=5: %+v, %v (log: %s)", got, err, readLog(st.LogPath))
	}
}

func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// dialIn connects from inside the network namespace at nsPath.
func dialIn(nsPath, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		goruntime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			goruntime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer orig.Close()
		fd, err := unix.Open(nsPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			err = unix.Setns(fd, unix.CLONE_NEWNET)
			unix.Close(fd)
		}
		if err != nil {
			goruntime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		c, derr := net.DialTimeout(network, addr, 5*time.Second)
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, err} // the thread stays locked and dies with this goroutine
			return
		}
		goruntime.UnlockOSThread()
		ch <- result{c, derr}
	}()
	r := <-ch
	return r.c, r.err
}

// TestNoContainerdBuildLinksNoClient guards the small-agent build: with
// -tags skiff_nocontainerd the binary must not link the containerd client
// (its package initialisers alone cost ~9 MB of RSS; docs/performance.md "Node agent").
func TestNoContainerdBuildLinksNoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skips the go list of the tagged build")
	}
	out, err := exec.Command("go", "list", "-tags", "skiff_nocontainerd", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, banned := range []string{"github.com/containerd/containerd/v2/client", "google.golang.org/grpc"} {
		if slices.Contains(strings.Fields(string(out)), banned) {
			t.Errorf("the skiff_nocontainerd build links %s", banned)
		}
	}
}
