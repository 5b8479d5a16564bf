package containerd

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/core/snapshots"

	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/ociarchive"
)

// podAndClient makes a pod netns and a client netns joined by a veth pair
// (10.250.0.1/24 in the pod, 10.250.0.2/24 in the client).
func podAndClient(t *testing.T) (pod, client *netnstest.NS) {
	pod = netnstest.New(t, "pod")
	client = netnstest.New(t, "client")
	netnstest.Connect(t,
		netnstest.End{NS: pod, Name: "eth0", Addr: netip.MustParsePrefix("10.250.0.1/24")},
		netnstest.End{NS: client, Name: "cli0", Addr: netip.MustParsePrefix("10.250.0.2/24")})
	return pod, client
}

// TestNetexecInPodNetns starts netexec from the locally built image in a
// pod netns, reaches it from another netns, execs in it, reads its logs,
// stops it gracefully and removes it.
func TestNetexecInPodNetns(t *testing.T) {
	e := requireContainerd(t)
	rt := newTestRuntime(t, e)
	ctx := context.Background()
	pod, client := podAndClient(t)
	sb := newSandbox(t, "web-1", pod.Path)
	st := start(t, rt, sb, runtime.ContainerSpec{Name: "web", Image: testImage, Env: []string{"POD_NAME=web-1"}})
	if st.State != runtime.StateRunning || st.Pid == 0 || st.PodUID != sb.PodUID || st.Name != "web" {
		t.Fatalf("after Start: %+v", st)
	}
	if !strings.HasPrefix(st.LogPath, sb.LogDir+"/web/") || !strings.HasSuffix(st.LogPath, st.ID+".log") {
		t.Fatalf("log path %s is not <LogDir>/web/<id>.log", st.LogPath)
	}
	c := clientIn(client.Path)
	if got := get(t, c, "http://10.250.0.1:8080/hostname"); got != "web-1" {
		t.Fatalf("/hostname = %q, want web-1", got)
	}
	if got := get(t, c, "http://10.250.0.1:8080/clientip"); !strings.HasPrefix(got, "10.250.0.2:") {
		t.Fatalf("/clientip = %q, want 10.250.0.2:port", got)
	}

	code, out, err := rt.Exec(ctx, st.ID, []string{"/workload", "exit", "3"}, 5*time.Second)
	if err != nil || code != 3 || !strings.Contains(string(out), "exiting with 3") {
		t.Fatalf("Exec exit 3: code %d, out %q, err %v", code, out, err)
	}
	code, out, err = rt.Exec(ctx, st.ID, []string{"/workload", "print"}, 5*time.Second)
	if err != nil || code != 0 || !strings.Contains(string(out), `"cwd":"/data"`) {
		t.Fatalf("Exec print: code %d, out %q, err %v", code, out, err)
	}
	if _, _, err := rt.Exec(ctx, st.ID, []string{"/nonexistent"}, 5*time.Second); err == nil {
		t.Fatal("Exec of a missing binary succeeded")
	}
	code, _, err = rt.Exec(ctx, st.ID, []string{"/workload", "ignore-term"}, 300*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) || code != -1 {
		t.Fatalf("Exec past its timeout: code %d, err %v", code, err)
	}

	list, err := rt.List(ctx)
	if err != nil || !slices.ContainsFunc(list, func(c runtime.ContainerStatus) bool { return c.ID == st.ID && c.State == runtime.StateRunning }) {
		t.Fatalf("List does not show %s running: %+v %v", st.ID, list, err)
	}

	t0 := time.Now()
	if err := rt.Stop(ctx, st.ID, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("netexec took %v to stop on SIGTERM", d)
	}
	fin := waitState(t, rt, st.ID, runtime.StateExited)
	if fin.ExitCode != 0 || fin.FinishedAt.Before(fin.StartedAt) {
		t.Fatalf("after a graceful stop: %+v", fin)
	}
	if err := rt.Stop(ctx, st.ID, time.Second); err != nil {
		t.Fatalf("stopping an exited container: %v", err)
	}
	if _, _, err := rt.Exec(ctx, st.ID, []string{"/workload"}, time.Second); !errors.Is(err, runtime.ErrNotRunning) {
		t.Fatalf("Exec in an exited container: %v, want ErrNotRunning", err)
	}
	waitLogs(t, rt, st.ID, "netexec: stopped")
	if err := rt.Remove(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Status(ctx, st.ID); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Status after Remove: %v, want ErrNotFound", err)
	}
	// The snapshot went with it.
	if _, err := rt.Client().SnapshotService("").Stat(rt.ctx(ctx), st.ID); err == nil {
		t.Fatal("the container's snapshot survived Remove")
	}
	if _, err := os.Stat(st.LogPath); err != nil {
		t.Fatalf("the log file should outlive Remove: %v", err)
	}
}

