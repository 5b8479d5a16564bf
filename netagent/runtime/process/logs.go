package process

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/skiff-dev/skiff/netagent/runtime"
)

// Logs copies the container's log file (stdout and stderr, as written) to
// w. With follow it keeps copying what is appended, polling every
// Config.LogPollInterval, until the container has exited and its output is
// drained (nil) or ctx is done (nil: the reader went away).
func (r *Runtime) Logs(ctx context.Context, id string, follow bool, w io.Writer) error {
	_, st, err := r.lookup(id)
	if err != nil {
		return err
	}
	f, err := os.Open(st.LogPath)
	if err != nil {
		return fmt.Errorf("runtime/process: logs of %s: %w", id, err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return fmt.Errorf("runtime/process: logs of %s: %w", id, err)
	}
	if !follow {
		return nil
	}
	tick := time.NewTicker(r.cfg.LogPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		// Look at the state before copying: what an exited process wrote
		// is all in the file by then.
		_, st, err := r.lookup(id)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, f); err != nil {
			return fmt.Errorf("runtime/process: logs of %s: %w", id, err)
		}
		if st.State != runtime.StateRunning {
			return nil
		}
	}
}
