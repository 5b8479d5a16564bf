package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// ExitCodeUnknown is the exit code reported for a container that exited
// while no runtime was its parent (it was adopted after an agent restart),
// so its real status could not be read: 137, as the kubelet reports a
// container whose status is lost (reason ContainerStatusUnknown). The state
// file marks such an exit with "exitCodeUnknown": true.
const ExitCodeUnknown = 137

// defaultPath is the PATH a container gets when its env sets none (the
// value containerd and Docker use).
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Config configures a Runtime.
type Config struct {
	// StateDir holds one JSON file per container; it is what a restarted
	// agent adopts its containers from. Required; created 0700.
	StateDir string
	// HelperPath is the binary Exec re-executes as `<HelperPath>
	// runtime-init ...` to enter a running container's namespaces;
	// default /proc/self/exe, the running binary itself (which works even
	// if the file was replaced on disk). Start needs no helper.
	HelperPath string
	// LogPollInterval is how often Logs(follow) looks for new output;
	// default 200 ms.
	LogPollInterval time.Duration
	// KillTimeout bounds the wait for a process to die after SIGKILL;
	// default 10 s.
	KillTimeout time.Duration
	// Cgroups, when set, gives each container of a pod with a cgroup
	// (Sandbox.CgroupParent) a cgroup of its own under it, with the
	// container's Resources, which its process starts in and every exec
	// joins; its counters are ContainerStats' figures and its oom_kill
	// count the OOMKilled reason. Nil: no cgroups (every process stays in
	// the agent's).
	Cgroups Cgroups
	// Logger; nil discards.
	Logger *slog.Logger
}

// Runtime runs containers as processes. It implements runtime.Runtime.
type Runtime struct {
	cfg Config
	log *slog.Logger

	// mu guards containers, every record in it and the state files.
	mu         sync.Mutex
	containers map[string]*container
	reaper     reaper // waits for the processes this Runtime started

	snaps procSnapshots // the last read of /proc (stats.go)
}

var _ runtime.Runtime = (*Runtime)(nil)

// container is one container the runtime knows.
type container struct {
	rec record
	// cmd and done are set for a process this Runtime started (it is its
	// parent and reaps it); both are nil for an adopted one.
	cmd     *exec.Cmd
	done    chan struct{} // closed after the process was reaped and rec updated
	removed bool          // Remove ran: the reaper must not write the state back
	// stdinW is the runtime's end of the stdin FIFO (nil: none, or not
	// opened yet since an adoption); guarded by Runtime.mu.
	stdinW *os.File
}

