package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// openStdin makes the FIFO at path that is a container's stdin (spec
// stdin: true) and returns the runtime's end (write, non-blocking, in
// Go's poller so Close ends a blocked write) and the child's (read,
// blocking). Without once the child's end is opened read-write: the
// container never sees EOF, so its stdin outlives any attach session and
// the agent (a restarted agent opens the FIFO again). With once it is
// read-only: the runtime's end is the only writer and closing it is the
// container's EOF (upstream's stdinOnce), which an agent restart also
// brings (New marks such a stdin closed).
func openStdin(path string, once bool) (w, child *os.File, err error) {
	if err := unix.Mkfifo(path, 0o600); err != nil {
		return nil, nil, err
	}
	wfd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(path)
		return nil, nil, err
	}
	mode := unix.O_RDWR
	if once {
		mode = unix.O_RDONLY // a writer exists: the open does not block
	}
	cfd, err := unix.Open(path, mode|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(wfd)
		os.Remove(path)
		return nil, nil, err
	}
	return os.NewFile(uintptr(wfd), path), os.NewFile(uintptr(cfd), path), nil
}

// closeStdinLocked closes the runtime's end of the stdin FIFO; r.mu is
// held.
func (c *container) closeStdinLocked() {
	if c.stdinW != nil {
		_ = c.stdinW.Close()
		c.stdinW = nil
	}
}

// AttachStdin copies stdin into the running container's stdin until
// stdin ends (its EOF or error; ctx is the caller's to end stdin). It is
// runtime.ErrNoStdin for a container not started with stdin. Several
// sessions may write at once (their writes interleave, as on the
// kubelet). With StdinOnce, the end of the first session's stdin closes
// the container's stdin (it reads EOF); later sessions' stdin is read and
// dropped, as the CRI does with a closed stdin.
func (r *Runtime) AttachStdin(ctx context.Context, id string, stdin io.Reader) error {
	c, st, err := r.lookup(id)
	if err != nil {
		return err
	}
	if st.State != runtime.StateRunning {
		return fmt.Errorf("runtime/process: attach to %s: %w", id, runtime.ErrNotRunning)
	}
	r.mu.Lock()
	if c.rec.StdinPath == "" {
		r.mu.Unlock()
		return fmt.Errorf("runtime/process: attach to %s: %w", id, runtime.ErrNoStdin)
	}
	if c.rec.StdinClosed {
		r.mu.Unlock()
		_, err := io.Copy(io.Discard, stdin)
		return err
	}
	if c.stdinW == nil {
		// Adopted after a restart: the container holds the FIFO open for
		// reading, so a non-blocking open for writing succeeds.
		fd, err := unix.Open(c.rec.StdinPath, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			r.mu.Unlock()
			return fmt.Errorf("runtime/process: attach to %s: open stdin: %w", id, err)
		}
		c.stdinW = os.NewFile(uintptr(fd), c.rec.StdinPath)
	}
	w := c.stdinW
	once := c.rec.StdinOnce
	r.mu.Unlock()

	_, err = io.Copy(w, stdin)
	if errors.Is(err, os.ErrClosed) {
		err = nil // closed by another session's end (stdinOnce), an exit or Remove
	}
	if once {
		r.mu.Lock()
		if !c.rec.StdinClosed && !c.removed {
			c.rec.StdinClosed = true
			if serr := r.save(&c.rec); serr != nil {
				r.log.Error("runtime/process: saving stdin's end", "id", id, "err", serr)
			}
		}
		c.closeStdinLocked()
		r.mu.Unlock()
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("runtime/process: attach to %s: stdin: %w", id, err)
	}
	return nil
}