// TestSpecSemantics checks entrypoint/cmd overriding, env merging, the
// working dir and the pod's resolv.conf, hosts and host name.
func TestSpecSemantics(t *testing.T) {
	e := requireContainerd(t)
	rt := newTestRuntime(t, e)
	pod := netnstest.New(t, "pod")
	cases := []struct {
		name          string
		command, args []string
		workdir       string
		wantArgs      []string
		wantCwd       string
	}{
		// args replace CMD, ENTRYPOINT stays.
		{name: "args", args: []string{"print", "a", "b"}, wantArgs: []string{"a", "b"}, wantCwd: "/data"},
		// command replaces ENTRYPOINT and drops CMD.
		{name: "command", command: []string{"/workload", "print"}, wantArgs: []string{}, wantCwd: "/data"},
		{name: "both", command: []string{"/workload"}, args: []string{"print", "x"}, workdir: "/", wantArgs: []string{"x"}, wantCwd: "/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, "spec-"+tc.name, pod.Path)
			st := start(t, rt, sb, runtime.ContainerSpec{Name: "main", Image: testImage, Command: tc.command, Args: tc.args, WorkingDir: tc.workdir, Env: []string{"FOO=bar"}})
			fin := waitState(t, rt, st.ID, runtime.StateExited)
			if fin.ExitCode != 0 {
				t.Fatalf("exit %d; logs:\n%s", fin.ExitCode, logsOf(t, rt, st.ID))
			}
			// The shim writes stdout and stderr from two pipes: their
			// order in the file is not defined, and what a process wrote
			// just before it exited may land a moment after the exit.
			logs := waitLogs(t, rt, st.ID, "a line on stderr")
			var p struct {
				Args                                         []string
				Foo, Image, Cwd, Hostname, ResolvConf, Hosts string
			}
			var line string
			for l := range strings.Lines(logs) {
				if strings.HasPrefix(l, "{") {
					line = l
				}
			}
			if err := json.Unmarshal([]byte(line), &p); err != nil {
				t.Fatalf("%v: %q", err, logs)
			}
			if p.Args == nil {
				p.Args = []string{}
			}
			if !slices.Equal(p.Args, tc.wantArgs) || p.Cwd != tc.wantCwd {
				t.Fatalf("args %q cwd %q, want %q %q", p.Args, p.Cwd, tc.wantArgs, tc.wantCwd)
			}
			if p.Foo != "bar" || p.Image != "from-image" {
				t.Fatalf("env: FOO=%q IMAGE_ENV=%q", p.Foo, p.Image)
			}
			if p.Hostname != sb.Name || !strings.Contains(p.ResolvConf, "nameserver 10.96.0.10") || !strings.Contains(p.Hosts, "10.250.0.1\t"+sb.Name) {
				t.Fatalf("hostname %q resolv.conf %q hosts %q", p.Hostname, p.ResolvConf, p.Hosts)
			}
		})
	}
}

