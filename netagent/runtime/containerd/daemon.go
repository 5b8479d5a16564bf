package containerd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DaemonConfig configures a containerd the agent runs itself.
type DaemonConfig struct {
	// Binary is the containerd executable (default: "containerd" on PATH).
	Binary string
	// Dir holds the generated config.toml, root/, state/, the socket
	// containerd.sock, containerd.log and containerd.pid. Required.
	Dir string
	// ReadyTimeout bounds the wait for the socket to answer (default 10 s).
	ReadyTimeout time.Duration
	// Logger; nil discards.
	Logger *slog.Logger
}

// Daemon is a containerd process started by StartDaemon.
type Daemon struct {
	// Socket is its gRPC socket.
	Socket string
	// Pid is its process ID.
	Pid int
	cmd *exec.Cmd
	log *slog.Logger
	// done is closed once the process was reaped.
	done chan struct{}
}

// DaemonSocket is the socket a daemon in dir listens on.
func DaemonSocket(dir string) string { return filepath.Join(dir, "containerd.sock") }

// daemonConfig is containerd's config (version 2 is read by 1.6, 1.7 and
// 2.x): everything under dir, the CRI plugin off (Skiff is its own
// kubelet), the default runc v2 runtime.
func daemonConfig(dir string) string {
	q := strconv.Quote
	return strings.Join([]string{
		"version = 2",
		"root = " + q(filepath.Join(dir, "root")),
		"state = " + q(filepath.Join(dir, "state")),
		`disabled_plugins = ["io.containerd.grpc.v1.cri"]`,
		"",
		"[grpc]",
		"  address = " + q(DaemonSocket(dir)),
		"",
		"[ttrpc]",
		"  address = " + q(DaemonSocket(dir)+".ttrpc"),
		"",
	}, "\n")
}

// StartDaemon writes a config under cfg.Dir and starts containerd with
// it, in a process group of its own (so a terminal's ^C reaches the agent
// only), and returns once its socket answers. The daemon outlives nothing
// on its own: the caller stops it with Stop. Tasks (their shims) survive
// a Stop and are found again by the next daemon on the same Dir.
func StartDaemon(ctx context.Context, cfg DaemonConfig) (*Daemon, error) {
	if cfg.Dir == "" {
		return nil, errors.New("runtime/containerd: DaemonConfig.Dir is required")
	}
	bin := cfg.Binary
	if bin == "" {
		bin = "containerd"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("runtime/containerd: daemon: %w", err)
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = 10 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("runtime/containerd: daemon: %w", err)
	}
	sock := DaemonSocket(dir)
	if len(sock) >= 108 {
		return nil, fmt.Errorf("runtime/containerd: daemon: socket path %s is too long for a unix socket", sock)
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return nil, fmt.Errorf("runtime/containerd: daemon: %w", err)
	}
	conf := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(conf, []byte(daemonConfig(dir)), 0o600); err != nil {
		return nil, fmt.Errorf("runtime/containerd: daemon: %w", err)
	}
	logf, err := os.OpenFile(filepath.Join(dir, "containerd.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("runtime/containerd: daemon: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(path, "--config", conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("runtime/containerd: daemon: %w", err)
	}
	d := &Daemon{Socket: sock, Pid: cmd.Process.Pid, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(d.done)
	}()
	_ = os.WriteFile(filepath.Join(dir, "containerd.pid"), []byte(strconv.Itoa(d.Pid)+"\n"), 0o644)
	deadline := time.Now().Add(cfg.ReadyTimeout)
	for {
		if SocketAnswers(ctx, sock) {
			log.Info("runtime/containerd: started containerd", "pid", d.Pid, "socket", sock, "log", logf.Name())
			return d, nil
		}
		select {
		case <-d.done:
			return nil, fmt.Errorf("runtime/containerd: daemon exited early (%v); see %s", cmd.ProcessState, logf.Name())
		case <-ctx.Done():
			_ = d.Stop()
			return nil, fmt.Errorf("runtime/containerd: daemon: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = d.Stop()
			return nil, fmt.Errorf("runtime/containerd: daemon: %s did not answer within %v; see %s", sock, cfg.ReadyTimeout, logf.Name())
		}
	}
}

// AdoptDaemon finds a daemon an earlier StartDaemon left running on dir
// (an agent that was killed): the PID in containerd.pid, if that process
// still runs containerd with dir's config and its socket answers. Its Stop
// works as for a daemon StartDaemon started.
func AdoptDaemon(ctx context.Context, dir string, log *slog.Logger) (*Daemon, bool) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(dir, "containerd.pid"))
	if err != nil {
		return nil, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return nil, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, false
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	conf := filepath.Join(dir, "config.toml")
	if len(args) < 3 || filepath.Base(args[0]) != "containerd" || !slices.Contains(args, conf) {
		return nil, false
	}
	sock := DaemonSocket(dir)
	if !SocketAnswers(ctx, sock) {
		return nil, false
	}
	d := &Daemon{Socket: sock, Pid: pid, log: log, done: make(chan struct{})}
	go func() {
		// Not our child: poll for its end.
		for running(pid) {
			time.Sleep(50 * time.Millisecond)
		}
		close(d.done)
	}()
	log.Info("runtime/containerd: adopted the containerd an earlier agent started", "pid", pid, "socket", sock)
	return d, true
}

// Stop sends the daemon SIGTERM (by PID), waits up to 10 s, then SIGKILL.
// Containers keep running in their shims.
func (d *Daemon) Stop() error {
	select {
	case <-d.done:
		return nil
	default:
	}
	_ = syscall.Kill(d.Pid, syscall.SIGTERM)
	select {
	case <-d.done:
		d.log.Info("runtime/containerd: stopped containerd", "pid", d.Pid)
		return nil
	case <-time.After(10 * time.Second):
	}
	_ = syscall.Kill(d.Pid, syscall.SIGKILL)
	select {
	case <-d.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("runtime/containerd: daemon %d does not die", d.Pid)
	}
}

// SocketAnswers reports whether a unix socket accepts a connection within
// a second.
func SocketAnswers(ctx context.Context, path string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var dl net.Dialer
	c, err := dl.DialContext(ctx, "unix", path)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// running reports whether pid is a live process (not a zombie: a
// re-parented process may never be reaped where init does not reap).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