// New returns a Runtime over cfg.StateDir, adopting the containers recorded
// there: a recorded process that is still alive with the same start time is
// reported running; any other is reported exited with ExitCodeUnknown.
func New(cfg Config) (*Runtime, error) {
	if cfg.StateDir == "" {
		return nil, errors.New("runtime/process: Config.StateDir is required")
	}
	if cfg.HelperPath == "" {
		cfg.HelperPath = "/proc/self/exe"
	}
	if cfg.LogPollInterval <= 0 {
		cfg.LogPollInterval = 200 * time.Millisecond
	}
	if cfg.KillTimeout <= 0 {
		cfg.KillTimeout = 10 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("runtime/process: state dir: %w", err)
	}
	r := &Runtime{cfg: cfg, log: log, containers: make(map[string]*container)}
	recs, err := r.load()
	if err != nil {
		return nil, fmt.Errorf("runtime/process: load state: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, rec := range recs {
		c := &container{rec: *rec}
		r.containers[id] = c
		if c.rec.State == runtime.StateRunning {
			if alive(c.rec.Pid, c.rec.StartTicks) {
				if c.rec.StdinOnce && !c.rec.StdinClosed {
					// The write end went with the agent that held it.
					c.rec.StdinClosed = true
					_ = r.save(&c.rec)
				}
				log.Info("runtime/process: adopted running container", "id", id, "pod", rec.PodUID, "name", rec.Name, "pid", rec.Pid)
			} else {
				r.markExitedLocked(c, ExitCodeUnknown, true)
			}
		}
	}
	return r, nil
}

// Name is "process".
func (r *Runtime) Name() string { return "process" }

// Start runs c.Command + c.Args (c.Image is ignored) as a new process group
// in sb's network namespace, with a private mount namespace in which
// sb.ResolvConf and sb.Hosts cover /etc/resolv.conf and /etc/hosts and
// c.Mounts are bind-mounted (a missing mount point is created on the
// node's file system, which containers share), the pod
// name as host name, c.Env as its whole environment (plus a default PATH if
// it sets none), c.WorkingDir (default /) and stdout and stderr appended to
// <sb.LogDir>/<c.Name>/<id>.log (default LogDir:
// <StateDir>/logs/<pod UID>). An empty sb.NetNSPath means the host's
// network namespace and host name (hostNetwork); an empty ResolvConf or
// Hosts leaves that file alone. c.Security gives the process its user,
// groups, capability bounding set, no_new_privs and a read-only root
// (security.go); what it cannot honour (a seccomp profile, runAsNonRoot as
// root, an unknown capability) is a *runtime.ConfigError and nothing
// starts. Start returns once the command has been exec'ed, or with the
// reason it could not be (no such command, no such netns, ...).
func (r *Runtime) Start(ctx context.Context, sb runtime.Sandbox, c runtime.ContainerSpec) (runtime.ContainerStatus, error) {
	if len(c.Command) == 0 {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start %s: no command (the process runtime has no image entrypoint)", c.Name)
	}
	if c.Name == "" || c.Name == "." || c.Name == ".." || strings.ContainsRune(c.Name, '/') {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start: bad container name %q", c.Name)
	}
	if len(c.Sysctls) > 0 {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start %s: %w", c.Name, &runtime.ConfigError{Field: "securityContext.sysctls",
			Msg: fmt.Sprintf("the process runtime cannot set %s: its containers share the node's IPC namespace (net.* sysctls work; use the containerd runtime for IPC ones)",
				strings.Join(slices.Sorted(maps.Keys(c.Sysctls)), ", "))})
	}
	own, err := boundingSet()
	if err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start %s: %w", c.Name, err)
	}
	cr, err := containerCreds(c.Security, own)
	if err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start %s: %w", c.Name, err)
	}
	id, err := newID()
	if err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start %s: %w", c.Name, err)
	}
	cg := r.containerCgroup(sb, id)
	if cg != "" {
		if err := r.cfg.Cgroups.Ensure(cg, c.Resources); err != nil {
			return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start %s: %w", c.Name, err)
		}
	}
	logDir := sb.LogDir
	if logDir == "" {
		logDir = filepath.Join(r.cfg.StateDir, "logs", sb.PodUID)
	}
	logPath := filepath.Join(logDir, c.Name, id+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start %s: log dir: %w", c.Name, err)
	}
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start %s: %w", c.Name, err)
	}
	defer logFile.Close() // the child has its own copy

	argv := slices.Concat(c.Command, c.Args)
	env := withDefaultPath(c.Env)
	opts := initOptions{
		netns:      sb.NetNSPath,
		resolvConf: sb.ResolvConf,
		hosts:      sb.Hosts,
		workdir:    c.WorkingDir,
		syncFD:     -1,
		mounts:     c.Mounts,
		creds:      &cr,
	}
	if cg != "" {
		opts.cgroup = func(cmd *exec.Cmd) (func(), error) { return r.intoCgroup(cg, cmd) }
	}
	if sb.NetNSPath != "" {
		// A hostNetwork pod keeps the node's name, as in Kubernetes.
		opts.hostname = podHostname(sb.Name)
	}
	cmd := &exec.Cmd{Args: argv, Env: env, Stdout: logFile, Stderr: logFile}
	var stdinPath string
	var stdinW *os.File
	if c.Stdin {
		stdinPath = filepath.Join(r.cfg.StateDir, id+".stdin")
		var childStdin *os.File
		stdinW, childStdin, err = openStdin(stdinPath, c.StdinOnce)
		if err != nil {
			os.Remove(logPath)
			os.Remove(filepath.Dir(logPath))
			return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start %s: stdin: %w", c.Name, err)
		}
		defer childStdin.Close() // the child has its own copy
		cmd.Stdin = childStdin
	}
	undoStdin := func() {
		if stdinW != nil {
			stdinW.Close()
			os.Remove(stdinPath)
		}
	}
	// A process group of its own: Stop signals the whole group. No
	// Pdeathsig: pods outlive the agent.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true,
		Credential: &syscall.Credential{Uid: cr.UID, Gid: cr.GID, Groups: cr.Groups}}
	if err := ctx.Err(); err != nil {
		err = fmt.Errorf("runtime/process: start %s/%s: %w", sb.Name, c.Name, err)
		undoStdin()
		os.Remove(logPath)
		os.Remove(filepath.Dir(logPath))
		return runtime.ContainerStatus{}, err
	}
	if err := startInPod(opts, cmd); err != nil {
		// The error says what the log would; leave no file of a container
		// that never ran.
		undoStdin()
		os.Remove(logPath)
		os.Remove(filepath.Dir(logPath)) // only if empty
		_ = r.removeCgroup(cg)
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start %s/%s: %w", sb.Name, c.Name, err)
	}
	pid := cmd.Process.Pid
	st, err := readStat(pid) // not reaped yet, so readable even if it already exited
	if err != nil {
		killGroup(pid, unix.SIGKILL)
		_ = cmd.Wait()
		undoStdin()
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start %s/%s: %w", sb.Name, c.Name, err)
	}
	ctr := &container{
		rec: record{
			ID: id, PodUID: sb.PodUID, Namespace: sb.Namespace, PodName: sb.Name, Name: c.Name,
			Argv: argv, Env: env, WorkingDir: c.WorkingDir, NetNSPath: sb.NetNSPath, LogPath: logPath,
			Pid: pid, StartTicks: st.startTicks, StartedAt: time.Now(), State: runtime.StateRunning,
			StdinPath: stdinPath, StdinOnce: c.Stdin && c.StdinOnce,
			Creds: &cr, Cgroup: cg,
		},
		cmd:    cmd,
		done:   make(chan struct{}),
		stdinW: stdinW,
	}
	r.mu.Lock()
	if err := r.save(&ctr.rec); err != nil {
		r.mu.Unlock()
		killGroup(pid, unix.SIGKILL)
		_ = cmd.Wait()
		undoStdin()
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/process: start %s/%s: save state: %w", sb.Name, c.Name, err)
	}
	r.containers[id] = ctr
	status := ctr.rec.status()
	r.mu.Unlock()
	r.wait(ctr)
	r.log.Info("runtime/process: started", "id", id, "pod", sb.Namespace+"/"+sb.Name, "name", c.Name, "pid", pid)
	return status, nil
}

