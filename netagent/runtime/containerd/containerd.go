package containerd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	ctrd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/containerd/errdefs"
	clog "github.com/containerd/log"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/logdriver"
	"github.com/skiff-dev/skiff/netagent/runtime/logtail"
)

// Defaults.
const (
	DefaultSocket    = "/run/containerd/containerd.sock"
	DefaultNamespace = "skiff"
)

// ExitCodeUnknown is reported for a container whose task is gone (its shim
// died with the daemon, so its status was lost): 137, as the kubelet
// reports ContainerStatusUnknown.
const ExitCodeUnknown = 137

// Labels every container of Skiff carries: what List and Status report
// after an agent restart comes from them.
const (
	LabelPodUID       = "skiff.dev/pod-uid"
	LabelPodNamespace = "skiff.dev/pod-namespace"
	LabelPodName      = "skiff.dev/pod-name"
	LabelContainer    = "skiff.dev/container-name"
	LabelLogPath      = "skiff.dev/log-path"
	LabelStartedAt    = "skiff.dev/started-at"
	// LabelStdin is the stdin FIFO of a container started with stdin
	// (see attach.go); LabelStdinOnce is "true" with stdinOnce, and
	// LabelStdinClosed once that stdin was closed.
	LabelStdin       = "skiff.dev/stdin"
	LabelStdinOnce   = "skiff.dev/stdin-once"
	LabelStdinClosed = "skiff.dev/stdin-closed"
	// LabelCgroup is the container's cgroup path (under the pod's), set
	// when the pod has a cgroup.
	LabelCgroup = "skiff.dev/cgroup"
)

// Config configures a Runtime.
type Config struct {
	// Socket is containerd's gRPC socket (default DefaultSocket).
	Socket string
	// Namespace is the containerd namespace of Skiff's containers and
	// images (default DefaultNamespace).
	Namespace string
	// Snapshotter; empty is the daemon's default (overlayfs).
	Snapshotter string
	// LogRoot holds the logs of containers whose Sandbox has no LogDir:
	// <LogRoot>/<pod UID>. Default: os.TempDir()/skiff-containerd-logs.
	LogRoot string
	// PlainHTTP says which registry hosts are reached over plain HTTP;
	// nil means loopback only (localhost, 127.0.0.1, ::1).
	PlainHTTP func(host string) (bool, error)
	// LogPollInterval is how often Logs(follow) looks for new output;
	// default 200 ms.
	LogPollInterval time.Duration
	// PullProgressInterval is how often PullImage reports the bytes of
	// blobs in flight; default 1 s.
	PullProgressInterval time.Duration
	// KillTimeout bounds the wait for a task to die after SIGKILL; default
	// 10 s.
	KillTimeout time.Duration
	// LoggerBinary is the shim's logging binary: the skiff binary, run by
	// the shim as `LoggerBinary containerd-log <log file>` (logdriver.LogCommand,
	// logdriver.RunLogger) with the task's stdout and stderr pipes. Default:
	// os.Executable(), the agent's own binary. A test binary must name a
	// built skiff (or handle logdriver.LogCommand itself).
	LoggerBinary string
	// Cgroups reads a stopped container's cgroup (its OOM kills) before
	// runc removes it; nil: no OOMKilled reason. The cgroup itself is
	// runc's to make, from the spec (cgroups.go).
	Cgroups CgroupReader
	// Logger; nil discards.
	Logger *slog.Logger
}

// Runtime runs containers as containerd tasks. It implements
// runtime.Runtime, and the image methods the agent and `skiff image` use.
type Runtime struct {
	cfg    Config
	log    *slog.Logger
	client *ctrd.Client
	// clog receives the client's logs (see clientLogger).
	clog *clog.Entry
	// closers run on Close after the client is closed (a managed daemon).
	closers []func() error
}

var _ runtime.Runtime = (*Runtime)(nil)

