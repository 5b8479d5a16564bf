package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Bucket and meta key names of the bbolt layout (see doc.go).
var (
	bucketKV   = []byte("kv")
	bucketLog  = []byte("log")
	bucketMeta = []byte("meta")

	metaVersion   = []byte("version")
	metaRev       = []byte("rev")
	metaCompacted = []byte("compacted")
	metaLogBytes  = []byte("logbytes")
)

// formatVersion is the on-disk layout version kept under meta "version".
const formatVersion = 1

// Defaults of BoltOptions.
const (
	DefaultHistorySize      = 50000
	DefaultHistoryBytes     = 32 << 20
	DefaultWatchBuffer      = 1000
	DefaultProgressInterval = 5 * time.Second
	defaultLockTimeout      = 10 * time.Second
)

// Tuning of the commit loop and of watch replay.
const (
	// maxBatch caps the Update requests that share one disk transaction.
	maxBatch = 256
	// maxCompactPerBatch caps the log entries one batch deletes; it is larger
	// than maxBatch so compaction always keeps up with the writes.
	maxCompactPerBatch = 4 * maxBatch
	// replayChunk is the number of log entries one replay read transaction
	// reads, so that a slow watcher never holds a read transaction open.
	replayChunk = 256
	// initialMmapSize avoids remapping (which waits for readers) while the
	// database is small.
	initialMmapSize = 64 << 20
	// minHistory is the number of revisions the log keeps whatever its size
	// (HistoryBytes compacts no further), unless HistorySize is smaller: a
	// watcher dropped for falling WatchBuffer events behind can resume.
	minHistory = DefaultWatchBuffer
)

// Page layout of the bbolt file (see doc.go, "Space"). The mmap'd pages a
// process has touched count in its RSS, and a busy store touches all of
// them, so the file is kept dense.
const (
	// pageSize is the page size of new database files (an existing file
	// keeps its own): 16 KiB pages hold about 20 objects or log entries of
	// the usual 0.5-2 KiB, so splits leave less unused space than 4 KiB
	// pages that hold 2 to 5.
	pageSize = 16 << 10
	// logFillPercent: log keys are revisions, only ever appended, so a
	// split leaves the left page full (the bbolt default, 0.5, leaves every
	// page of the log half empty).
	logFillPercent = 1.0
	// kvFillPercent is about 2/3 both for keys inserted in order (a
	// namespace filling up: the left page of a split never grows again) and
	// for random inserts; 0.5 gives 1/2 for the first and 0.9 about 0.4 for
	// the second.
	kvFillPercent = 0.67
)

// BoltOptions configure OpenBolt. The zero value is ready for production.
type BoltOptions struct {
	// HistorySize is the number of revisions kept in the event log for
	// watchers to resume from; default DefaultHistorySize.
	HistorySize int
	// HistoryBytes caps the size of the event log (its encoded entries,
	// which hold each event's value and previous value): older revisions
	// are compacted while the log is larger, even when it holds fewer than
	// HistorySize revisions, but the last 1,000 (or HistorySize, if
	// smaller) always stay. Default DefaultHistoryBytes.
	HistoryBytes int64
	// NoSync skips fsync on commit. Only for tests and benchmarks: an
	// acknowledged write can be lost on power failure or kernel crash.
	NoSync bool
	// Logger receives the store's logs; default discards them.
	Logger *slog.Logger
	// WatchBuffer is each watcher's channel capacity, and the number of
	// events a watcher that is still replaying history may fall behind the
	// live stream, before it is dropped with ErrWatcherTooSlow; default
	// DefaultWatchBuffer.
	WatchBuffer int
	// ProgressInterval is the period of EventProgress events for watchers
	// that ask for them; default DefaultProgressInterval.
	ProgressInterval time.Duration
}

// Bolt is the bbolt implementation of Interface. It is safe for concurrent
// use. Open it with OpenBolt and release it with Close.
type Bolt struct {
	db           *bolt.DB
	log          *slog.Logger
	historySize  int64
	historyBytes int64
	hub          *hub

	reqs      chan *updateReq // to the commit loop; unbuffered
	stop      chan struct{}   // closed by Close
	loopDone  chan struct{}   // closed when the commit loop has returned
	closeOnce sync.Once
	closeErr  error

	// committed and compactedRev mirror the loop's rev and compacted for
	// readers; they are stored after the disk commit.
	committed    atomic.Int64
	compactedRev atomic.Int64

	// Owned by the commit loop.
	rev       int64 // last committed revision
	compacted int64 // every revision <= compacted has left the log
	logBytes  int64 // the size of the log's entries (compacted, rev]

	// commitHook, when set (tests only), runs after each successful disk
	// commit with the batch's last revision, before the events are published.
	commitHook func(rev int64)
	// commitFailpoint, when set (tests only), runs before each disk commit;
	// an error it returns fails the batch as a failed commit would.
	commitFailpoint func() error
}