// startHelper starts cmd (the helper) with the sync pipe as fd 3, in
// cgroup cg (the container's; "" none), and waits until it has
// exec'ed the workload (EOF) or reported why not (a message). On failure
// the helper has been reaped.
func (r *Runtime) startHelper(ctx context.Context, cmd *exec.Cmd, cg string) error {
	syncR, syncW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer syncR.Close()
	cmd.ExtraFiles = []*os.File{syncW} // fd 3 == syncFD
	err = r.startInCgroup(cg, cmd)
	syncW.Close()
	if err != nil {
		return err
	}
	type result struct {
		msg []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(syncR, 64<<10))
		ch <- result{b, err}
	}()
	var res result
	select {
	case res = <-ch:
	case <-ctx.Done():
		killGroup(cmd.Process.Pid, unix.SIGKILL)
		<-ch
		_ = cmd.Wait()
		return ctx.Err()
	}
	if res.err == nil && len(res.msg) == 0 {
		return nil
	}
	_ = cmd.Wait()
	if res.err != nil {
		return fmt.Errorf("reading the helper's status: %w", res.err)
	}
	return errors.New(string(res.msg))
}

// wait has the Runtime's reaper wait for a process it started, or, where
// pidfds are missing, a goroutine blocked in wait(2).
func (r *Runtime) wait(c *container) {
	err := r.reaper.add(c.cmd.Process.Pid, func(code int) {
		_ = c.cmd.Process.Release() // reaped by the reaper, not by Wait
		r.exited(c, code)
	})
	if err != nil {
		r.log.Debug("runtime/process: no pidfd wait, blocking in wait(2)", "pid", c.cmd.Process.Pid, "err", err)
		go func() {
			_ = c.cmd.Wait()
			r.exited(c, exitStatus(c.cmd.ProcessState))
		}()
	}
}

