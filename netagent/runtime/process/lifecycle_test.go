package process

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// TestEnvArgsWorkdirAndLogs checks what a container sees: its args, its env
// (and only its env, plus a default PATH), its working directory, the pod
// name as host name, the pod's resolv.conf and hosts, only the pod netns's
// links in /sys, and that stdout and stderr land in the log file.
func TestEnvArgsWorkdirAndLogs(t *testing.T) {
	requireRoot(t)
	_, podNS := newNetNS(t)
	const resolv = "nameserver 10.250.9.9\nsearch default.svc.cluster.local\noptions ndots:5\n"
	const hosts = "127.0.0.1 localhost\n10.250.9.1 printer\n"
	sb := newSandbox(t, "printer", podNS, resolv, hosts)
	workdir := t.TempDir()
	rt := newRuntime(t, t.TempDir())
	t.Setenv("SKIFF_TEST_AGENT_ONLY", "leak") // must not reach the container
	st := start(t, rt, sb, runtime.ContainerSpec{
		Name:       "print",
		Command:    []string{testBinary(t), "print"},
		Args:       []string{"a b", "c"},
		Env:        []string{"FOO=bar"},
		WorkingDir: workdir,
	})
	got := waitExited(t, rt, st.ID)
	if got.ExitCode != 0 || got.FinishedAt.Before(got.StartedAt) {
		t.Fatalf("status %+v, want exited 0", got)
	}
	if want := filepath.Join(sb.LogDir, "print", st.ID+".log"); got.LogPath != want {
		t.Errorf("LogPath %s, want %s", got.LogPath, want)
	}
	logText := readFile(t, got.LogPath)
	if !hasLine(logText, "a line on stderr") {
		t.Errorf("stderr missing from the log:\n%s", logText)
	}
	var p printed
	if err := json.Unmarshal([]byte(strings.SplitN(logText, "\n", 2)[0]), &p); err != nil {
		t.Fatalf("log %q: %v", logText, err)
	}
	if !slices.Equal(p.Args, []string{"a b", "c"}) {
		t.Errorf("args %q", p.Args)
	}
	if p.Foo != "bar" || p.Path != strings.TrimPrefix(defaultPath, "PATH=") {
		t.Errorf("env FOO=%q PATH=%q", p.Foo, p.Path)
	}
	if p.Cwd != workdir {
		t.Errorf("cwd %q, want %q", p.Cwd, workdir)
	}
	if p.Hostname != sb.Name {
		t.Errorf("hostname %q, want %q", p.Hostname, sb.Name)
	}
	if p.ResolvConf != resolv || p.Hosts != hosts {
		t.Errorf("resolv.conf %q, hosts %q: not the pod's", p.ResolvConf, p.Hosts)
	}
	if !slices.Equal(p.Links, []string{"lo"}) {
		t.Errorf("/sys/class/net shows %q, want only the pod netns's lo", p.Links)
	}
	if want := netnsID(t, podNS); p.NetNS != want {
		t.Errorf("netns %s, want %s", p.NetNS, want)
	}
	if host, _ := os.Hostname(); host == sb.Name {
		t.Errorf("the host's name became %q", host)
	}

	var buf bytes.Buffer
	if err := rt.Logs(context.Background(), st.ID, false, &buf); err != nil || buf.String() != logText {
		t.Errorf("Logs = %q, %v; want the log file %q", buf.String(), err, logText)
	}
	// An exited container keeps answering, and Exec refuses it.
	if _, _, err := rt.Exec(context.Background(), st.ID, []string{"true"}, time.Second); !errors.Is(err, runtime.ErrNotRunning) {
		t.Errorf("Exec in an exited container: %v", err)
	}
}