var _ Interface = (*Bolt)(nil)

// OpenBolt opens (creating if needed) the database file at path and starts
// its commit loop. ctx bounds the wait for the file lock held by another
// process (10s when ctx has no deadline).
func OpenBolt(ctx context.Context, path string, opts BoltOptions) (*Bolt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts.HistorySize <= 0 {
		opts.HistorySize = DefaultHistorySize
	}
	if opts.HistoryBytes <= 0 {
		opts.HistoryBytes = DefaultHistoryBytes
	}
	if opts.WatchBuffer <= 0 {
		opts.WatchBuffer = DefaultWatchBuffer
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = DefaultProgressInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	lockTimeout := defaultLockTimeout
	if dl, ok := ctx.Deadline(); ok {
		lockTimeout = max(time.Until(dl), time.Millisecond)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// bbolt maps the file and trusts its pages: a damaged one makes it
	// panic in a goroutine of its own or fault, which nothing recovers
	// from. VerifyFile reads the structure first (see verify.go).
	if err := verifyLocked(path, lockTimeout); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s := &Bolt{
		log:          opts.Logger,
		historySize:  int64(opts.HistorySize),
		historyBytes: opts.HistoryBytes,
		reqs:         make(chan *updateReq),
		stop:         make(chan struct{}),
		loopDone:     make(chan struct{}),
	}
	err := guardFaults(func() error {
		db, err := bolt.Open(path, 0o600, &bolt.Options{
			Timeout:         lockTimeout,
			NoSync:          opts.NoSync,
			NoFreelistSync:  true,
			FreelistType:    bolt.FreelistMapType,
			InitialMmapSize: initialMmapSize,
			PageSize:        pageSize,
		})
		if err != nil {
			return err
		}
		s.db = db
		return db.Update(s.initBuckets)
	})
	if err != nil {
		if s.db != nil {
			_ = s.db.Close()
		}
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s.committed.Store(s.rev)
	s.compactedRev.Store(s.compacted)
	s.hub = newHub(s, s.rev, opts.WatchBuffer, opts.ProgressInterval)
	go s.run()
	s.log.Info("store opened", "path", path, "revision", s.rev, "compacted", s.compacted)
	return s, nil
}

// guardFaults runs fn, which reads the mapped file, with the faults of
// reads outside the mapping (SIGSEGV, SIGBUS) turned into panics, and turns
// a panic into an error wrapping ErrCorrupt. Only fn's own goroutine is
// covered: bbolt walks the file in goroutines of its own when it opens it,
// which is why VerifyFile runs first.
func guardFaults(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	return fn()
}

// WriteTo writes a consistent copy of the database file to w, from one
// read transaction (writes go on meanwhile), and returns its size.
func (s *Bolt) WriteTo(ctx context.Context, w io.Writer) (int64, error) {
	var n int64
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil && !errors.Is(err, ErrClosed) {
		err = fmt.Errorf("store: write copy: %w", err)
	}
	return n, err
}

// initBuckets creates the buckets of a new database, or checks the format of
// an existing one, and loads the revisions.
func (s *Bolt) initBuckets(tx *bolt.Tx) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	for _, name := range [][]byte{bucketKV, bucketLog} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	if v := meta.Get(metaVersion); v == nil {
		if err := meta.Put(metaVersion, revKey(formatVersion)); err != nil {
			return err
		}
	} else if ver, err := parseRevKey(v); err != nil || ver != formatVersion {
		return fmt.Errorf("unsupported database format %x", v)
	}
	if meta.Get(metaRev) == nil {
		// A new store starts at revision 1, as etcd does: a revision read
		// from the store is then never 0, which Watch takes as "from now".
		for _, k := range [][]byte{metaRev, metaCompacted} {
			if err := putMetaInt(meta, k, 1); err != nil {
				return err
			}
		}
	}
	if s.rev, err = metaInt(meta, metaRev); err != nil {
		return err
	}
	if s.compacted, err = metaInt(meta, metaCompacted); err != nil {
		return err
	}
	if s.compacted > s.rev {
		return fmt.Errorf("%w: compacted revision %d is after revision %d", errCorrupt, s.compacted, s.rev)
	}
	// The log's size is kept with the revision it is true at; a file last
	// written without it (or by a binary that did not keep it) is measured.
	if n, ok := metaLogBytesAt(meta, s.rev); ok {
		s.logBytes = n
		return nil
	}
	if s.logBytes, err = measureLog(tx); err != nil {
		return err
	}
	return putMetaLogBytes(meta, s.rev, s.logBytes)
}

// metaLogBytesAt reads meta "logbytes" (the revision it was written at,
// then the log's size; 8 bytes big endian each) if it is for revision rev.
func metaLogBytesAt(meta *bolt.Bucket, rev int64) (int64, bool) {
	v := meta.Get(metaLogBytes)
	if len(v) != 16 || int64(binary.BigEndian.Uint64(v[:8])) != rev {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(v[8:])), true
}

func putMetaLogBytes(meta *bolt.Bucket, rev, n int64) error {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(rev))
	binary.BigEndian.PutUint64(b[8:], uint64(n))
	return meta.Put(metaLogBytes, b[:])
}

// measureLog sums the sizes of the log's entries.
func measureLog(tx *bolt.Tx) (int64, error) {
	var n int64
	err := tx.Bucket(bucketLog).ForEach(func(_, v []byte) error {
		n += int64(len(v))
		return nil
	})
	return n, err
}

// metaInt reads an 8-byte meta value; absent is 0.
func metaInt(meta *bolt.Bucket, key []byte) (int64, error) {
	v := meta.Get(key)
	if v == nil {
		return 0, nil
	}
	n, err := parseRevKey(v)
	if err != nil {
		return 0, fmt.Errorf("meta %s: %w", key, err)
	}
	return n, nil
}

// closed reports whether Close has been called.
func (s *Bolt) closed() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// view runs fn in a read transaction, mapping a closed database to ErrClosed.
func (s *Bolt) view(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed() {
		return ErrClosed
	}
	err := s.db.View(fn)
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

// Get reads one key; ErrNotFound when absent.
func (s *Bolt) Get(ctx context.Context, key string) (KeyValue, error) {
	var kv KeyValue
	err := s.view(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketKV).Get([]byte(key))
		if v == nil {
			return ErrNotFound
		}
		var err error
		kv, err = decodeKV(key, v)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrClosed) && ctx.Err() == nil {
		err = fmt.Errorf("store: get %q: %w", key, err)
	}
	return kv, err
}

// List reads the keys under prefix from one read transaction, so the page is
// one consistent snapshot at Revision.
func (s *Bolt) List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error) {
	var res ListResult
	err := s.view(ctx, func(tx *bolt.Tx) error {
		rev, err := metaInt(tx.Bucket(bucketMeta), metaRev)
		if err != nil {
			return err
		}
		res.Revision = rev
		c := tx.Bucket(bucketKV).Cursor()
		pfx := []byte(prefix)
		var k, v []byte
		if opts.After >= prefix {
			k, v = c.Seek([]byte(opts.After))
			if k != nil && string(k) == opts.After {
				k, v = c.Next()
			}
		} else {
			k, v = c.Seek(pfx)
		}
		for ; k != nil && bytes.HasPrefix(k, pfx); k, v = c.Next() {
			if opts.Limit > 0 && len(res.Items) == opts.Limit {
				res.More = true
				break
			}
			if len(res.Items)%1024 == 1023 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			kv, err := decodeKV(string(k), v)
			if err != nil {
				return err
			}
			res.Items = append(res.Items, kv)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrClosed) || ctx.Err() != nil {
			return ListResult{}, err
		}
		return ListResult{}, fmt.Errorf("store: list %q: %w", prefix, err)
	}
	return res, nil
}

// Revision is the last committed revision.
func (s *Bolt) Revision(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if s.closed() {
		return 0, ErrClosed
	}
	return s.committed.Load(), nil
}

// Close stops the commit loop (an Update in flight finishes first; later ones
// get ErrClosed), closes every watch channel (after a best-effort
// EventError{ErrClosed}) and closes the database. It is safe to call twice.
func (s *Bolt) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.loopDone
		s.hub.close()
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("store: close: %w", err)
		}
		s.log.Info("store closed", "revision", s.rev)
	})
	return s.closeErr
}