// exited records the exit of a process this Runtime started and reaped.
func (r *Runtime) exited(c *container, code int) {
	r.mu.Lock()
	if !c.removed {
		r.markExitedLocked(c, code, false)
	}
	c.closeStdinLocked()
	r.mu.Unlock()
	close(c.done)
	r.log.Info("runtime/process: exited", "id", c.rec.ID, "name", c.rec.Name, "pid", c.rec.Pid, "exitCode", code)
}

// markExitedLocked records an exit and saves it; r.mu is held.
func (r *Runtime) markExitedLocked(c *container, code int, unknown bool) {
	if c.rec.State == runtime.StateExited {
		return
	}
	c.rec.State = runtime.StateExited
	if r.oomKilled(c.rec.Cgroup) {
		// The kernel's OOM killer sends SIGKILL: 137, whether or not
		// the status could be read.
		c.rec.Reason, code, unknown = "OOMKilled", 128+int(unix.SIGKILL), false
	}
	c.rec.ExitCode = code
	c.rec.ExitCodeUnknown = unknown
	c.rec.FinishedAt = time.Now()
	if err := r.save(&c.rec); err != nil {
		r.log.Error("runtime/process: saving exit", "id", c.rec.ID, "err", err)
	}
}

// refreshLocked notices that an adopted process has exited; r.mu is held.
func (r *Runtime) refreshLocked(c *container) {
	if c.cmd == nil && c.rec.State == runtime.StateRunning && !alive(c.rec.Pid, c.rec.StartTicks) {
		r.markExitedLocked(c, ExitCodeUnknown, true)
	}
}

// lookup returns the container id, refreshed, and its status.
func (r *Runtime) lookup(id string) (*container, runtime.ContainerStatus, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.containers[id]
	if !ok {
		return nil, runtime.ContainerStatus{}, fmt.Errorf("runtime/process: %s: %w", id, runtime.ErrNotFound)
	}
	r.refreshLocked(c)
	return c, c.rec.status(), nil
}

// Status reports one container.
func (r *Runtime) Status(ctx context.Context, id string) (runtime.ContainerStatus, error) {
	_, st, err := r.lookup(id)
	return st, err
}

// List reports every container in the state dir, oldest first.
func (r *Runtime) List(ctx context.Context) ([]runtime.ContainerStatus, error) {
	r.mu.Lock()
	out := make([]runtime.ContainerStatus, 0, len(r.containers))
	for _, c := range r.containers {
		r.refreshLocked(c)
		out = append(out, c.rec.status())
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b runtime.ContainerStatus) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// Stop sends SIGTERM to the container's process group, waits up to grace
// for the process to exit, then sends SIGKILL and waits (up to
// Config.KillTimeout) for it to die. Once the main process is gone, what
// is left of its group gets SIGKILL. Stopping an exited container is a
// no-op.
func (r *Runtime) Stop(ctx context.Context, id string, grace time.Duration) error {
	c, st, err := r.lookup(id)
	if err != nil {
		return err
	}
	if st.State != runtime.StateRunning {
		return nil
	}
	start := time.Now()
	r.signal(c, unix.SIGTERM)
	if r.waitExit(ctx, c, grace) {
		r.log.Info("runtime/process: stopped by SIGTERM", "id", id, "pid", st.Pid, "after", time.Since(start))
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("runtime/process: stop %s: %w", id, err)
	}
	r.signal(c, unix.SIGKILL)
	if !r.waitExit(ctx, c, r.cfg.KillTimeout) {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("runtime/process: stop %s: %w", id, err)
		}
		return fmt.Errorf("runtime/process: stop %s: pid %d still alive %v after SIGKILL", id, st.Pid, r.cfg.KillTimeout)
	}
	r.log.Info("runtime/process: killed after the grace period", "id", id, "pid", st.Pid, "grace", grace, "after", time.Since(start))
	return nil
}