// New connects to containerd at cfg.Socket and checks that it answers.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	if cfg.Socket == "" {
		cfg.Socket = DefaultSocket
	}
	if cfg.Namespace == "" {
		cfg.Namespace = DefaultNamespace
	}
	if cfg.LogRoot == "" {
		cfg.LogRoot = filepath.Join(os.TempDir(), "skiff-containerd-logs")
	}
	if cfg.LogPollInterval <= 0 {
		cfg.LogPollInterval = 200 * time.Millisecond
	}
	if cfg.KillTimeout <= 0 {
		cfg.KillTimeout = 10 * time.Second
	}
	if cfg.PullProgressInterval <= 0 {
		cfg.PullProgressInterval = time.Second
	}
	if cfg.LoggerBinary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("runtime/containerd: the logging binary: %w", err)
		}
		cfg.LoggerBinary = exe
	}
	if !filepath.IsAbs(cfg.LoggerBinary) {
		return nil, fmt.Errorf("runtime/containerd: the logging binary %q: want an absolute path (the shim runs it)", cfg.LoggerBinary)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c, err := ctrd.New(cfg.Socket, ctrd.WithDefaultNamespace(cfg.Namespace), ctrd.WithTimeout(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("runtime/containerd: connect %s: %w", cfg.Socket, err)
	}
	vctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := c.Version(vctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("runtime/containerd: %s does not answer: %w", cfg.Socket, err)
	}
	log.Info("runtime/containerd: connected", "socket", cfg.Socket, "version", v.Version, "namespace", cfg.Namespace)
	return &Runtime{cfg: cfg, log: log, client: c, clog: clientLogger(log)}, nil
}

// Close closes the connection (and stops a daemon the Runtime manages,
// see WithDaemon). Containers keep running.
func (r *Runtime) Close() error {
	err := r.client.Close()
	for _, c := range r.closers {
		err = errors.Join(err, c())
	}
	r.closers = nil
	return err
}

// OnClose registers fn to run on Close (after the client is closed); the
// agent uses it to stop the containerd it started.
func (r *Runtime) OnClose(fn func() error) { r.closers = append(r.closers, fn) }

// Client is the underlying containerd client (for tests and tools).
func (r *Runtime) Client() *ctrd.Client { return r.client }

// Name is "containerd".
func (r *Runtime) Name() string { return "containerd" }

func (r *Runtime) ctx(ctx context.Context) context.Context {
	return withClientLogger(namespaces.WithNamespace(ctx, r.cfg.Namespace), r.clog)
}

func newID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// podHostname is the pod name cut to a valid host name (63 bytes).
func podHostname(name string) string {
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-.")
	}
	return name
}

