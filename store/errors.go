package store

import "errors"

var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("store: key not found")
	// ErrCompacted: the requested revision is older than the kept history.
	ErrCompacted = errors.New("store: required revision has been compacted")
	// ErrFutureRevision: the requested revision has not happened yet.
	ErrFutureRevision = errors.New("store: required revision is a future revision")
	// ErrWatcherTooSlow: a watcher fell too far behind and was dropped.
	ErrWatcherTooSlow = errors.New("store: watcher fell behind and was dropped")
	// ErrClosed: the store is closed.
	ErrClosed = errors.New("store: closed")
)

// Unexported sentinels.
var (
	// errCorrupt: a record in the database does not decode or breaks an
	// invariant of the layout.
	errCorrupt = errors.New("corrupt record")
	// errTxnDone: a Txn was used after its closure returned.
	errTxnDone = errors.New("store: transaction used after its closure returned")
	// errWatchCtxDone ends a watch whose context ended: the channel closes
	// without an EventError.
	errWatchCtxDone = errors.New("store: watch context done")
)