func TestExitCodes(t *testing.T) {
	requireRoot(t)
	_, podNS := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	tests := []struct {
		name   string
		script string
		want   int
	}{
		{name: "exit 0", script: "exit 0", want: 0},
		{name: "exit 3", script: "exit 3", want: 3},
		{name: "killed by SIGKILL", script: "kill -KILL $$", want: 137},
		{name: "killed by SIGTERM", script: "kill -TERM $$", want: 143},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t, "exit", podNS, "", "")
			st := start(t, rt, sb, runtime.ContainerSpec{Name: "sh", Command: []string{"sh", "-c"}, Args: []string{tc.script}})
			if got := waitExited(t, rt, st.ID); got.ExitCode != tc.want {
				t.Fatalf("exit code %d, want %d", got.ExitCode, tc.want)
			}
		})
	}
}

func TestStartFailures(t *testing.T) {
	requireRoot(t)
	_, podNS := newNetNS(t)
	stateDir := t.TempDir()
	rt := newRuntime(t, stateDir)
	sb := newSandbox(t, "fail", podNS, "nameserver 10.250.9.9\n", "")
	tests := []struct {
		name    string
		sb      runtime.Sandbox
		spec    runtime.ContainerSpec
		wantErr string
	}{
		{name: "no command", sb: sb, spec: runtime.ContainerSpec{Name: "c", Image: "busybox", Args: []string{"x"}}, wantErr: "no command"},
		{name: "command not found", sb: sb, spec: runtime.ContainerSpec{Name: "c", Command: []string{"no-such-command-skiff"}}, wantErr: "executable file not found"},
		{name: "missing netns", sb: runtime.Sandbox{Name: "p", NetNSPath: "/run/netns/skiff-no-such-netns"}, spec: runtime.ContainerSpec{Name: "c", Command: []string{"true"}}, wantErr: "skiff-no-such-netns"},
		{name: "missing resolv.conf", sb: runtime.Sandbox{Name: "p", NetNSPath: podNS, ResolvConf: "/nonexistent/resolv.conf", LogDir: t.TempDir()}, spec: runtime.ContainerSpec{Name: "c", Command: []string{"true"}}, wantErr: "/nonexistent/resolv.conf"},
		{name: "missing workdir", sb: sb, spec: runtime.ContainerSpec{Name: "c", Command: []string{"true"}, WorkingDir: "/nonexistent/dir"}, wantErr: "chdir /nonexistent/dir"},
		{name: "bad name", sb: sb, spec: runtime.ContainerSpec{Name: "../c", Command: []string{"true"}}, wantErr: "bad container name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := rt.Start(context.Background(), tc.sb, tc.spec)
			if err == nil {
				killAtCleanup(t, st.Pid)
				t.Fatalf("Start succeeded: %+v", st)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Start error %q, want it to mention %q", err, tc.wantErr)
			}
		})
	}
	if l, _ := rt.List(context.Background()); len(l) != 0 {
		t.Errorf("failed starts left containers: %+v", l)
	}
	// No state files, and no log files of containers that never ran.
	filepath.WalkDir(stateDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("failed starts left %s", path)
		}
		return nil
	})
	filepath.WalkDir(sb.LogDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("failed starts left %s", path)
		}
		return nil
	})
}

// TestStopHonoursGrace: a process that traps SIGTERM and exits 200 ms later
// gets to finish within a long grace period and is not killed.
func TestStopHonoursGrace(t *testing.T) {
	requireRoot(t)
	_, podNS := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	st := start(t, rt, newSandbox(t, "trap", podNS, "", ""), runtime.ContainerSpec{Name: "trap", Command: []string{testBinary(t), "trap-term", "200ms"}})
	waitLog(t, st.LogPath, "ready")
	const grace = 10 * time.Second
	t0 := time.Now()
	if err := rt.Stop(context.Background(), st.ID, grace); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(t0)
	t.Logf("a SIGTERM-trapping process with a 200ms shutdown stopped after %v (grace %v)", elapsed, grace)
	got, _ := rt.Status(context.Background(), st.ID)
	if got.State != runtime.StateExited || got.ExitCode != 0 {
		t.Fatalf("status %+v, want exited 0 (it exits by itself, not by SIGKILL)", got)
	}
	logText := readFile(t, st.LogPath)
	i, j := strings.Index(logText, "got SIGTERM"), strings.Index(logText, "exiting")
	if i < 0 || j < i {
		t.Fatalf("log %q: want got SIGTERM, then exiting", logText)
	}
	if elapsed < 200*time.Millisecond || elapsed >= grace {
		t.Fatalf("Stop took %v: want at least the process's 200ms, less than the grace", elapsed)
	}
}

