package logtail

import (
	"context"
	"io"
	"time"
)

// Phase is where a container's output stands.
type Phase int

const (
	// Writing: the container runs (or is about to): more may come.
	Writing Phase = iota
	// Draining: the container exited, but what writes its log (a
	// containerd shim's logging binary) may still append what it wrote
	// last: one more interval, then the last copy.
	Draining
	// Done: every byte is in the file: the last copy.
	Done
)

// PhaseFunc reports the container's phase.
type PhaseFunc func(ctx context.Context) (Phase, error)

// Options of Copy.
type Options struct {
	// Follow keeps copying what is appended until the output is complete;
	// false copies what is there and returns.
	Follow bool
	// Interval is how often a following Copy looks for new output.
	Interval time.Duration
	// Phase reports the container's phase, before each copy while
	// following.
	Phase PhaseFunc
}

// Copy copies r (an open log file) to w, then, with o.Follow, keeps
// copying what is appended, looking every o.Interval, until o.Phase
// reports the output complete.
func Copy(ctx context.Context, w io.Writer, r io.Reader, o Options) error {
	if _, err := io.Copy(w, r); err != nil {
		return err
	}
	if !o.Follow {
		return nil
	}
	tick := time.NewTicker(o.Interval)
	defer tick.Stop()
	wait := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
			return true
		}
	}
	for {
		if !wait() {
			return nil
		}
		ph, err := o.Phase(ctx)
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, r); err != nil {
			return err
		}
		switch ph {
		case Done:
			return nil
		case Draining:
			if !wait() {
				return nil
			}
			_, err := io.Copy(w, r)
			return err
		}
	}
}
