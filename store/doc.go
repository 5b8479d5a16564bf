// Package store is Skiff's revisioned key-value store with watch.
//
// # Model
//
// The store holds opaque values under string keys. Every committed write
// transaction advances one global revision by exactly one; every key written
// by that transaction carries that revision as its ModRevision. The revision
// is what the API exposes as metadata.resourceVersion.
//
// Writes go through Update, which runs a closure against a Txn. The closure
// sees its own writes, and either all of its writes commit or none do.
// Concurrent Updates are group-committed: many closures share one disk
// transaction and one fsync, but each keeps its own revision and its own
// all-or-nothing outcome. A closure's Txn knows, before commit, the revision
// it will commit at (Txn.Revision), so callers can embed it in the value.
// Closures run one at a time, in revision order, so transactions are
// serializable: a read-modify-write inside one closure (an allocator's
// bitmap, a resourceVersion check) never races another.
//
// A new store is at revision 1 (as in etcd) and its first write commits at
// revision 2, so that no revision a reader sees is 0, which Watch takes as
// "from now".
//
// A transaction's effect is its net effect per key: a key put several times
// holds the last value; a key created and then deleted by the same closure is
// no write at all. A closure whose net effect is empty commits no revision.
//
// # History and watch
//
// Every commit appends its events (with the previous value of each key) to
// a bounded history kept in the database itself, so a restarted process can
// resume a watch from a revision it saw before. The history is bounded both
// in revisions (BoltOptions.HistorySize) and in bytes
// (BoltOptions.HistoryBytes, which never trims it below the last 1,000
// revisions). Watching from a revision older than the kept history fails
// with ErrCompacted.
//
// Events are published to watchers only after the disk transaction commits,
// and before the Update that made them returns: a caller that saw revision R
// from Update, List or Revision can always Watch from R.
//
// Within one revision, events are ordered by key. Event values are shared by
// every watcher that receives them: treat them as read-only.
//
// # Implementations
//
// bolt.go implements the interface on go.etcd.io/bbolt (type Bolt). The
// interface is kept small so that an etcd backend can implement it too (an
// etcd backend can provide Txn.Revision by serialising writers on a revision
// key).
//
// # The bbolt backend
//
// One database file holds three buckets:
//
//   - "kv": key -> create revision, mod revision (8 bytes big endian each),
//     then the value.
//   - "log": revision (8 bytes big endian) -> that revision's events, each
//     with the key's previous value. The log holds exactly the revisions
//     (compacted, rev]; it never has a gap.
//   - "meta": "rev" (the last committed revision), "compacted" (every
//     revision at or below it has left the log), "version" (format),
//     "logbytes" (the revision it was written at, then the total size of the
//     log's entries; a file without it, or with it at another revision, is
//     measured when opened).
//
// A single commit goroutine owns every write. It takes the pending Update
// requests (up to a batch limit), opens one bbolt read-write transaction,
// runs each closure against a Txn that overlays the closure's own writes on
// that transaction (so it also sees the applied writes of earlier closures in
// the batch), gives a revision only to closures that succeed and write
// something, writes their keys and log entries, trims the log to the last
// HistorySize revisions and to HistoryBytes (a bounded number of entries per
// batch), commits
// with one fsync, publishes the events, then answers the callers. If the
// commit fails, every caller in the batch gets the error and nothing of the
// batch is visible anywhere.
//
// Update returns only after the commit and its fsync (unless
// BoltOptions.NoSync): an acknowledged write survives a crash of the process
// or the machine. Closures that fail, panic or find their context ended are
// left out of the batch and get their own outcome; a closure that writes
// nothing costs no revision and, when the whole batch writes nothing, no
// disk commit.
//
// # Space
//
// bbolt's file is memory-mapped, and the pages a process has read count in
// its resident memory; a busy store reads, over time, every page of its
// file (copy-on-write moves every written page). So the file is kept dense:
// new files get 16 KiB pages (about 20 objects or log entries per page
// instead of 2 to 5), the log bucket splits full pages (its keys are only
// ever appended) and the kv bucket splits at 2/3 (about 2/3 full both for
// keys written in order and at random). Filled with 10,000 Services and
// EndpointSlices and 50,000 pods (server's BenchmarkMemory10kServices), the
// file is 128 MiB instead of 240 MiB (bbolt's default pages and splits, no
// byte budget), and the server's resident memory 390 MiB instead of 520.
//
// Reads (Get, List) run in their own bbolt read transactions and never wait
// for the commit goroutine. Bolt.Check verifies the file and every invariant
// above; storetest.MustOpenBolt runs it after each test.
//
// # Opening
//
// bbolt maps the file and trusts its pages: on a damaged file it panics in
// goroutines of its own or faults (SIGSEGV, SIGBUS), which no caller can
// recover from. So OpenBolt first reads the file's structure with
// VerifyFile (pread, no mapping: the meta pages, the file's length, the
// freelist, every page reachable from the root and the order of its keys)
// and returns an error wrapping ErrCorrupt; bbolt's open then runs with
// faults turned into panics and panics into errors. Values carry no
// checksum: a changed byte inside one is not found.
//
// # Watchers
//
// A watcher is registered with the publisher before it replays history, at
// the publisher's current revision S. It then replays the log (fromRev, S]
// in chunks (each chunk in its own short read transaction) with blocking
// sends, while the publisher queues events newer than S for it. Once the
// replay and the queue are drained, the watcher turns live and the publisher
// sends to its channel directly. The publisher never blocks: a live watcher
// whose channel is full, or a catching-up watcher whose queue exceeds
// WatchBuffer, is dropped and then receives EventError{ErrWatcherTooSlow}
// after the events it already had. Progress events are sent by the publisher
// under the same lock that orders events, so an EventProgress at revision R
// follows every matching event at or below R.
package store
