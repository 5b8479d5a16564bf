package workqueue

import (
	"context"
	"log/slog"
)

// Run is a controller worker: it takes keys from q until ShutDown and
// calls sync for each. A success Forgets the key's failures; a failure
// (while ctx is live) logs a warning and re-adds the key with back-off;
// a failure because ctx ended does neither. keyName names the key in the
// log ("node", "service", ...). Controllers whose syncs ask for a later
// look or give up after retries keep their own loop.
func Run[K comparable](ctx context.Context, q *Queue[K], sync func(context.Context, K) error, log *slog.Logger, keyName string) {
	for {
		key, ok := q.Get()
		if !ok {
			return
		}
		err := sync(ctx, key)
		switch {
		case err == nil:
			q.Forget(key)
		case ctx.Err() != nil:
		default:
			log.Warn("sync failed, retrying", keyName, key, "retries", q.NumRequeues(key), "err", err)
			q.AddRateLimited(key)
		}
		q.Done(key)
	}
}