// Start creates a container from c.Image (which must be present: see
// EnsureImage) and starts its task in sb's network namespace. The process
// is ENTRYPOINT + CMD of the image, with c.Command replacing ENTRYPOINT
// (and then CMD is dropped) and c.Args replacing CMD, as Kubernetes does;
// the environment is the image's, overridden by c.Env; the working dir is
// c.WorkingDir or the image's. sb.ResolvConf and sb.Hosts are bind-mounted
// read-only at /etc/resolv.conf and /etc/hosts, then c.Mounts in order;
// stdout and stderr are
// appended to <sb.LogDir>/<c.Name>/<id>.log.
func (r *Runtime) Start(ctx context.Context, sb runtime.Sandbox, c runtime.ContainerSpec) (runtime.ContainerStatus, error) {
	ctx = r.ctx(ctx)
	if c.Name == "" || c.Name == "." || c.Name == ".." || strings.ContainsRune(c.Name, '/') {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start: bad container name %q", c.Name)
	}
	ref, err := NormalizeRef(c.Image)
	if err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s: %w", c.Name, err)
	}
	img, err := r.client.GetImage(ctx, ref)
	if err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s: image %s: %w", c.Name, ref, err)
	}
	if err := r.unpack(ctx, img); err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s: %w", c.Name, err)
	}
	icfg, err := img.Spec(ctx)
	if err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s: image config: %w", c.Name, err)
	}
	secOpts, err := securityOpts(c.Security, icfg.Config.User) // security.go
	if err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s: %w", c.Name, err)
	}
	argv := containerArgv(icfg.Config.Entrypoint, icfg.Config.Cmd, c.Command, c.Args)
	if len(argv) == 0 {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s: no command: neither the pod nor image %s sets one", c.Name, ref)
	}
	id, err := newID()
	if err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s: %w", c.Name, err)
	}
	logDir := sb.LogDir
	if logDir == "" {
		logDir = filepath.Join(r.cfg.LogRoot, sb.PodUID)
	}
	logPath, err := filepath.Abs(filepath.Join(logDir, c.Name, id+".log"))
	if err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s: %w", c.Name, err)
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s: log dir: %w", c.Name, err)
	}
	specOpts := []oci.SpecOpts{
		withImageConfig(withUser(icfg.Config, c.Security)),
		oci.WithProcessArgs(argv...),
		oci.WithEnv(c.Env),
	}
	if c.WorkingDir != "" {
		specOpts = append(specOpts, oci.WithProcessCwd(c.WorkingDir))
	}
	if sb.NetNSPath != "" {
		specOpts = append(specOpts,
			oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: sb.NetNSPath}),
			oci.WithHostname(podHostname(sb.Name)))
	} else {
		specOpts = append(specOpts, oci.WithHostNamespace(specs.NetworkNamespace))
	}
	var mounts []specs.Mount
	for dst, src := range map[string]string{"/etc/resolv.conf": sb.ResolvConf, "/etc/hosts": sb.Hosts} {
		if src != "" {
			mounts = append(mounts, specs.Mount{Destination: dst, Type: "bind", Source: src, Options: []string{"rbind", "ro"}})
		}
	}
	for _, m := range c.Mounts {
		opt := "rw"
		if m.ReadOnly {
			opt = "ro"
		}
		// runc creates a missing mount point inside the rootfs.
		mounts = append(mounts, specs.Mount{Destination: m.Destination, Type: "bind", Source: m.Source, Options: []string{"rbind", opt}})
	}
	specOpts = append(specOpts, oci.WithMounts(mounts))
	specOpts = append(specOpts, secOpts...)
	specOpts = append(specOpts, withSysctls(c.Sysctls))
	cg := containerCgroup(sb, id)
	if cg != "" {
		specOpts = append(specOpts, oci.WithCgroup(cg), withResources(c.Resources))
	}
	if c.Stdin && c.TTY {
		specOpts = append(specOpts, oci.WithTTY)
	}
	started := time.Now()
	labels := map[string]string{
		LabelPodUID: sb.PodUID, LabelPodNamespace: sb.Namespace, LabelPodName: sb.Name,
		LabelContainer: c.Name, LabelLogPath: logPath, LabelStartedAt: started.UTC().Format(time.RFC3339Nano),
	}
	if cg != "" {
		labels[LabelCgroup] = cg
	}
	var stdinPath string
	if c.Stdin {
		stdinPath = r.stdinPath(id)
		if err := os.MkdirAll(filepath.Dir(stdinPath), 0o700); err != nil {
			return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s: stdin: %w", c.Name, err)
		}
		labels[LabelStdin] = stdinPath
		if c.StdinOnce {
			labels[LabelStdinOnce] = "true"
		}
	}
	opts := []ctrd.NewContainerOpts{ctrd.WithImage(img)}
	if r.cfg.Snapshotter != "" {
		opts = append(opts, ctrd.WithSnapshotter(r.cfg.Snapshotter))
	}
	opts = append(opts, ctrd.WithNewSnapshot(id, img), ctrd.WithNewSpec(specOpts...), ctrd.WithContainerLabels(labels))
	ctr, err := r.client.NewContainer(ctx, id, opts...)
	if err != nil {
		// The snapshot is made before the spec, whose options can still
		// fail (an image USER its /etc/passwd lacks): the client leaves
		// the snapshot behind.
		if rerr := r.client.SnapshotService(r.cfg.Snapshotter).Remove(context.WithoutCancel(ctx), id); rerr != nil && !errdefs.IsNotFound(rerr) {
			r.log.Warn("runtime/containerd: removing the snapshot of a failed create", "id", id, "err", rerr)
		}
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s/%s: create: %w", sb.Name, c.Name, err)
	}
	cleanup := func() {
		dctx := context.WithoutCancel(ctx)
		if err := ctr.Delete(dctx, ctrd.WithSnapshotCleanup); err != nil {
			r.log.Warn("runtime/containerd: cleanup after a failed start", "id", id, "err", err)
		}
		os.Remove(logPath)
		os.Remove(filepath.Dir(logPath))
		if stdinPath != "" {
			os.Remove(stdinPath)
		}
	}
	// The shim runs the logging binary (this skiff) with the task's
	// stdout and stderr pipes; it appends both to logPath with one writer.
	// (The shim's own file:// logging can lose the last stderr line: its
	// stdout copier closes the shared file when stdout ends first.)
	creator := cio.BinaryIO(r.cfg.LoggerBinary, map[string]string{logdriver.LogCommand: logPath})
	if stdinPath != "" {
		creator = r.stdinIO(stdinPath, logPath, c.TTY)
	}
	task, err := ctr.NewTask(ctx, creator)
	if err != nil {
		cleanup()
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s/%s: task: %w", sb.Name, c.Name, err)
	}
	// The logger opens the file before it reports ready; with the binary
	// scheme a logger that failed looks ready to the shim, so check.
	if _, err := os.Stat(logPath); err != nil {
		_, _ = task.Delete(context.WithoutCancel(ctx), ctrd.WithProcessKill)
		cleanup()
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s/%s: the logging binary %s did not open the log file: %w", sb.Name, c.Name, r.cfg.LoggerBinary, err)
	}
	if err := task.Start(ctx); err != nil {
		_, _ = task.Delete(context.WithoutCancel(ctx), ctrd.WithProcessKill)
		cleanup()
		return runtime.ContainerStatus{}, fmt.Errorf("runtime/containerd: start %s/%s: %w", sb.Name, c.Name, err)
	}
	// The start time is the one the task really started at.
	if _, err := ctr.SetLabels(ctx, map[string]string{LabelStartedAt: time.Now().UTC().Format(time.RFC3339Nano)}); err != nil {
		r.log.Debug("runtime/containerd: label start time", "id", id, "err", err)
	}
	r.log.Debug("runtime/containerd: started", "id", id, "pod", sb.Name, "container", c.Name, "pid", task.Pid(), "argv", argv)
	return r.Status(ctx, id)
}

