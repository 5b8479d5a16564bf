package store

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// updateReq is one Update waiting for the commit loop.
type updateReq struct {
	ctx  context.Context
	fn   func(Txn) error
	done chan updateResult // capacity 1: the loop never blocks on a reply
}

// updateResult is the commit loop's answer to one Update.
type updateResult struct {
	rev      int64
	err      error
	panicked bool
	panicVal any
}

// Update runs fn in a write transaction and commits it, sharing the disk
// transaction and fsync with concurrent Updates (group commit).
//
// If ctx ends before fn runs, Update returns ctx.Err() and writes nothing.
// Once fn has run, Update waits for the commit's outcome even if ctx ends,
// so its answer is never ambiguous. fn runs on the store's commit goroutine:
// it must not call the store's methods (that deadlocks) and should be quick,
// since it delays every other writer. A panic in fn is re-raised in the
// caller's goroutine and writes nothing.
func (s *Bolt) Update(ctx context.Context, fn func(Txn) error) (int64, error) {
	if fn == nil {
		return 0, errors.New("store: update: nil function")
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	req := &updateReq{ctx: ctx, fn: fn, done: make(chan updateResult, 1)}
	select {
	case s.reqs <- req:
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-s.stop:
		return 0, ErrClosed
	}
	res := <-req.done
	if res.panicked {
		panic(res.panicVal)
	}
	return res.rev, res.err
}

// run is the commit loop: the single owner of every write.
func (s *Bolt) run() {
	defer close(s.loopDone)
	batch := make([]*updateReq, 0, maxBatch)
	for {
		batch = batch[:0]
		select {
		case <-s.stop:
			return
		case r := <-s.reqs:
			batch = append(batch, r)
		}
	drain:
		for len(batch) < maxBatch {
			select {
			case r := <-s.reqs:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		s.commitBatch(batch)
	}
}

// commitBatch runs the closures of batch in one disk transaction, commits
// it, publishes the events and answers every request.
func (s *Bolt) commitBatch(batch []*updateReq) {
	results := make([]updateResult, len(batch))
	reply := func() {
		for i, r := range batch {
			r.done <- results[i]
		}
	}
	// failAll fails every request that would have committed (or read what
	// the batch wrote); a closure's own error or panic stands.
	failAll := func(err error) {
		for i := range results {
			if !results[i].panicked && results[i].err == nil {
				results[i] = updateResult{err: err}
			}
		}
		reply()
	}

	tx, err := s.db.Begin(true)
	if err != nil {
		s.log.Error("store: begin write transaction", "err", err)
		failAll(fmt.Errorf("store: update: %w", err))
		return
	}
	// FillPercent belongs to this transaction's bucket handles, which
	// every Txn of the batch shares.
	tx.Bucket(bucketLog).FillPercent = logFillPercent
	tx.Bucket(bucketKV).FillPercent = kvFillPercent
	rev, compacted, logBytes := s.rev, s.compacted, s.logBytes
	var events []Event // every event of the batch, in revision order
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			results[i].err = err
			continue
		}
		t := newBoltTxn(tx, rev+1)
		p, err := runClosure(r.fn, t)
		t.finish()
		switch {
		case p != nil:
			results[i] = updateResult{panicked: true, panicVal: p.val}
			s.log.Error("store: update closure panicked", "panic", fmt.Sprint(p.val), "stack", string(p.stack))
			continue
		case err != nil:
			results[i].err = err
			continue
		}
		evs, size, err := t.apply()
		if err != nil {
			// A partial apply cannot be undone inside the disk transaction:
			// the whole batch fails.
			_ = tx.Rollback()
			s.log.Error("store: apply transaction", "revision", rev+1, "err", err)
			failAll(fmt.Errorf("store: update: %w", err))
			return
		}
		if len(evs) == 0 {
			results[i].rev = rev
			continue
		}
		rev++
		results[i].rev = rev
		logBytes += size
		events = append(events, evs...)
	}

	if rev == s.rev {
		// Nothing written: no disk commit, no fsync.
		_ = tx.Rollback()
		reply()
		return
	}
	compacted, logBytes, err = s.finishBatch(tx, rev, compacted, logBytes)
	if err == nil && s.commitFailpoint != nil {
		err = s.commitFailpoint()
	}
	if err == nil {
		err = tx.Commit()
	} else {
		_ = tx.Rollback()
	}
	if err != nil {
		s.log.Error("store: commit", "revisions", fmt.Sprintf("%d..%d", s.rev+1, rev), "err", err)
		failAll(fmt.Errorf("store: commit: %w", err))
		return
	}
	s.rev, s.compacted, s.logBytes = rev, compacted, logBytes
	s.committed.Store(rev)
	s.compactedRev.Store(compacted)
	if s.commitHook != nil {
		s.commitHook(rev)
	}
	// Publish before replying: a caller that has its revision can watch
	// from it at once.
	s.hub.publish(events, rev)
	reply()
}

// finishBatch records the batch's last revision and trims the log, oldest
// first, to the last historySize revisions and then, while it is over
// historyBytes, further (but never into the last minHistory revisions),
// deleting at most maxCompactPerBatch entries. logBytes is the log's size
// with the batch's entries. It returns the new compacted revision and log
// size.
func (s *Bolt) finishBatch(tx *bolt.Tx, rev, compacted, logBytes int64) (int64, int64, error) {
	meta := tx.Bucket(bucketMeta)
	if err := putMetaInt(meta, metaRev, rev); err != nil {
		return 0, 0, err
	}
	byCount := rev - s.historySize                       // compact at least to here
	floor := rev - min(s.historySize, int64(minHistory)) // and by size at most to here
	logb := tx.Bucket(bucketLog)
	target := compacted
	for target < compacted+maxCompactPerBatch {
		r := target + 1
		if r > byCount && (logBytes <= s.historyBytes || r > floor) {
			break
		}
		k := revKey(r)
		v := logb.Get(k)
		if v == nil {
			return 0, 0, fmt.Errorf("%w: log has no revision %d to compact", errCorrupt, r)
		}
		logBytes -= int64(len(v))
		if err := logb.Delete(k); err != nil {
			return 0, 0, err
		}
		target = r
	}
	if target > compacted {
		if err := putMetaInt(meta, metaCompacted, target); err != nil {
			return 0, 0, err
		}
	}
	if err := putMetaLogBytes(meta, rev, logBytes); err != nil {
		return 0, 0, err
	}
	return target, logBytes, nil
}

// closurePanic is a panic recovered from an Update closure.
type closurePanic struct {
	val   any
	stack []byte
}

// runClosure calls fn, turning a panic into a value for the caller.
func runClosure(fn func(Txn) error, t *boltTxn) (p *closurePanic, err error) {
	defer func() {
		if v := recover(); v != nil {
			p, err = &closurePanic{val: v, stack: debug.Stack()}, nil
		}
	}()
	return nil, fn(t)
}
