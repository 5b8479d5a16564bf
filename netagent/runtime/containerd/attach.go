package containerd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	ctrd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/errdefs"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/containerd/logdriver"
)

// stdinPath is the stdin FIFO of container id (spec stdin: true):
// <LogRoot>/.stdin/<id>.
func (r *Runtime) stdinPath(id string) string {
	return filepath.Join(r.cfg.LogRoot, ".stdin", id)
}

// stdinIO is the task's IO of a container started with stdin: the FIFO
// at stdinPath as stdin, which the shim opens for reading and, to close
// it on CloseIO, for writing (so the end of one attach's writer is not
// the container's EOF, and an agent restart does not touch it). With a
// terminal, the shim's console copier takes stdin and hands the output
// to the logging binary as without stdin. Without one, the binary scheme
// would give the process no stdin (the shim copies stdin only for fifo
// and file URIs), so the shim's own file logging is used: the log file
// is written by the shim (its copyPipes may lose the last stderr line
// when stdout ends first: see the package doc).
func (r *Runtime) stdinIO(stdinPath, logPath string, tty bool) cio.Creator {
	return func(string) (cio.IO, error) {
		if err := unix.Mkfifo(stdinPath, 0o600); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("stdin fifo: %w", err)
		}
		scheme, args := "file", map[string]string(nil)
		if tty {
			scheme, args = "binary", map[string]string{logdriver.LogCommand: logPath}
		}
		target := logPath
		if tty {
			target = r.cfg.LoggerBinary
		}
		uri, err := cio.LogURIGenerator(scheme, target, args)
		if err != nil {
			return nil, err
		}
		return &configIO{cfg: cio.Config{Stdin: stdinPath, Stdout: uri.String(), Stderr: uri.String(), Terminal: tty}}, nil
	}
}

// configIO is a cio.IO that is only its Config: the shim does the
// copying.
type configIO struct{ cfg cio.Config }

func (c *configIO) Config() cio.Config { return c.cfg }
func (c *configIO) Cancel()            {}
func (c *configIO) Wait()              {}
func (c *configIO) Close() error       { return nil }

// AttachStdin copies stdin into the running container's stdin (its FIFO,
// opened for this session) until stdin ends. It is runtime.ErrNoStdin
// for a container not started with stdin. With stdinOnce the end of the
// first session's stdin closes the container's (CloseIO, as the CRI
// plugin does); later sessions' stdin is read and dropped.
func (r *Runtime) AttachStdin(ctx context.Context, id string, stdin io.Reader) error {
	ctx = r.ctx(ctx)
	ctr, info, err := r.load(ctx, id)
	if err != nil {
		return err
	}
	path := info.Labels[LabelStdin]
	if path == "" {
		return fmt.Errorf("runtime/containerd: attach to %s: %w", id, runtime.ErrNoStdin)
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return fmt.Errorf("runtime/containerd: attach to %s: %w", id, runtime.ErrNotRunning)
		}
		return fmt.Errorf("runtime/containerd: attach to %s: %w", id, err)
	}
	if info.Labels[LabelStdinClosed] == "true" {
		_, err := io.Copy(io.Discard, stdin)
		return err
	}
	// The shim holds the FIFO open for reading: a non-blocking open for
	// writing succeeds; in Go's poller, a write to a stalled reader
	// blocks only this session.
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("runtime/containerd: attach to %s: open stdin: %w", id, err)
	}
	w := os.NewFile(uintptr(fd), path)
	_, err = io.Copy(w, stdin)
	_ = w.Close()
	if info.Labels[LabelStdinOnce] == "true" {
		dctx := context.WithoutCancel(ctx)
		if _, lerr := ctr.SetLabels(dctx, map[string]string{LabelStdinClosed: "true"}); lerr != nil {
			r.log.Debug("runtime/containerd: label stdin closed", "id", id, "err", lerr)
		}
		if cerr := task.CloseIO(dctx, ctrd.WithStdinCloser); cerr != nil && !errdefs.IsNotFound(cerr) {
			return fmt.Errorf("runtime/containerd: attach to %s: close stdin: %w", id, cerr)
		}
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("runtime/containerd: attach to %s: stdin: %w", id, err)
	}
	return nil
}

// ResizeTerminal sets the size of the terminal of a container started
// with tty: true (the task's Resize).
func (r *Runtime) ResizeTerminal(ctx context.Context, id string, sz runtime.TerminalSize) error {
	ctx = r.ctx(ctx)
	ctr, _, err := r.load(ctx, id)
	if err != nil {
		return err
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		return fmt.Errorf("runtime/containerd: resize %s: %w", id, err)
	}
	return task.Resize(ctx, uint32(sz.Width), uint32(sz.Height))
}