// containerArgv is the process's argv from the image's ENTRYPOINT and CMD
// and the pod's command and args, as the kubelet computes it.
func containerArgv(entrypoint, cmd, command, args []string) []string {
	switch {
	case len(command) > 0:
		return append(append([]string{}, command...), args...)
	case len(args) > 0:
		return append(append([]string{}, entrypoint...), args...)
	}
	return append(append([]string{}, entrypoint...), cmd...)
}

// load finds a container of Skiff's by ID.
func (r *Runtime) load(ctx context.Context, id string) (ctrd.Container, containers.Container, error) {
	ctr, err := r.client.LoadContainer(ctx, id)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil, containers.Container{}, fmt.Errorf("runtime/containerd: %s: %w", id, runtime.ErrNotFound)
		}
		return nil, containers.Container{}, fmt.Errorf("runtime/containerd: %s: %w", id, err)
	}
	info, err := ctr.Info(ctx, ctrd.WithoutRefreshedMetadata)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil, containers.Container{}, fmt.Errorf("runtime/containerd: %s: %w", id, runtime.ErrNotFound)
		}
		return nil, containers.Container{}, fmt.Errorf("runtime/containerd: %s: %w", id, err)
	}
	if _, ok := info.Labels[LabelPodUID]; !ok {
		return nil, containers.Container{}, fmt.Errorf("runtime/containerd: %s is not Skiff's: %w", id, runtime.ErrNotFound)
	}
	return ctr, info, nil
}

