package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// outputGrace is how long ExecStream waits, once the command has exited,
// for the rest of its output (a background child may keep the pipe or
// the terminal open); then the command's process group is killed.
const outputGrace = time.Second

// ExecStream runs cmd in a running container as Exec does (its net, uts
// and mount namespaces, environment and working dir, through the helper),
// with the caller's streams: pipes for stdin, stdout and stderr, or, with
// s.TTY, a pseudo-terminal (creack/pty) that is the command's controlling
// terminal (a new session; Resize sets its size). It returns the command's
// exit code (128+N for signal N). When ctx ends the command's process
// group is killed and ctx's error returned. Once the command has exited
// the rest of its process group is killed too (after outputGrace for the
// output), so an exec leaves nothing running in the container.
func (r *Runtime) ExecStream(ctx context.Context, id string, cmd []string, s runtime.Streams) (int, error) {
	if len(cmd) == 0 {
		return -1, fmt.Errorf("runtime/process: exec in %s: empty command", id)
	}
	c, st, err := r.lookup(id)
	if err != nil {
		return -1, err
	}
	if st.State != runtime.StateRunning {
		return -1, fmt.Errorf("runtime/process: exec in %s: %w", id, runtime.ErrNotRunning)
	}
	r.mu.Lock()
	opts := initOptions{workdir: c.rec.WorkingDir, joinPid: c.rec.Pid, joinTicks: c.rec.StartTicks, syncFD: syncFD, creds: c.rec.Creds}
	env, cg := c.rec.Env, c.rec.Cgroup
	r.mu.Unlock()

	ec := exec.CommandContext(ctx, r.cfg.HelperPath, opts.args(cmd)...)
	ec.Env = env
	ec.Cancel = func() error {
		killGroup(ec.Process.Pid, unix.SIGKILL)
		return nil
	}
	var closeAfterStart []*os.File // the child's ends
	var readers []*os.File         // our ends of its output
	var stdinW *os.File
	defer func() {
		for _, f := range closeAfterStart {
			_ = f.Close()
		}
	}()
	outputs := make(chan struct{}, 2)
	copyOut := func(dst io.Writer, src *os.File) {
		if dst == nil {
			dst = io.Discard
		}
		go func() {
			_, _ = io.Copy(dst, src)
			outputs <- struct{}{}
		}()
	}
	if s.TTY {
		ptmx, tty, err := pty.Open()
		if err != nil {
			return -1, fmt.Errorf("runtime/process: exec in %s: open a terminal: %w", id, err)
		}
		defer ptmx.Close()
		closeAfterStart = append(closeAfterStart, tty)
		ec.Stdin, ec.Stdout, ec.Stderr = tty, tty, tty
		ec.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if s.Resize != nil {
			s.Resize(func(sz runtime.TerminalSize) {
				_ = pty.Setsize(ptmx, &pty.Winsize{Rows: sz.Height, Cols: sz.Width})
			})
		}
		readers = append(readers, ptmx)
		stdinW = ptmx
	} else {
		ec.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if s.Stdin != nil {
			pr, pw, err := os.Pipe()
			if err != nil {
				return -1, err
			}
			closeAfterStart = append(closeAfterStart, pr)
			defer pw.Close()
			ec.Stdin, stdinW = pr, pw
		}
		for _, o := range []struct {
			set *io.Writer
		}{{&ec.Stdout}, {&ec.Stderr}} {
			pr, pw, err := os.Pipe()
			if err != nil {
				return -1, err
			}
			defer pr.Close()
			closeAfterStart = append(closeAfterStart, pw)
			*o.set = pw
			readers = append(readers, pr)
		}
	}
	if err := r.startHelper(ctx, ec, cg); err != nil {
		if ctx.Err() != nil {
			return -1, fmt.Errorf("runtime/process: exec in %s: %w", id, ctx.Err())
		}
		return -1, fmt.Errorf("runtime/process: exec in %s: %w", id, err)
	}
	for _, f := range closeAfterStart {
		_ = f.Close()
	}
	closeAfterStart = nil
	if s.TTY {
		copyOut(s.Stdout, readers[0])
	} else {
		copyOut(s.Stdout, readers[0])
		copyOut(s.Stderr, readers[1])
	}
	if s.Stdin != nil && stdinW != nil {
		go func() {
			_, _ = io.Copy(stdinW, s.Stdin)
			if !s.TTY {
				_ = stdinW.Close() // EOF for the command
			}
		}()
	}
	werr := ec.Wait()
	timer := time.NewTimer(outputGrace)
	defer timer.Stop()
	for range readers {
		select {
		case <-outputs:
		case <-timer.C:
		}
	}
	// The group outlives its leader only while a member lives (a pgid is
	// not reused meanwhile); never the pid alone, which may be reused.
	_ = unix.Kill(-ec.Process.Pid, unix.SIGKILL)
	if ctx.Err() != nil {
		return -1, fmt.Errorf("runtime/process: exec in %s: %v: %w", id, cmd, ctx.Err())
	}
	if ec.ProcessState == nil {
		return -1, fmt.Errorf("runtime/process: exec in %s: %w", id, werr)
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return -1, fmt.Errorf("runtime/process: exec in %s: %w", id, werr)
	}
	return exitStatus(ec.ProcessState), nil
}
