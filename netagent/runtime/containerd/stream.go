package containerd

import (
	"context"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	ctrd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/errdefs"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// ExecStream runs cmd in the running container (task.Exec with the
// container's process spec: namespaces, root, env, working dir) on the
// caller's streams through cio (the shim's FIFOs), with a terminal when
// s.TTY (process spec terminal, cio.WithTerminal; Resize is
// process.Resize). EOF on stdin closes the process's stdin
// (CloseIO, as the CRI plugin does), except on a terminal, where it would
// hang the command up (SIGHUP): as on the process runtime, a terminal
// stays until the command exits. It returns the exit code; when ctx
// ends the process is killed and ctx's error returned. The exec process
// is deleted before ExecStream returns.
func (r *Runtime) ExecStream(ctx context.Context, id string, cmd []string, s runtime.Streams) (int, error) {
	ctx = r.ctx(ctx)
	if len(cmd) == 0 {
		return -1, fmt.Errorf("runtime/containerd: exec in %s: empty command", id)
	}
	ctr, _, err := r.load(ctx, id)
	if err != nil {
		return -1, err
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return -1, fmt.Errorf("runtime/containerd: exec in %s: %w", id, runtime.ErrNotRunning)
		}
		return -1, fmt.Errorf("runtime/containerd: exec in %s: %w", id, err)
	}
	if ts, err := task.Status(ctx); err != nil || ts.Status != ctrd.Running {
		return -1, fmt.Errorf("runtime/containerd: exec in %s: %w", id, runtime.ErrNotRunning)
	}
	spec, err := task.Spec(ctx)
	if err != nil {
		return -1, fmt.Errorf("runtime/containerd: exec in %s: spec: %w", id, err)
	}
	pspec := *spec.Process
	pspec.Args = cmd
	pspec.Terminal = s.TTY
	execID, err := newID()
	if err != nil {
		return -1, fmt.Errorf("runtime/containerd: exec in %s: %w", id, err)
	}
	execID = "exec-" + execID[:12]
	dctx := context.WithoutCancel(ctx)

	ready := make(chan ctrd.Process, 1)
	// stdin flows once the process runs with its terminal's size set (a
	// size the client sent before stdin must be in place when the
	// command reads that stdin).
	gate := make(chan struct{})
	var openGate sync.Once
	defer openGate.Do(func() { close(gate) })
	var stdin io.Reader
	stdinClosed := make(chan struct{}) // closed once CloseIO was sent
	if s.Stdin != nil {
		stdin = &eofCloser{r: s.Stdin, ready: ready, ctx: dctx, gate: gate, keep: s.TTY, closed: stdinClosed}
	}
	stdout, stderr := s.Stdout, s.Stderr
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	opts := []cio.Opt{cio.WithStreams(stdin, stdout, stderr)}
	if s.TTY {
		opts = append(opts, cio.WithTerminal)
	}
	proc, err := task.Exec(ctx, execID, &pspec, cio.NewCreator(opts...))
	if err != nil {
		close(ready)
		return -1, fmt.Errorf("runtime/containerd: exec in %s: %w", id, err)
	}
	ready <- proc
	close(ready)
	defer func() {
		if _, err := proc.Delete(dctx, ctrd.WithProcessKill); err != nil && !errdefs.IsNotFound(err) {
			r.log.Debug("runtime/containerd: delete exec process", "id", id, "exec", execID, "err", err)
		}
	}()
	exited, err := proc.Wait(dctx)
	if err != nil {
		proc.IO().Cancel()
		return -1, fmt.Errorf("runtime/containerd: exec in %s: wait: %w", id, err)
	}
	if err := proc.Start(ctx); err != nil {
		proc.IO().Cancel()
		return -1, fmt.Errorf("runtime/containerd: exec in %s: %w", id, err)
	}
	if s.TTY && s.Resize != nil {
		s.Resize(func(sz runtime.TerminalSize) {
			_ = proc.Resize(dctx, uint32(sz.Width), uint32(sz.Height))
		})
	}
	openGate.Do(func() { close(gate) })
	// A CloseIO the shim takes before its own stdin copy is in place can
	// be lost, leaving a command that reads to EOF waiting for ever (seen
	// once in hundreds of execs of an empty stdin): while the process runs
	// after its stdin ended, CloseIO is sent again every 2s (it is
	// idempotent).
	reclose := time.NewTicker(2 * time.Second)
	defer reclose.Stop()
	ended := stdinClosed
wait:
	select {
	case <-ended:
		ended = nil
		goto wait
	case <-reclose.C:
		if ended == nil && !s.TTY {
			_ = proc.CloseIO(dctx, ctrd.WithStdinCloser)
		}
		goto wait
	case st := <-exited:
		ioDone := make(chan struct{})
		go func() { proc.IO().Wait(); close(ioDone) }()
		select {
		case <-ioDone:
		case <-time.After(time.Second): // a background child holds the output
			proc.IO().Cancel()
			<-ioDone
		}
		code, _, err := st.Result()
		if err != nil {
			return -1, fmt.Errorf("runtime/containerd: exec in %s: %w", id, err)
		}
		return int(code), nil
	case <-ctx.Done():
	}
	_ = proc.Kill(dctx, syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(r.cfg.KillTimeout):
	}
	proc.IO().Cancel()
	return -1, fmt.Errorf("runtime/containerd: exec in %s: %w", id, ctx.Err())
}

// eofCloser passes stdin on and, at its end, closes the exec process's
// stdin (the FIFO alone does not tell the process: the shim holds it).
type eofCloser struct {
	r     io.Reader
	ready chan ctrd.Process
	ctx   context.Context
	gate  chan struct{}
	keep  bool // a terminal: stdin's end does not hang it up
	done  bool
	// closed is closed once CloseIO was sent.
	closed chan struct{}
}

func (e *eofCloser) Read(p []byte) (int, error) {
	<-e.gate
	n, err := e.r.Read(p)
	if err != nil && !e.done {
		e.done = true
		if proc, ok := <-e.ready; ok && !e.keep {
			_ = proc.CloseIO(e.ctx, ctrd.WithStdinCloser)
			close(e.closed)
		}
	}
	return n, err
}
