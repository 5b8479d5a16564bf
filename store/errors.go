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