// TestStopKillsAfterGrace: a process that ignores SIGTERM gets SIGKILL
// once the grace period is over and reports 137.
func TestStopKillsAfterGrace(t *testing.T) {
	e := requireContainerd(t)
	rt := newTestRuntime(t, e)
	pod := netnstest.New(t, "pod")
	st := start(t, rt, newSandbox(t, "stubborn", pod.Path), runtime.ContainerSpec{Name: "main", Image: testImage, Args: []string{"ignore-term"}})
	waitLogs(t, rt, st.ID, "ready")
	const grace = time.Second
	t0 := time.Now()
	if err := rt.Stop(context.Background(), st.ID, grace); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	if took < grace {
		t.Fatalf("Stop returned after %v, before the grace period of %v", took, grace)
	}
	fin, err := rt.Status(context.Background(), st.ID)
	if err != nil || fin.State != runtime.StateExited || fin.ExitCode != 137 {
		t.Fatalf("after SIGKILL: %+v %v, want exited 137", fin, err)
	}
}

// TestExitCodeAndStartErrors: a container's own exit code is reported; a
// missing image or command is Start's error and leaves nothing behind.
func TestExitCodeAndStartErrors(t *testing.T) {
	e := requireContainerd(t)
	rt := newTestRuntime(t, e)
	ctx := context.Background()
	pod := netnstest.New(t, "pod")
	sb := newSandbox(t, "exits", pod.Path)
	st := start(t, rt, sb, runtime.ContainerSpec{Name: "main", Image: testImage, Args: []string{"exit", "42"}})
	// Logs(follow) of a container that exits returns once it has, with
	// everything it wrote.
	var b strings.Builder
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := rt.Logs(fctx, st.ID, true, &b); err != nil || fctx.Err() != nil || !strings.Contains(b.String(), "exiting with 42") {
		t.Fatalf("Logs(follow): %v (ctx %v): %q", err, fctx.Err(), b.String())
	}
	if fin := waitState(t, rt, st.ID, runtime.StateExited); fin.ExitCode != 42 {
		t.Fatalf("exit code %d, want 42", fin.ExitCode)
	}
	before, err := rt.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Start(ctx, sb, runtime.ContainerSpec{Name: "x", Image: "skiff.local/absent:v1"}); err == nil {
		t.Fatal("Start of an absent image succeeded")
	}
	if _, err := rt.Start(ctx, sb, runtime.ContainerSpec{Name: "y", Image: testImage, Command: []string{"/no/such/binary"}}); err == nil {
		t.Fatal("Start of a missing binary succeeded")
	}
	after, err := rt.List(ctx)
	if err != nil || len(after) != len(before) {
		t.Fatalf("failed starts left containers: %d before, %d after (%v)", len(before), len(after), err)
	}
	if _, err := rt.Status(ctx, "no-such-id"); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Status of an unknown id: %v", err)
	}
	if err := rt.Stop(ctx, "no-such-id", time.Second); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Stop of an unknown id: %v", err)
	}
}