// status builds a container's status from its labels and its task.
func (r *Runtime) status(ctx context.Context, ctr ctrd.Container, info containers.Container) (runtime.ContainerStatus, error) {
	st := runtime.ContainerStatus{
		ID: info.ID, PodUID: info.Labels[LabelPodUID], Name: info.Labels[LabelContainer],
		LogPath: info.Labels[LabelLogPath], State: runtime.StateUnknown,
	}
	if t, err := time.Parse(time.RFC3339Nano, info.Labels[LabelStartedAt]); err == nil {
		st.StartedAt = t
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		if errdefs.IsNotFound(err) {
			// No task: its shim is gone and its exit status with it.
			st.State, st.ExitCode = runtime.StateExited, ExitCodeUnknown
			st.FinishedAt = info.UpdatedAt
			return st, nil
		}
		return st, fmt.Errorf("runtime/containerd: %s: task: %w", info.ID, err)
	}
	ts, err := task.Status(ctx)
	if err != nil {
		if errdefs.IsNotFound(err) {
			st.State, st.ExitCode = runtime.StateExited, ExitCodeUnknown
			return st, nil
		}
		return st, fmt.Errorf("runtime/containerd: %s: task status: %w", info.ID, err)
	}
	switch ts.Status {
	case ctrd.Running, ctrd.Paused, ctrd.Pausing:
		st.State, st.Pid = runtime.StateRunning, int(task.Pid())
	case ctrd.Created:
		st.State, st.Pid = runtime.StateCreated, int(task.Pid())
	case ctrd.Stopped:
		st.State, st.ExitCode, st.FinishedAt = runtime.StateExited, int(ts.ExitStatus), ts.ExitTime
		if r.oomKilled(info.Labels[LabelCgroup]) {
			st.Reason = "OOMKilled"
		}
	}
	return st, nil
}

// Status reports one container.
func (r *Runtime) Status(ctx context.Context, id string) (runtime.ContainerStatus, error) {
	ctx = r.ctx(ctx)
	ctr, info, err := r.load(ctx, id)
	if err != nil {
		return runtime.ContainerStatus{}, err
	}
	return r.status(ctx, ctr, info)
}

