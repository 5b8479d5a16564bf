package logdriver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// LogCommand is the hidden subcommand of the skiff binary that serves as
// the shim's logging binary: the shim runs `<Config.LoggerBinary>
// containerd-log <log file>` (containerd's binary:// log scheme) with the
// container's stdout and stderr pipes. cmd/skiff wires it to RunLogger.
const LogCommand = "containerd-log"

// loggerDrainGrace bounds how long the logger keeps reading after the
// shim asked it to stop (SIGTERM, sent once the shim closed its ends of
// the pipes): what is still in the pipes is written first.
const loggerDrainGrace = 5 * time.Second

// RunLogger is the body of `skiff containerd-log PATH`, the logging binary
// of containerd's binary:// protocol (see
// github.com/containerd/containerd/v2/core/runtime/v2/logging): the shim
// passes the container's stdout and stderr as file descriptors 3 and 4
// and a readiness pipe as 5. RunLogger opens PATH (append, created 0644,
// its directory too), signals readiness, and appends both streams to it
// until both pipes are closed. ctx ending (the shim's SIGTERM) stops it
// after what is left in the pipes is copied, or after loggerDrainGrace.
func RunLogger(ctx context.Context, args []string) error {
	if len(args) != 1 || args[0] == "" {
		return fmt.Errorf("%s: want one argument, the log file (got %q)", LogCommand, args)
	}
	stdout, stderr, wait := os.NewFile(3, "CONTAINER_STDOUT"), os.NewFile(4, "CONTAINER_STDERR"), os.NewFile(5, "CONTAINER_WAIT")
	for _, f := range []*os.File{stdout, stderr, wait} {
		if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			return fmt.Errorf("%s: file descriptors 3, 4 and 5 are not pipes: not started by a containerd shim", LogCommand)
		}
	}
	ready := func() error {
		if _, err := wait.Write([]byte{0}); err != nil {
			wait.Close()
			return err
		}
		return wait.Close()
	}
	if err := copyLogs(ctx, args[0], stdout, stderr, ready); err != nil {
		return fmt.Errorf("%s: %w", LogCommand, err)
	}
	return nil
}

// copyLogs appends stdout and stderr to the file at path through one
// file and a mutex: each chunk read from a pipe is one write(2), so what
// a process writes at once (up to PIPE_BUF, 4 KiB, is atomic in the pipe)
// never interleaves with the other stream. ready is called once the file
// is open. A failed write does not stop the copy: the pipes are drained
// so that the container never blocks on a full pipe, and the first error
// is returned once both end.
func copyLogs(ctx context.Context, path string, stdout, stderr io.Reader, ready func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("log dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	defer f.Close()
	if err := ready(); err != nil {
		return fmt.Errorf("signal ready: %w", err)
	}
	var (
		mu       sync.Mutex
		firstErr error
	)
	write := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr != nil {
			return
		}
		if _, err := f.Write(b); err != nil {
			firstErr = fmt.Errorf("write %s: %w", path, err)
		}
	}
	done := make(chan struct{}, 2)
	pump := func(name string, r io.Reader) {
		defer func() { done <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				write(buf[:n])
			}
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("read %s: %w", name, err)
					}
					mu.Unlock()
				}
				return
			}
		}
	}
	go pump("stdout", stdout)
	go pump("stderr", stderr)
	var grace <-chan time.Time
	for pending := 2; pending > 0; {
		select {
		case <-done:
			pending--
		case <-ctx.Done():
			if grace == nil {
				grace = time.After(loggerDrainGrace)
			}
			ctx = context.Background()
		case <-grace:
			mu.Lock()
			defer mu.Unlock()
			return errors.Join(firstErr, fmt.Errorf("pipes still open %s after the shim asked to stop", loggerDrainGrace))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return firstErr
}