// signal sends sig to the container's process group, if its process is
// still the one started (an adopted pid is checked against its start
// time; a child cannot be reused before it is reaped).
func (r *Runtime) signal(c *container, sig unix.Signal) {
	r.mu.Lock()
	pid, ticks, running := c.rec.Pid, c.rec.StartTicks, c.rec.State == runtime.StateRunning
	r.mu.Unlock()
	if !running || (c.cmd == nil && !alive(pid, ticks)) {
		return
	}
	killGroup(pid, sig)
}

// killGroup signals the process group pid leads, or pid alone if it left
// its group.
func killGroup(pid int, sig unix.Signal) {
	if err := unix.Kill(-pid, sig); errors.Is(err, unix.ESRCH) {
		_ = unix.Kill(pid, sig)
	}
}

// waitExit waits up to d (or ctx) for the container's process to exit and
// reports whether it did. A child is reaped by its reaper; an adopted
// process is polled. Either way the rest of its group gets SIGKILL.
func (r *Runtime) waitExit(ctx context.Context, c *container, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	if c.cmd != nil {
		select {
		case <-c.done:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	} else {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for alive(c.rec.Pid, c.rec.StartTicks) {
			select {
			case <-tick.C:
			case <-timer.C:
				return false
			case <-ctx.Done():
				return false
			}
		}
		r.mu.Lock()
		r.markExitedLocked(c, ExitCodeUnknown, true)
		r.mu.Unlock()
	}
	// The main process is gone; nothing of the container may outlive it.
	_ = unix.Kill(-c.rec.Pid, unix.SIGKILL)
	return true
}

// Remove forgets a container: a running one is killed first (as CRI's
// RemoveContainer does), then its state file and log file are deleted.
// Removing an unknown container is not an error.
func (r *Runtime) Remove(ctx context.Context, id string) error {
	c, st, err := r.lookup(id)
	if errors.Is(err, runtime.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.State == runtime.StateRunning {
		if err := r.Stop(ctx, id, 0); err != nil {
			return fmt.Errorf("runtime/process: remove %s: %w", id, err)
		}
	}
	if err := r.removeCgroup(c.rec.Cgroup); err != nil {
		return err // the record stays: a retry finds the cgroup again
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c.removed = true
	c.closeStdinLocked()
	if c.rec.StdinPath != "" {
		_ = os.Remove(c.rec.StdinPath)
	}
	delete(r.containers, id)
	if err := r.removeState(id); err != nil {
		return err
	}
	if err := os.Remove(c.rec.LogPath); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("runtime/process: remove %s: log: %w", id, err)
	}
	// The container's log dir, and the pod's if it is the runtime's own
	// default, go when empty; a LogDir the caller gave stays.
	dir := filepath.Dir(c.rec.LogPath)
	if os.Remove(dir) == nil && filepath.Dir(filepath.Dir(dir)) == filepath.Join(r.cfg.StateDir, "logs") {
		_ = os.Remove(filepath.Dir(dir))
	}
	return nil
}

// exitStatus is the exit code Kubernetes shows: the status, or 128+signal.
func exitStatus(ps *os.ProcessState) int {
	if ps == nil {
		return ExitCodeUnknown
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		return waitCode(unix.WaitStatus(ws))
	}
	return ps.ExitCode()
}

func withDefaultPath(env []string) []string {
	for _, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			return slices.Clone(env)
		}
	}
	return append(slices.Clone(env), defaultPath)
}
