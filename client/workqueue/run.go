package workqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Options tune Run. The zero value runs one worker that retries a failing
// key forever and logs nowhere.
type Options[K comparable] struct {
	// Workers is how many goroutines call sync; at most one of them holds
	// a given key (see Queue). 0 means 1.
	Workers int
	// MaxRetries is how many times in a row a key's sync may fail and be
	// retried; the next failure drops it: Run logs it at Error and Forgets
	// it, and the key comes back with its next Add (upstream's handleErr
	// with maxRetries). 0 means retry without limit.
	MaxRetries int
	// Log receives a line per failed sync; nil logs nowhere.
	Log *slog.Logger
	// KeyName names the key in log lines ("service", "node", ...);
	// default "key".
	KeyName string
	// RetryLevel is the level of the line logged for a failure that is
	// retried, so that expected ones (a conflict with a stale cache, the
	// first few retries) can stay at Debug; nil means Warn for every one.
	RetryLevel func(f Failure[K]) slog.Level
	// OnError, when set, is called for every failed sync while ctx is
	// live, before the key is retried or dropped: a controller records an
	// Event or a condition here, or clears state it keeps for the key when
	// it is dropped. It runs on the worker that holds the key.
	OnError func(ctx context.Context, f Failure[K])
}

// Failure is one failed sync, as OnError sees it.
type Failure[K comparable] struct {
	Key K
	Err error
	// Retries is the number of failures of the key in a row before this
	// one.
	Retries int
	// Dropped is set when MaxRetries is reached: the key is forgotten
	// instead of retried.
	Dropped bool
}

// RequeueAfter is what a sync returns to have its key looked at again
// after d although nothing changed (a deadline, a pod that becomes
// available later): Run counts it as a success (the key's failures are
// forgotten) and adds the key after d; d <= 0 adds it at once. An earlier
// Add of the key still syncs it earlier.
func RequeueAfter(d time.Duration) error { return &requeueAfter{d} }

type requeueAfter struct{ d time.Duration }

func (r *requeueAfter) Error() string { return fmt.Sprintf("workqueue: requeue after %v", r.d) }

// ErrHandedOff is what a sync returns when it passed its key's work on to
// another goroutine that settles the key later itself (Forget on success,
// AddRateLimited on failure; the scheduler's bind workers do this): Run
// then neither forgets the key's failures nor retries it.
var ErrHandedOff = errors.New("workqueue: work handed off")

// Run is the worker loop of a controller: Workers goroutines take keys
// from q and call syncKey for each, until ctx ends or q is shut down. When
// ctx ends Run shuts q down; it returns once every worker has finished its
// sync in flight, so nothing it started outlives it.
//
// What a sync's result does:
//   - nil: the key's failures are forgotten.
//   - RequeueAfter(d): the same, and the key is added again after d.
//   - ErrHandedOff: nothing; another goroutine settles the key.
//   - another error while ctx is live: OnError is called, then the key is
//     re-added with back-off (AddRateLimited), or dropped once it has
//     been retried MaxRetries times in a row. An error once ctx has ended is the
//     shutdown's doing: it is neither logged nor retried.
func Run[K comparable](ctx context.Context, q *Queue[K], syncKey func(context.Context, K) error, opts Options[K]) {
	stop := context.AfterFunc(ctx, q.ShutDown)
	defer stop()
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.KeyName == "" {
		opts.KeyName = "key"
	}
	var wg sync.WaitGroup
	for range max(opts.Workers, 1) {
		wg.Go(func() {
			for {
				key, ok := q.Get()
				if !ok {
					return
				}
				if ctx.Err() != nil { // ShutDown is on its way
					q.Done(key)
					return
				}
				handle(ctx, q, key, syncKey(ctx, key), &opts)
				q.Done(key)
			}
		})
	}
	wg.Wait()
}

// handle carries out the result err of key's sync; see Run.
func handle[K comparable](ctx context.Context, q *Queue[K], key K, err error, opts *Options[K]) {
	var after *requeueAfter
	switch {
	case err == nil:
		q.Forget(key)
		return
	case errors.As(err, &after):
		q.Forget(key)
		q.AddAfter(key, after.d)
		return
	case errors.Is(err, ErrHandedOff), ctx.Err() != nil:
		return
	}
	f := Failure[K]{Key: key, Err: err, Retries: q.NumRequeues(key)}
	f.Dropped = opts.MaxRetries > 0 && f.Retries >= opts.MaxRetries
	if opts.OnError != nil {
		opts.OnError(ctx, f)
	}
	if f.Dropped {
		opts.Log.Error("sync failed too often, dropping until the next change", opts.KeyName, key, "retries", f.Retries, "err", err)
		q.Forget(key)
		return
	}
	level := slog.LevelWarn
	if opts.RetryLevel != nil {
		level = opts.RetryLevel(f)
	}
	opts.Log.Log(ctx, level, "sync failed, retrying", opts.KeyName, key, "retries", f.Retries, "err", err)
	q.AddRateLimited(key)
}