// TestStopKillsAfterGrace: a process that ignores SIGTERM is SIGKILLed once
// the grace period is over.
func TestStopKillsAfterGrace(t *testing.T) {
	requireRoot(t)
	_, podNS := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	st := start(t, rt, newSandbox(t, "stubborn", podNS, "", ""), runtime.ContainerSpec{Name: "ignore", Command: []string{testBinary(t), "ignore-term"}})
	waitLog(t, st.LogPath, "ready")
	const grace = 300 * time.Millisecond
	t0 := time.Now()
	if err := rt.Stop(context.Background(), st.ID, grace); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(t0)
	t.Logf("a SIGTERM-ignoring process was killed after %v (grace %v)", elapsed, grace)
	got, _ := rt.Status(context.Background(), st.ID)
	if got.State != runtime.StateExited || got.ExitCode != 137 {
		t.Fatalf("status %+v, want exited 137 (SIGKILL)", got)
	}
	if elapsed < grace || elapsed > 10*time.Second {
		t.Fatalf("Stop took %v: want the grace %v, then SIGKILL", elapsed, grace)
	}
}

// TestStopKillsTheGroup: children of the container's process go with it.
func TestStopKillsTheGroup(t *testing.T) {
	requireRoot(t)
	_, podNS := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	// The shell forks a sleep, prints its pid and waits.
	st := start(t, rt, newSandbox(t, "group", podNS, "", ""), runtime.ContainerSpec{Name: "sh", Command: []string{"sh", "-c", "sleep 300 & echo child $!; wait"}})
	var child int
	eventually(t, 20*time.Second, "the child's pid in the log", func() bool {
		for l := range strings.Lines(readFile(t, st.LogPath)) {
			if _, err := fmtSscan(l, &child); err == nil {
				return true
			}
		}
		return false
	})
	killAtCleanup(t, child)
	ticks, err := readStat(child)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Stop(context.Background(), st.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the child to die", func() bool { return !alive(child, ticks.startTicks) })
}

func TestRemove(t *testing.T) {
	requireRoot(t)
	_, podNS := newNetNS(t)
	stateDir := t.TempDir()
	rt := newRuntime(t, stateDir)
	st := start(t, rt, newSandbox(t, "remove", podNS, "", ""), runtime.ContainerSpec{Name: "ignore", Command: []string{testBinary(t), "ignore-term"}})
	waitLog(t, st.LogPath, "ready")
	ticks := mustTicks(t, rt, st.ID)
	if err := rt.Remove(context.Background(), st.ID); err != nil {
		t.Fatal(err)
	}
	if alive(st.Pid, ticks) {
		t.Fatal("Remove left the process running")
	}
	if _, err := rt.Status(context.Background(), st.ID); !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("Status after Remove: %v", err)
	}
	for _, p := range []string{filepath.Join(stateDir, st.ID+".json"), st.LogPath} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", p, err)
		}
	}
	if err := rt.Remove(context.Background(), st.ID); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(st.LogPath)); !os.IsNotExist(err) {
		t.Errorf("the container's log dir is still there (%v)", err)
	}
	if err := rt.Stop(context.Background(), st.ID, time.Second); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("Stop of a removed container: %v", err)
	}
	// The reaper must not write the state back after Remove.
	time.Sleep(50 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(stateDir, st.ID+".json")); !os.IsNotExist(err) {
		t.Errorf("state file came back: %v", err)
	}

	// Without a LogDir the logs go under the state dir, and go with the
	// last container of the pod.
	nolog := runtime.Sandbox{PodUID: "uid-nolog", Name: "nolog", NetNSPath: podNS}
	st = start(t, rt, nolog, runtime.ContainerSpec{Name: "true", Command: []string{"true"}})
	if want := filepath.Join(stateDir, "logs", "uid-nolog", "true", st.ID+".log"); st.LogPath != want {
		t.Errorf("default LogPath %s, want %s", st.LogPath, want)
	}
	waitExited(t, rt, st.ID)
	if err := rt.Remove(context.Background(), st.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(stateDir, "logs", "uid-nolog")); !os.IsNotExist(err) {
		t.Errorf("default pod log dir left behind (%v)", err)
	}
}

