package containerd

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	ctrd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/errdefs"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// maxExecOutput caps what Exec keeps of a command's output (the kubelet
// keeps 10 KiB of a probe's).
const maxExecOutput = 64 << 10

// capped is a goroutine-safe buffer that keeps the first max bytes.
type capped struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// Exec runs cmd in the running container (its namespaces, root file
// system, environment and working dir) and returns its exit code and its
// combined output. After timeout (0: none) the command is killed and Exec
// returns an error wrapping context.DeadlineExceeded.
func (r *Runtime) Exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (int, []byte, error) {
	ctx = r.ctx(ctx)
	if len(cmd) == 0 {
		return -1, nil, fmt.Errorf("runtime/containerd: exec in %s: empty command", id)
	}
	ctr, _, err := r.load(ctx, id)
	if err != nil {
		return -1, nil, err
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return -1, nil, fmt.Errorf("runtime/containerd: exec in %s: %w", id, runtime.ErrNotRunning)
		}
		return -1, nil, fmt.Errorf("runtime/containerd: exec in %s: %w", id, err)
	}
	if ts, err := task.Status(ctx); err != nil || ts.Status != ctrd.Running {
		return -1, nil, fmt.Errorf("runtime/containerd: exec in %s: %w", id, runtime.ErrNotRunning)
	}
	spec, err := task.Spec(ctx)
	if err != nil {
		return -1, nil, fmt.Errorf("runtime/containerd: exec in %s: spec: %w", id, err)
	}
	pspec := *spec.Process
	pspec.Args = cmd
	pspec.Terminal = false
	execID, err := newID()
	if err != nil {
		return -1, nil, fmt.Errorf("runtime/containerd: exec in %s: %w", id, err)
	}
	execID = "exec-" + execID[:12]
	out := &capped{max: maxExecOutput}
	proc, err := task.Exec(ctx, execID, &pspec, cio.NewCreator(cio.WithStreams(nil, out, out)))
	if err != nil {
		return -1, nil, fmt.Errorf("runtime/containerd: exec in %s: %w", id, err)
	}
	dctx := context.WithoutCancel(ctx)
	defer func() {
		if _, err := proc.Delete(dctx, ctrd.WithProcessKill); err != nil && !errdefs.IsNotFound(err) {
			r.log.Debug("runtime/containerd: delete exec process", "id", id, "exec", execID, "err", err)
		}
	}()
	exited, err := proc.Wait(dctx)
	if err != nil {
		return -1, nil, fmt.Errorf("runtime/containerd: exec in %s: wait: %w", id, err)
	}
	if err := proc.Start(ctx); err != nil {
		return -1, nil, fmt.Errorf("runtime/containerd: exec in %s: %w", id, err)
	}
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	var cause error
	select {
	case st := <-exited:
		proc.IO().Wait()
		code, _, err := st.Result()
		if err != nil {
			return -1, out.bytes(), fmt.Errorf("runtime/containerd: exec in %s: %w", id, err)
		}
		return int(code), out.bytes(), nil
	case <-timer:
		cause = fmt.Errorf("runtime/containerd: exec in %s: timed out after %v: %w", id, timeout, context.DeadlineExceeded)
	case <-ctx.Done():
		cause = fmt.Errorf("runtime/containerd: exec in %s: %w", id, ctx.Err())
	}
	_ = proc.Kill(dctx, syscall.SIGKILL)
	select {
	case <-exited:
	case <-time.After(r.cfg.KillTimeout):
	}
	proc.IO().Cancel()
	return -1, out.bytes(), cause
}
