package process

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/skiff-dev/skiff/netagent/runtime"
	"github.com/skiff-dev/skiff/netagent/runtime/logtail"
)

// Logs copies the container's log file (stdout and stderr, as written) to
// w. With follow it keeps copying what is appended, polling every
// Config.LogPollInterval, until the container has exited and its output is
// drained (nil) or ctx is done (nil: the reader went away); see
// runtime/logtail.
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
	// The process writes its log file itself: once it is seen exited,
	// all it wrote is in the file.
	var stateErr error // returned as it is; copy errors are wrapped
	phase := func(context.Context) (logtail.Phase, error) {
		_, st, err := r.lookup(id)
		if err != nil {
			stateErr = err
			return 0, err
		}
		if st.State != runtime.StateRunning {
			return logtail.Done, nil
		}
		return logtail.Writing, nil
	}
	err = logtail.Copy(ctx, w, f, logtail.Options{Follow: follow, Interval: r.cfg.LogPollInterval, Phase: phase})
	if err != nil && err != stateErr {
		return fmt.Errorf("runtime/process: logs of %s: %w", id, err)
	}
	return err
}