func TestLogsFollow(t *testing.T) {
	requireRoot(t)
	_, podNS := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	sb := newSandbox(t, "follow", podNS, "", "")
	t.Run("until exit", func(t *testing.T) {
		st := start(t, rt, sb, runtime.ContainerSpec{Name: "lines", Command: []string{"sh", "-c", "for i in 1 2 3; do echo line$i; sleep 0.1; done"}})
		var buf bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := rt.Logs(ctx, st.ID, true, &buf); err != nil {
			t.Fatal(err)
		}
		if ctx.Err() != nil {
			t.Fatal("Logs(follow) returned only at the deadline")
		}
		if buf.String() != "line1\nline2\nline3\n" {
			t.Fatalf("followed %q", buf.String())
		}
	})
	t.Run("until the reader goes", func(t *testing.T) {
		st := start(t, rt, sb, runtime.ContainerSpec{Name: "ignore", Command: []string{testBinary(t), "ignore-term"}})
		waitLog(t, st.LogPath, "ready")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		var buf bytes.Buffer
		if err := rt.Logs(ctx, st.ID, true, &buf); err != nil {
			t.Fatal(err)
		}
		if buf.String() != "ready\n" {
			t.Fatalf("followed %q", buf.String())
		}
		if err := rt.Stop(context.Background(), st.ID, 0); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("unknown container", func(t *testing.T) {
		if err := rt.Logs(context.Background(), "0123456789abcdef0123456789abcdef", false, &bytes.Buffer{}); !errors.Is(err, runtime.ErrNotFound) {
			t.Fatalf("Logs = %v", err)
		}
	})
}

// TestAdoptionAfterRestart: an "agent" process (this binary) starts a
// netexec container and exits, orphaning it; a new Runtime over the same
// state dir finds it running with the same pid, reaches it, execs in it and
// stops it.
func TestAdoptionAfterRestart(t *testing.T) {
	requireRoot(t)
	// The orphan is re-parented to the nearest subreaper: make that this
	// test process, so that it can reap the orphan at the end (this
	// machine's pid 1 reaps nothing).
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
	_, podNS := newNetNS(t)
	stateDir := t.TempDir()
	sb := newSandbox(t, "adopted", podNS, "nameserver 10.250.9.9\n", "127.0.0.1 localhost\n")
	out, err := exec.Command(testBinary(t), "start-detached", stateDir, podNS, sb.ResolvConf, sb.Hosts, sb.LogDir,
		"--", testBinary(t), "netexec", "--http-port=8080", "--udp-port=-1").Output()
	if err != nil {
		t.Fatalf("start-detached: %v (%s)", err, errOutput(err))
	}
	var started runtime.ContainerStatus
	if err := json.Unmarshal(out, &started); err != nil {
		t.Fatalf("start-detached printed %q: %v", out, err)
	}
	killAtCleanup(t, started.Pid)
	t.Cleanup(func() { reap(t, started.Pid) }) // runs before the kill above
	// The "agent" that started it is gone: it is no Runtime's child.
	if ppid := parentOf(t, started.Pid); ppid != os.Getpid() {
		t.Fatalf("the orphan's parent is %d, want the subreaper %d", ppid, os.Getpid())
	}

	rt := newRuntime(t, stateDir)
	ctx := context.Background()
	list, err := rt.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != started.ID || list[0].State != runtime.StateRunning || list[0].Pid != started.Pid || list[0].LogPath != started.LogPath {
		t.Fatalf("List after restart = %+v, want %+v running", list, started)
	}
	eventually(t, 20*time.Second, "the adopted netexec to answer", func() bool {
		resp, err := clientIn(podNS).Get("http://127.0.0.1:8080/hostname")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == 200
	})
	if _, body := httpGet(t, podNS, "http://127.0.0.1:8080/hostname"); body != "adopted" {
		t.Fatalf("/hostname = %q", body)
	}
	if code, out, err := rt.Exec(ctx, started.ID, []string{"cat", "/etc/resolv.conf"}, 10*time.Second); err != nil || code != 0 || string(out) != "nameserver 10.250.9.9\n" {
		t.Fatalf("Exec in the adopted container: %d %q %v", code, out, err)
	}

	ticks := mustTicks(t, rt, started.ID)
	if err := rt.Stop(ctx, started.ID, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if alive(started.Pid, ticks) {
		t.Fatal("Stop left the adopted process running")
	}
	got, _ := rt.Status(ctx, started.ID)
	if got.State != runtime.StateExited || got.ExitCode != ExitCodeUnknown {
		t.Fatalf("after Stop: %+v, want exited with the unknown code %d", got, ExitCodeUnknown)
	}
	// A third agent reads the same from disk.
	again, err := newRuntime(t, stateDir).Status(ctx, started.ID)
	if err != nil || again.State != runtime.StateExited || again.ExitCode != ExitCodeUnknown {
		t.Fatalf("third runtime: %+v, %v", again, err)
	}
}

// TestPIDReuseGuard: a state file whose pid now belongs to another process
// (here: the test itself, with another start time) is reported exited and
// never signalled.
func TestPIDReuseGuard(t *testing.T) {
	stateDir := t.TempDir()
	me, err := readStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		pid       int
		ticks     uint64
		wantState runtime.State
	}{
		{name: "pid reused", pid: os.Getpid(), ticks: me.startTicks + 1, wantState: runtime.StateExited},
		{name: "pid gone", pid: 1 << 30, ticks: 1, wantState: runtime.StateExited},
		// The test process itself, start time and all: "running".
		{name: "same process", pid: os.Getpid(), ticks: me.startTicks, wantState: runtime.StateRunning},
	}
	ids := make([]string, len(tests))
	for i, tc := range tests {
		id, _ := newID()
		ids[i] = id
		rec := record{ID: id, PodUID: "u", Name: tc.name, Pid: tc.pid, StartTicks: tc.ticks, State: runtime.StateRunning, StartedAt: time.Now()}
		(&Runtime{cfg: Config{StateDir: stateDir}}).save(&rec)
	}
	rt := newRuntime(t, stateDir)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := rt.Status(context.Background(), ids[i])
			if err != nil {
				t.Fatal(err)
			}
			if st.State != tc.wantState {
				t.Fatalf("state %s, want %s", st.State, tc.wantState)
			}
			if st.State == runtime.StateExited {
				if st.ExitCode != ExitCodeUnknown {
					t.Errorf("exit code %d, want %d", st.ExitCode, ExitCodeUnknown)
				}
				// Stopping it is a no-op and signals nobody (we are alive).
				if err := rt.Stop(context.Background(), ids[i], 0); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	b := readFile(t, filepath.Join(stateDir, ids[0]+".json"))
	if !strings.Contains(b, `"exitCodeUnknown": true`) {
		t.Errorf("state file does not record the unknown exit: %s", b)
	}
}

// TestHostNetwork: without a NetNSPath the container stays in the agent's
// network namespace and keeps the node's host name (hostNetwork), but still
// gets the pod's resolv.conf. It sends no traffic.
func TestHostNetwork(t *testing.T) {
	requireRoot(t)
	const resolv = "nameserver 10.250.9.9\n"
	sb := newSandbox(t, "hostnet", "", resolv, "")
	rt := newRuntime(t, t.TempDir())
	st := start(t, rt, sb, runtime.ContainerSpec{Name: "print", Command: []string{testBinary(t), "print"}})
	got := waitExited(t, rt, st.ID)
	logText := readFile(t, got.LogPath)
	var p printed
	if err := json.Unmarshal([]byte(strings.SplitN(logText, "\n", 2)[0]), &p); err != nil {
		t.Fatalf("log %q: %v", logText, err)
	}
	self, _ := os.Readlink("/proc/self/ns/net")
	host, _ := os.Hostname()
	if p.NetNS != self || p.Hostname != host || p.ResolvConf != resolv {
		t.Fatalf("hostNetwork container saw netns %s host %q resolv %q; want %s %q %q", p.NetNS, p.Hostname, p.ResolvConf, self, host, resolv)
	}
}

// TestWaitingHoldsNoThreads: the runtime waits for its children through
// pidfds in the netpoller, not with one blocked thread each.
func TestWaitingHoldsNoThreads(t *testing.T) {
	requireRoot(t)
	_, podNS := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	sb := newSandbox(t, "threads", podNS, "", "")
	before := threads(t)
	const n = 30
	var ids []string
	for i := range n {
		st := start(t, rt, sb, runtime.ContainerSpec{Name: fmt.Sprintf("sleep%d", i), Command: []string{"sleep", "60"}})
		ids = append(ids, st.ID)
	}
	time.Sleep(100 * time.Millisecond)
	after := threads(t)
	t.Logf("threads: %d before, %d with %d running containers", before, after, n)
	if after-before >= n/2 {
		t.Errorf("%d running containers added %d threads", n, after-before)
	}
	for _, id := range ids {
		if err := rt.Stop(context.Background(), id, 0); err != nil {
			t.Fatal(err)
		}
		// Grace 0 still sends SIGTERM first, which sleep dies of.
		if st, _ := rt.Status(context.Background(), id); st.State != runtime.StateExited || st.ExitCode != 143 {
			t.Errorf("%s: %s %d after Stop, want exited 143 (reaped exactly)", id, st.State, st.ExitCode)
		}
	}
}

func threads(t *testing.T) int {
	t.Helper()
	for l := range strings.Lines(readFile(t, "/proc/self/status")) {
		if v, ok := strings.CutPrefix(l, "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: line")
	return 0
}

// TestStartLeavesAgentNamespaces: Start enters the pod's namespaces on a
// thread of its own that then ends; no thread of the agent, the main
// thread included (whose view /proc/self is), stays in them.
func TestStartLeavesAgentNamespaces(t *testing.T) {
	requireRoot(t)
	_, podNS := newNetNS(t)
	rt := newRuntime(t, t.TempDir())
	sb := newSandbox(t, "clean", podNS, "nameserver 10.250.9.9\n", "")
	nsOf := func(path string) string {
		s, err := os.Readlink(path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	kinds := []string{"net", "mnt", "uts"}
	before := map[string]string{}
	for _, k := range kinds {
		before[k] = nsOf("/proc/self/ns/" + k)
	}
	var ids []string
	for range 20 {
		st := start(t, rt, sb, runtime.ContainerSpec{Name: "print", Command: []string{testBinary(t), "print"}})
		ids = append(ids, st.ID)
	}
	for _, id := range ids {
		waitExited(t, rt, id)
	}
	for _, k := range kinds {
		if got := nsOf("/proc/self/ns/" + k); got != before[k] {
			t.Errorf("the main thread's %s namespace changed: %s, was %s", k, got, before[k])
		}
	}
	eventually(t, 5*time.Second, "no thread left in a pod namespace", func() bool {
		tasks, _ := filepath.Glob("/proc/self/task/*/ns/mnt")
		for _, task := range tasks {
			if s, err := os.Readlink(task); err == nil && s != before["mnt"] {
				return false
			}
		}
		return true
	})
}
