package store

import "context"

// KeyValue is one stored key with its value and revisions.
type KeyValue struct {
	Key            string
	Value          []byte
	CreateRevision int64 // revision of the transaction that created the key
	ModRevision    int64 // revision of the transaction that last wrote the key
}

// EventType says what happened to a key.
type EventType int

const (
	// EventPut is a create (PrevKV == nil) or an update.
	EventPut EventType = iota + 1
	// EventDelete removes a key; KV holds the last value, ModRevision is the
	// revision of the delete.
	EventDelete
	// EventProgress carries no key: every event with a revision <= Revision
	// that matches the watch has already been sent on this channel.
	EventProgress
	// EventError ends a watch; Err says why (ErrCompacted, ErrWatcherTooSlow).
	// The channel is closed after it.
	EventError
)

// Event is one change seen by a watcher.
type Event struct {
	Type     EventType
	Revision int64
	KV       KeyValue
	PrevKV   *KeyValue // the value before this event; nil on create
	Err      error
}

// Txn is the view a write closure gets. It sees the committed state plus the
// closure's own earlier writes.
type Txn interface {
	// Revision is the revision this transaction will commit at.
	Revision() int64
	// Get returns the key's current value; ok is false when absent.
	Get(key string) (kv KeyValue, ok bool, err error)
	// List returns every key with the prefix, in key order.
	List(prefix string) ([]KeyValue, error)
	// Put writes a value.
	Put(key string, value []byte) error
	// Delete removes a key; deleting an absent key is ErrNotFound.
	Delete(key string) error
}

// ListOptions narrows a List.
type ListOptions struct {
	// Limit caps the number of items; 0 means no limit.
	Limit int
	// After resumes a paginated list: only keys greater than After are returned.
	After string
}

// ListResult is one page of a List.
type ListResult struct {
	Items    []KeyValue
	Revision int64 // the store revision the page was read at
	More     bool  // more keys with the prefix follow the last item
}

// WatchOptions tune a watch.
type WatchOptions struct {
	// ProgressNotify asks for periodic EventProgress events.
	ProgressNotify bool
}

// Interface is what the API server needs from a store.
type Interface interface {
	// Get reads one key; ErrNotFound when absent.
	Get(ctx context.Context, key string) (KeyValue, error)
	// List reads the keys under prefix from one consistent snapshot.
	List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error)
	// Update runs fn in a write transaction and commits it. It returns the
	// revision the transaction committed at. If fn returns an error, nothing
	// is written and that error is returned unchanged. A transaction that
	// writes nothing commits no revision and returns the current one.
	Update(ctx context.Context, fn func(Txn) error) (int64, error)
	// Watch streams events under prefix with Revision > fromRev, in revision
	// order. fromRev 0 means "from now". A fromRev older than the kept
	// history returns ErrCompacted. The channel closes when ctx ends or after
	// an EventError.
	Watch(ctx context.Context, prefix string, fromRev int64, opts WatchOptions) (<-chan Event, error)
	// Revision is the current (last committed) revision.
	Revision(ctx context.Context) (int64, error)
	// Close stops watchers and releases the database.
	Close() error
}
