package process

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// requireRoot skips tests that create namespaces when they cannot.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network and mount namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip to create test network namespaces")
	}
}

func run(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// newNetNS creates a named network namespace with lo up and deletes it at
// cleanup. It returns the name and the namespace file.
func newNetNS(t *testing.T) (string, string) {
	t.Helper()
	var b [4]byte
	rand.Read(b[:])
	name := fmt.Sprintf("skproc-%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	})
	run(t, "ip", "-n", name, "link", "set", "lo", "up")
	return name, "/run/netns/" + name
}

// Addresses on the veth pair between a pod netns and a client netns; they
// exist only inside those two namespaces.
const (
	podIP    = "10.250.0.1"
	clientIP = "10.250.0.2"
)

// newPodAndClient creates a pod netns and a client netns joined by a veth
// pair (pod0 podIP/24 <-> cli0 clientIP/24).
func newPodAndClient(t *testing.T) (podNS, clientNS string) {
	t.Helper()
	podName, podNS := newNetNS(t)
	cliName, clientNS := newNetNS(t)
	run(t, "ip", "-n", podName, "link", "add", "pod0", "type", "veth", "peer", "name", "cli0", "netns", cliName)
	run(t, "ip", "-n", podName, "addr", "add", podIP+"/24", "dev", "pod0")
	run(t, "ip", "-n", cliName, "addr", "add", clientIP+"/24", "dev", "cli0")
	run(t, "ip", "-n", podName, "link", "set", "pod0", "up")
	run(t, "ip", "-n", cliName, "link", "set", "cli0", "up")
	return podNS, clientNS
}

// inNetNS runs fn on an OS thread switched into the namespace at path;
// sockets fn creates belong to that namespace for their whole life.
func inNetNS(path string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			goruntime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		ns, err := os.Open(path)
		if err != nil {
			goruntime.UnlockOSThread()
			errc <- err
			return
		}
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			goruntime.UnlockOSThread()
			errc <- err
			return
		}
		ferr := fn()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			// Leave the thread locked: it dies with this goroutine.
			errc <- fmt.Errorf("restoring the netns: %w", err)
			return
		}
		goruntime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// clientIn returns an HTTP client whose connections are made in netns ns.
func clientIn(ns string) *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				var c net.Conn
				err := inNetNS(ns, func() error {
					var err error
					c, err = (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
					return err
				})
				return c, err
			},
		},
	}
}

// newSandbox writes a pod's resolv.conf and hosts files and returns its
// Sandbox.
func newSandbox(t *testing.T, name, netns, resolv, hosts string) runtime.Sandbox {
	t.Helper()
	dir := t.TempDir()
	sb := runtime.Sandbox{PodUID: "uid-" + name, Namespace: "default", Name: name, NetNSPath: netns, LogDir: filepath.Join(dir, "logs")}
	if resolv != "" {
		sb.ResolvConf = filepath.Join(dir, "resolv.conf")
		writeFile(t, sb.ResolvConf, resolv)
	}
	if hosts != "" {
		sb.Hosts = filepath.Join(dir, "hosts")
		writeFile(t, sb.Hosts, hosts)
	}
	return sb
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func newRuntime(t *testing.T, stateDir string) *Runtime {
	t.Helper()
	rt, err := New(Config{StateDir: stateDir, LogPollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// start starts a container and kills its process group at cleanup (by
// pid, checked against its start time).
func start(t *testing.T, rt *Runtime, sb runtime.Sandbox, spec runtime.ContainerSpec) runtime.ContainerStatus {
	t.Helper()
	st, err := rt.Start(context.Background(), sb, spec)
	if err != nil {
		t.Fatalf("Start %s: %v", spec.Name, err)
	}
	ticks := mustTicks(t, rt, st.ID)
	t.Cleanup(func() {
		killIfSame(st.Pid, ticks)
		waitReaped(rt, st.ID)
	})
	return st
}

// waitReaped waits (up to 10 s) until the Runtime has reaped container id
// and saved its exit: that save writes into the state dir, and a t.TempDir
// removed meanwhile fails with "directory not empty".
func waitReaped(rt *Runtime, id string) {
	rt.mu.Lock()
	c := rt.containers[id]
	rt.mu.Unlock()
	if c == nil || c.done == nil {
		return
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
	}
}

// killAtCleanup SIGKILLs pid's process group at cleanup if pid is still the
// process it is now.
func killAtCleanup(t *testing.T, pid int) {
	t.Helper()
	ps, err := readStat(pid)
	if err != nil {
		t.Fatalf("stat of pid %d: %v", pid, err)
	}
	t.Cleanup(func() { killIfSame(pid, ps.startTicks) })
}

func killIfSame(pid int, ticks uint64) {
	if alive(pid, ticks) {
		_ = unix.Kill(-pid, syscall.SIGKILL)
		_ = unix.Kill(pid, syscall.SIGKILL)
	}
}

// eventually polls cond every 20 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitLog(t *testing.T, path, line string) {
	t.Helper()
	eventually(t, 20*time.Second, fmt.Sprintf("%q in %s", line, path), func() bool {
		b, _ := os.ReadFile(path)
		return hasLine(string(b), line)
	})
}

func waitExited(t *testing.T, rt *Runtime, id string) runtime.ContainerStatus {
	t.Helper()
	var st runtime.ContainerStatus
	eventually(t, 20*time.Second, "container "+id+" to exit", func() bool {
		var err error
		st, err = rt.Status(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return st.State == runtime.StateExited
	})
	return st
}

// netnsID is what readlink /proc/<pid>/ns/net shows for the namespace file.
func netnsID(t *testing.T, path string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("net:[%d]", st.Ino)
}

func readlinkNS(pid int) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
}

func fmtSscan(line string, pid *int) (int, error) {
	return fmt.Sscanf(line, "child %d", pid)
}

// parentOf is the ppid (field 4 of /proc/<pid>/stat).
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	var ppid int
	fmt.Sscan(f[1], &ppid)
	return ppid
}

func errOutput(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

// reap collects pid, an orphan re-parented to this (subreaper) process,
// killing it first if it is still alive.
func reap(t *testing.T, pid int) {
	t.Helper()
	for i := 0; i < 500; i++ {
		got, err := unix.Wait4(pid, nil, unix.WNOHANG, nil)
		if got == pid || errors.Is(err, unix.ECHILD) {
			return
		}
		if i == 100 {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("could not reap pid %d", pid)
}