// List reports every container of Skiff's namespace (those labelled with
// a pod UID), running or not: after an agent restart it is how the agent
// finds its pods' containers again.
func (r *Runtime) List(ctx context.Context) ([]runtime.ContainerStatus, error) {
	ctx = r.ctx(ctx)
	ctrs, err := r.client.Containers(ctx, fmt.Sprintf("labels.%q", LabelPodUID))
	if err != nil {
		return nil, fmt.Errorf("runtime/containerd: list: %w", err)
	}
	out := make([]runtime.ContainerStatus, 0, len(ctrs))
	for _, ctr := range ctrs {
		info, err := ctr.Info(ctx, ctrd.WithoutRefreshedMetadata)
		if err != nil {
			if errdefs.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("runtime/containerd: list: %w", err)
		}
		st, err := r.status(ctx, ctr, info)
		if err != nil {
			if errors.Is(err, runtime.ErrNotFound) {
				continue
			}
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Stop sends SIGTERM to the container's main process (PID 1 of its PID
// namespace), waits up to grace for it to exit, then sends it SIGKILL
// (which ends every process of the PID namespace) and waits up to
// Config.KillTimeout. Stopping an
// exited container is not an error.
func (r *Runtime) Stop(ctx context.Context, id string, grace time.Duration) error {
	ctx = r.ctx(ctx)
	ctr, _, err := r.load(ctx, id)
	if err != nil {
		return err
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("runtime/containerd: stop %s: %w", id, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	exited, err := task.Wait(wctx)
	if err != nil {
		return fmt.Errorf("runtime/containerd: stop %s: wait: %w", id, err)
	}
	if ts, err := task.Status(ctx); err == nil && ts.Status == ctrd.Stopped {
		return nil
	}
	if grace > 0 {
		if err := task.Kill(ctx, syscall.SIGTERM); err != nil && !errdefs.IsNotFound(err) {
			r.log.Debug("runtime/containerd: SIGTERM", "id", id, "err", err)
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-exited:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("runtime/containerd: stop %s: %w", id, ctx.Err())
		case <-t.C:
		}
	}
	if err := task.Kill(ctx, syscall.SIGKILL); err != nil && !errdefs.IsNotFound(err) {
		// A task that already exited refuses the kill.
		if ts, serr := task.Status(ctx); serr == nil && ts.Status == ctrd.Stopped {
			return nil
		}
		return fmt.Errorf("runtime/containerd: stop %s: SIGKILL: %w", id, err)
	}
	t := time.NewTimer(r.cfg.KillTimeout)
	defer t.Stop()
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("runtime/containerd: stop %s: %w", id, ctx.Err())
	case <-t.C:
		return fmt.Errorf("runtime/containerd: stop %s: still running %v after SIGKILL", id, r.cfg.KillTimeout)
	}
}

// Remove kills the container's task if it still runs and deletes it, the
// container and its snapshot. The log file stays (it belongs to the pod's
// log dir). A container that is already gone is not an error.
func (r *Runtime) Remove(ctx context.Context, id string) error {
	ctx = r.ctx(ctx)
	ctr, _, err := r.load(ctx, id)
	if err != nil {
		if errors.Is(err, runtime.ErrNotFound) {
			return nil
		}
		return err
	}
	if task, err := ctr.Task(ctx, nil); err == nil {
		if _, err := task.Delete(ctx, ctrd.WithProcessKill); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("runtime/containerd: remove %s: task: %w", id, err)
		}
	} else if !errdefs.IsNotFound(err) {
		return fmt.Errorf("runtime/containerd: remove %s: task: %w", id, err)
	}
	if err := ctr.Delete(ctx, ctrd.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("runtime/containerd: remove %s: %w", id, err)
	}
	_ = os.Remove(r.stdinPath(id))
	return nil
}

// Logs copies the container's log file (stdout and stderr as written) to
// w; with follow it keeps copying what is appended until the container has
// exited (or was removed) and its output is drained, or ctx is done (nil);
// see runtime/logtail.
func (r *Runtime) Logs(ctx context.Context, id string, follow bool, w io.Writer) error {
	st, err := r.Status(ctx, id)
	if err != nil {
		return err
	}
	f, err := os.Open(st.LogPath)
	if err != nil {
		return fmt.Errorf("runtime/containerd: logs of %s: %w", id, err)
	}
	defer f.Close()
	var stateErr error // returned as it is; copy errors are wrapped
	phase := func(ctx context.Context) (logtail.Phase, error) {
		st, err := r.Status(ctx, id)
		switch {
		case errors.Is(err, runtime.ErrNotFound):
			// Exited and already removed (the agent removes a deleted
			// pod's containers at once): its last lines are still in
			// the open file.
			return logtail.Done, nil
		case err != nil:
			stateErr = err
			return 0, err
		case st.State != runtime.StateRunning && st.State != runtime.StateCreated:
			// The shim may still be writing what the process wrote just
			// before it exited.
			return logtail.Draining, nil
		}
		return logtail.Writing, nil
	}
	err = logtail.Copy(ctx, w, f, logtail.Options{Follow: follow, Interval: r.cfg.LogPollInterval, Phase: phase})
	if err != nil && err != stateErr {
		return fmt.Errorf("runtime/containerd: logs of %s: %w", id, err)
	}
	return err
}