// Check verifies the database: bbolt's own page checks, and the store's
// invariants: the meta revisions, a gap-free log (compacted, rev], log
// entries that decode with sorted keys, kv records whose revisions are in
// range, and agreement between the log and the kv bucket (the last logged
// event of every key is its current state). It runs in a read-write
// transaction that it rolls back, so it waits for, and blocks, writers. It
// is meant for tests and offline checks.
func (s *Bolt) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed() {
		return ErrClosed
	}
	tx, err := s.db.Begin(true)
	if err != nil {
		if errors.Is(err, berrors.ErrDatabaseNotOpen) {
			return ErrClosed
		}
		return fmt.Errorf("store: check: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var errs []error
	for err := range tx.Check() {
		errs = append(errs, err)
	}
	if err := checkInvariants(tx, s.committed.Load()); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: check: %w", err)
	}
	return nil
}

// checkInvariants checks the store's layout in tx (see Check). committed is
// the revision the process believes is committed.
func checkInvariants(tx *bolt.Tx, committed int64) error {
	meta := tx.Bucket(bucketMeta)
	kvb, logb := tx.Bucket(bucketKV), tx.Bucket(bucketLog)
	if meta == nil || kvb == nil || logb == nil {
		return errors.New("missing bucket")
	}
	rev, err := metaInt(meta, metaRev)
	if err != nil {
		return err
	}
	compacted, err := metaInt(meta, metaCompacted)
	if err != nil {
		return err
	}
	if rev != committed {
		return fmt.Errorf("meta revision %d, process revision %d", rev, committed)
	}
	if compacted < 0 || compacted > rev {
		return fmt.Errorf("compacted revision %d outside [0, %d]", compacted, rev)
	}
	if n, ok := metaLogBytesAt(meta, rev); !ok {
		return fmt.Errorf("meta logbytes is not for revision %d", rev)
	} else if m, err := measureLog(tx); err != nil {
		return err
	} else if n != m {
		return fmt.Errorf("meta logbytes says the log holds %d bytes, it holds %d", n, m)
	}

	// Replay the log: it must be exactly (compacted, rev], and gives the last
	// logged event of every key.
	last := make(map[string]Event)
	want := compacted + 1
	c := logb.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		r, err := parseRevKey(k)
		if err != nil {
			return err
		}
		if r != want {
			return fmt.Errorf("log has revision %d, want %d (compacted %d, rev %d)", r, want, compacted, rev)
		}
		evs, err := decodeEvents(r, v, nil)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return fmt.Errorf("log entry %d has no events", r)
		}
		for i, ev := range evs {
			if i > 0 && evs[i-1].KV.Key >= ev.KV.Key {
				return fmt.Errorf("log entry %d: keys not strictly sorted at %q", r, ev.KV.Key)
			}
			if ev.Type == EventPut && (ev.KV.CreateRevision < 1 || ev.KV.CreateRevision > r) {
				return fmt.Errorf("log entry %d: %q has create revision %d", r, ev.KV.Key, ev.KV.CreateRevision)
			}
			if ev.PrevKV != nil && ev.PrevKV.ModRevision >= r {
				return fmt.Errorf("log entry %d: %q has previous mod revision %d", r, ev.KV.Key, ev.PrevKV.ModRevision)
			}
			if p, ok := last[ev.KV.Key]; ok {
				if (p.Type == EventPut) != (ev.PrevKV != nil) {
					return fmt.Errorf("log entry %d: %q previous value disagrees with revision %d", r, ev.KV.Key, p.Revision)
				}
				if ev.PrevKV != nil && (ev.PrevKV.ModRevision != p.Revision || !bytes.Equal(ev.PrevKV.Value, p.KV.Value)) {
					return fmt.Errorf("log entry %d: %q previous value is not revision %d's", r, ev.KV.Key, p.Revision)
				}
			}
			last[ev.KV.Key] = ev
		}
		want++
	}
	if want != rev+1 {
		return fmt.Errorf("log ends at revision %d, want %d", want-1, rev)
	}

	// Every kv record is in range and, when written after compaction,
	// matches its last logged event.
	c = kvb.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		kv, err := decodeKV(string(k), v)
		if err != nil {
			return err
		}
		if kv.ModRevision < 1 || kv.ModRevision > rev || kv.CreateRevision < 1 || kv.CreateRevision > kv.ModRevision {
			return fmt.Errorf("key %q has revisions create %d mod %d (rev %d)", kv.Key, kv.CreateRevision, kv.ModRevision, rev)
		}
		ev, logged := last[kv.Key]
		if kv.ModRevision > compacted {
			if !logged || ev.Type != EventPut || ev.Revision != kv.ModRevision ||
				ev.KV.CreateRevision != kv.CreateRevision || !bytes.Equal(ev.KV.Value, kv.Value) {
				return fmt.Errorf("key %q at revision %d disagrees with the log", kv.Key, kv.ModRevision)
			}
		} else if logged {
			return fmt.Errorf("key %q last written at compacted revision %d has a later log event at %d", kv.Key, kv.ModRevision, ev.Revision)
		}
		delete(last, kv.Key)
	}
	for key, ev := range last {
		if ev.Type == EventPut {
			return fmt.Errorf("key %q put at revision %d is missing", key, ev.Revision)
		}
	}
	return nil
}

// putMetaInt writes an 8-byte meta value.
func putMetaInt(meta *bolt.Bucket, key []byte, v int64) error {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(v))
	return meta.Put(key, b[:])
}