// TestAdoptionAcrossRestart: a container outlives its runtime and its
// (managed) containerd; a new daemon on the same dir and a new Runtime
// list it running with the same pid, and can exec in and stop it.
func TestAdoptionAcrossRestart(t *testing.T) {
	e := requireContainerd(t)
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "skadopt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d1, err := StartDaemon(ctx, DaemonConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rt1, err := New(ctx, Config{Socket: d1.Socket, LogRoot: t.TempDir(), LoggerBinary: e.skiff})
	if err != nil {
		d1.Stop()
		t.Fatal(err)
	}
	if _, err := importImage(rt1, "oci", workloadImage(testImage, e.workload)); err != nil {
		t.Fatal(err)
	}
	pod, client := podAndClient(t)
	st, err := rt1.Start(ctx, newSandbox(t, "adopted", pod.Path), runtime.ContainerSpec{Name: "web", Image: testImage, Env: []string{"POD_NAME=adopted"}})
	if err != nil {
		t.Fatal(err)
	}
	var d2 *Daemon
	t.Cleanup(func() {
		if d2 != nil {
			cleanupNamespace(d2.Socket)
			d2.Stop()
		}
	})
	c := clientIn(client.Path)
	get(t, c, "http://10.250.0.1:8080/hostname")
	rt1.Close()
	if err := d1.Stop(); err != nil {
		t.Fatal(err)
	}
	// The pod keeps serving while no containerd runs.
	if got := get(t, c, "http://10.250.0.1:8080/hostname"); got != "adopted" {
		t.Fatalf("/hostname with containerd down = %q", got)
	}
	if d2, err = StartDaemon(ctx, DaemonConfig{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	rt2, err := New(ctx, Config{Socket: d2.Socket, LoggerBinary: e.skiff})
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	list, err := rt2.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != st.ID || list[0].State != runtime.StateRunning || list[0].Pid != st.Pid ||
		list[0].PodUID != "uid-adopted" || list[0].Name != "web" || list[0].LogPath != st.LogPath || !list[0].StartedAt.Equal(st.StartedAt) {
		t.Fatalf("after the restart List = %+v, want %+v", list, st)
	}
	if code, _, err := rt2.Exec(ctx, st.ID, []string{"/workload", "exit", "0"}, 5*time.Second); err != nil || code != 0 {
		t.Fatalf("Exec in the adopted container: %d %v", code, err)
	}
	if err := rt2.Stop(ctx, st.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if fin := waitState(t, rt2, st.ID, runtime.StateExited); fin.ExitCode != 0 {
		t.Fatalf("the adopted container exited %d after SIGTERM", fin.ExitCode)
	}
	// The shim owns the logging binary: what the container wrote after
	// both the runtime and containerd restarted still reached its log.
	waitLogs(t, rt2, st.ID, "netexec: stopped")
	if err := rt2.Remove(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
}

// TestLogsFollowRemoved: Logs(follow) of a container stopped and removed
// at once (as the agent does with a deleted pod's) ends without an error,
// with the last lines it wrote.
func TestLogsFollowRemoved(t *testing.T) {
	e := requireContainerd(t)
	// A poll interval long enough for the stop and the removal to land
	// between two polls.
	rt, err := New(context.Background(), Config{Socket: e.daemon.Socket, LogPollInterval: time.Second, LogRoot: t.TempDir(), LoggerBinary: e.skiff})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	ctx := context.Background()
	pod := netnstest.New(t, "pod")
	st := start(t, rt, newSandbox(t, "removed", pod.Path), runtime.ContainerSpec{Name: "main", Image: testImage,
		Args: []string{"netexec", "--http-port=8080", "--udp-port=-1"}})
	var b strings.Builder
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- rt.Logs(fctx, st.ID, true, &b) }()
	time.Sleep(200 * time.Millisecond) // Logs is past its first copy
	if err := rt.Stop(ctx, st.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := rt.Remove(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || fctx.Err() != nil || !strings.Contains(b.String(), "netexec: stopped") {
		t.Fatalf("Logs(follow) of a removed container: %v (ctx %v): %q", err, fctx.Err(), b.String())
	}
}

// TestImageUserInContainer: the image's USER is resolved in its own
// /etc/passwd and /etc/group (uid, primary group, supplementary groups),
// an image without USER runs as root, and a USER the image does not know
// fails Start without leaving a container or a snapshot.
func TestImageUserInContainer(t *testing.T) {
	e := requireContainerd(t)
	rt := newTestRuntime(t, e)
	ctx := context.Background()
	pod := netnstest.New(t, "pod")
	etc := []ociarchive.File{
		{Path: "/etc/passwd", Data: []byte("root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000::/data:/bin/sh\n"), Mode: 0o644},
		{Path: "/etc/group", Data: []byte("root:x:0:\napp:x:1000:\nextra:x:2000:app\n"), Mode: 0o644},
	}
	for _, img := range []struct{ name, user string }{{"skiff.local/workload:user-app", "app"}, {"skiff.local/workload:user-ghost", "ghost"}} {
		w := workloadImage(img.name, e.workload)
		w.Files = append(w.Files, etc...)
		w.User = img.user
		if _, err := importImage(rt, "oci", w); err != nil {
			t.Fatal(err)
		}
	}
	type ids struct {
		UID, GID int
		Groups   []int
	}
	run := func(name, image string) ids {
		t.Helper()
		sb := newSandbox(t, "user-"+name, pod.Path)
		st := start(t, rt, sb, runtime.ContainerSpec{Name: "main", Image: image, Args: []string{"print"}})
		if fin := waitState(t, rt, st.ID, runtime.StateExited); fin.ExitCode != 0 {
			t.Fatalf("exit %d; logs:\n%s", fin.ExitCode, logsOf(t, rt, st.ID))
		}
		logs := waitLogs(t, rt, st.ID, "a line on stderr")
		var got ids
		for l := range strings.Lines(logs) {
			if strings.HasPrefix(l, "{") {
				if err := json.Unmarshal([]byte(l), &got); err != nil {
					t.Fatalf("%v: %q", err, logs)
				}
			}
		}
		slices.Sort(got.Groups)
		return got
	}
	if got := run("app", "skiff.local/workload:user-app"); got.UID != 1000 || got.GID != 1000 || !slices.Equal(got.Groups, []int{1000, 2000}) {
		t.Fatalf("USER app: %+v, want uid 1000 gid 1000 groups [1000 2000]", got)
	}
	if got := run("root", testImage); got.UID != 0 || got.GID != 0 || !slices.Equal(got.Groups, []int{0}) {
		t.Fatalf("no USER: %+v, want uid 0 gid 0 groups [0]", got)
	}
	countSnapshots := func() int {
		n := 0
		err := rt.Client().SnapshotService("").Walk(rt.ctx(ctx), func(context.Context, snapshots.Info) error { n++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before, err := rt.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snaps := countSnapshots()
	sb := newSandbox(t, "user-ghost", pod.Path)
	_, err = rt.Start(ctx, sb, runtime.ContainerSpec{Name: "main", Image: "skiff.local/workload:user-ghost", Args: []string{"print"}})
	if err == nil || !strings.Contains(err.Error(), `user "ghost" in the image's /etc/passwd`) {
		t.Fatalf("Start with an unknown USER: %v", err)
	}
	after, err := rt.List(ctx)
	if err != nil || len(after) != len(before) {
		t.Fatalf("the failed start left a container: %d before, %d after (%v)", len(before), len(after), err)
	}
	if n := countSnapshots(); n != snaps {
		t.Fatalf("the failed start left a snapshot: %d before, %d after", snaps, n)
	}
}

// TestBindMounts: c.Mounts appear at their destinations (a directory
// read-only, a file read-write), missing mount points are made by runc
// inside the rootfs.
func TestBindMounts(t *testing.T) {
	e := requireContainerd(t)
	rt := newTestRuntime(t, e)
	pod := netnstest.New(t, "pod")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "key"), "v1")
	file := filepath.Join(t.TempDir(), "single")
	writeFile(t, file, "one")
	sb := newSandbox(t, "mounts", pod.Path)
	st := start(t, rt, sb, runtime.ContainerSpec{Name: "main", Image: testImage, Args: []string{"cat", "/etc/cfg/key", "/single"},
		Mounts: []runtime.Mount{{Source: dir, Destination: "/etc/cfg", ReadOnly: true}, {Source: file, Destination: "/single"}}})
	fin := waitState(t, rt, st.ID, runtime.StateExited)
	logs := waitLogs(t, rt, st.ID, "write:")
	if fin.ExitCode != 0 || !strings.Contains(logs, "/etc/cfg/key=v1") || !strings.Contains(logs, "/single=one") ||
		!strings.Contains(logs, "read-only file system") {
		t.Fatalf("exit %d; logs:\n%s", fin.ExitCode, logs)
	}
}
