package process

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// maxExecOutput bounds what Exec keeps of a command's output; the rest is
// read and dropped so the command never blocks on a full pipe.
const maxExecOutput = 1 << 20

// Exec runs cmd inside a running container: in its network, UTS and mount
// namespaces (so it sees the pod's /etc/resolv.conf and /etc/hosts), with
// its environment and working directory, in a process group of its own. It
// returns the exit code (128+N if killed by signal N) and the combined
// stdout and stderr (at most 1 MiB). After timeout (0: none) or when ctx
// is done, the group is killed and Exec returns exit code -1 with an error
// wrapping context.DeadlineExceeded (or ctx's error). A command that cannot
// be started (not found, container gone) is an error with exit code -1.
func (r *Runtime) Exec(ctx context.Context, id string, cmd []string, timeout time.Duration) (int, []byte, error) {
	if len(cmd) == 0 {
		return -1, nil, fmt.Errorf("runtime/process: exec in %s: empty command", id)
	}
	c, st, err := r.lookup(id)
	if err != nil {
		return -1, nil, err
	}
	if st.State != runtime.StateRunning {
		return -1, nil, fmt.Errorf("runtime/process: exec in %s: %w", id, runtime.ErrNotRunning)
	}
	r.mu.Lock()
	opts := initOptions{workdir: c.rec.WorkingDir, joinPid: c.rec.Pid, joinTicks: c.rec.StartTicks, syncFD: syncFD, creds: c.rec.Creds}
	env, cg := c.rec.Env, c.rec.Cgroup
	r.mu.Unlock()

	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	out := &limitedBuffer{max: maxExecOutput}
	ec := exec.CommandContext(ctx, r.cfg.HelperPath, opts.args(cmd)...)
	ec.Env = env
	ec.Stdout = out
	ec.Stderr = out
	ec.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ec.Cancel = func() error {
		killGroup(ec.Process.Pid, unix.SIGKILL)
		return nil
	}
	// A background child that keeps the output pipe open does not hold
	// Exec for longer than this after the command exited.
	ec.WaitDelay = time.Second
	if err := r.startHelper(ctx, ec, cg); err != nil {
		if ctx.Err() != nil {
			return -1, out.Bytes(), fmt.Errorf("runtime/process: exec in %s: %w", id, ctx.Err())
		}
		return -1, out.Bytes(), fmt.Errorf("runtime/process: exec in %s: %w", id, err)
	}
	werr := ec.Wait()
	if ctx.Err() != nil {
		return -1, out.Bytes(), fmt.Errorf("runtime/process: exec in %s: %v: %w", id, cmd, ctx.Err())
	}
	if ec.ProcessState == nil {
		return -1, out.Bytes(), fmt.Errorf("runtime/process: exec in %s: %w", id, werr)
	}
	return exitStatus(ec.ProcessState), out.Bytes(), nil
}

// limitedBuffer keeps the first max bytes written and drops the rest,
// reporting every write as complete. exec.Cmd serialises writes when
// Stdout == Stderr.
type limitedBuffer struct {
	buf []byte
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *limitedBuffer) Bytes() []byte { return b.buf }
