package proxy

import (
	"context"
	"time"
)

// runner coalesces sync requests, like kube-proxy's BoundedFrequencyRunner:
// at most one run per minInterval, at least one (periodic) run per
// maxInterval, and after a failure a retry with a back-off from minInterval
// doubling up to maxInterval. Runs happen on the goroutine that called
// loop, one at a time.
type runner struct {
	minInterval time.Duration
	maxInterval time.Duration
	// fn runs one sync; periodic is true when the run is the periodic one.
	fn   func(ctx context.Context, periodic bool) error
	wake chan struct{}
}

func newRunner(minInterval, maxInterval time.Duration, fn func(context.Context, bool) error) *runner {
	return &runner{minInterval: minInterval, maxInterval: maxInterval, fn: fn, wake: make(chan struct{}, 1)}
}

// request asks for a run; it never blocks.
func (r *runner) request() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// loop runs fn once at once (periodic), then as requested, until ctx ends.
func (r *runner) loop(ctx context.Context) {
	var (
		lastRun, lastPeriodic time.Time
		retryAt               time.Time
		backoff               = r.minInterval
		pending               = true
		first                 = true
	)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		now := time.Now()
		next := lastPeriodic.Add(r.maxInterval)
		if first {
			next = now
		}
		if pending {
			if at := lastRun.Add(r.minInterval); at.Before(next) {
				next = at
			}
		}
		if !retryAt.IsZero() && retryAt.Before(next) {
			next = retryAt
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(max(next.Sub(now), 0))
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
			pending = true
			continue
		case <-timer.C:
		}
		now = time.Now()
		periodic := first || !now.Before(lastPeriodic.Add(r.maxInterval))
		due := periodic || (pending && !now.Before(lastRun.Add(r.minInterval))) ||
			(!retryAt.IsZero() && !now.Before(retryAt))
		if !due {
			continue
		}
		first = false
		pending = false
		lastRun = now
		if periodic {
			lastPeriodic = now
		}
		if err := r.fn(ctx, periodic); err != nil {
			if ctx.Err() != nil {
				return
			}
			retryAt = time.Now().Add(backoff)
			backoff = min(2*backoff, r.maxInterval)
			continue
		}
		retryAt = time.Time{}
		backoff = r.minInterval
	}
}
