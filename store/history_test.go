package store_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

// putMany writes n revisions, each one key (cycling over keys) with a
// value of size bytes, from 8 concurrent writers; it returns the last
// revision.
func putMany(t *testing.T, s *store.Bolt, n, keys, size int) int64 {
	t.Helper()
	ctx := testCtx(t)
	value := []byte(strings.Repeat("v", size))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		last int64
		next = make(chan int)
	)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				rev, err := s.Update(ctx, func(tx store.Txn) error { return tx.Put(fmt.Sprintf("/k/%04d", i%keys), value) })
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				last = max(last, rev)
				mu.Unlock()
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return last
}

// keptHistory reports the oldest revision a watch may start from: the
// store's compacted revision, found by watching.
func keptHistory(t *testing.T, s *store.Bolt, last int64) int64 {
	t.Helper()
	ctx := testCtx(t)
	lo, hi := int64(1), last // Watch(lo) may fail, Watch(hi) works
	for lo < hi {
		mid := (lo + hi) / 2
		_, err := s.Watch(ctx, "/nothing/", mid, store.WatchOptions{})
		switch {
		case errors.Is(err, store.ErrCompacted):
			lo = mid + 1
		case err != nil:
			t.Fatalf("Watch(%d): %v", mid, err)
		default:
			hi = mid
		}
	}
	return lo
}

// TestHistoryBytesCompactsALargeLog: the log is trimmed to HistoryBytes
// even when it holds fewer than HistorySize revisions, but never to fewer
// than 1,000 revisions (or HistorySize, when smaller), and the size it
// keeps in meta survives a reopen (storetest's cleanup checks it against
// the log, reopened).
func TestHistoryBytesCompactsALargeLog(t *testing.T) {
	const value = 1000 // bytes; a log entry is a little larger
	cases := []struct {
		name             string
		historySize      int
		historyBytes     int64
		writes, keys     int   // keys < writes: most entries hold a previous value too
		minKept, maxKept int64 // revisions (compacted, last]
	}{
		{name: "bytes bind", historySize: 50000, historyBytes: 2 << 20, writes: 4000, keys: 4000, minKept: 2000, maxKept: 2100},
		{name: "bytes bind, with previous values", historySize: 50000, historyBytes: 2 << 20, writes: 4000, keys: 50, minKept: 1000, maxKept: 1050},
		{name: "floor of 1000 revisions", keys: 50, historySize: 50000, historyBytes: 64 << 10, writes: 3000, minKept: 1000, maxKept: 1000},
		{name: "count binds first", keys: 50, historySize: 500, historyBytes: 2 << 20, writes: 3000, minKept: 500, maxKept: 500},
		{name: "small HistorySize is its own floor", keys: 50, historySize: 300, historyBytes: 1 << 10, writes: 2000, minKept: 300, maxKept: 300},
		{name: "under both", keys: 50, historySize: 50000, historyBytes: 32 << 20, writes: 3000, minKept: 3000, maxKept: 3000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			s := storetest.MustOpenBoltAt(t, path, store.BoltOptions{NoSync: true, HistorySize: tc.historySize, HistoryBytes: tc.historyBytes})
			last := putMany(t, s, tc.writes, tc.keys, value)
			from := keptHistory(t, s, last)
			kept := last - from
			if kept < tc.minKept || kept > tc.maxKept {
				t.Fatalf("the log keeps %d revisions (watch from %d of %d), want %d..%d", kept, from, last, tc.minKept, tc.maxKept)
			}
			// The kept revisions replay.
			ch, err := s.Watch(testCtx(t), "/k/", from, store.WatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for want := from + 1; want <= last; want++ {
				if ev := <-ch; ev.Type != store.EventPut || ev.Revision != want || len(ev.KV.Value) != value {
					t.Fatalf("replayed %v at %d (%d bytes), want a put at %d", ev.Type, ev.Revision, len(ev.KV.Value), want)
				}
			}
		})
	}
}

// TestLogBytesOfAnOlderFile: a file whose meta has no log size, or one
// written at another revision (a binary that did not keep it wrote
// since), is measured at open; Check then agrees.
func TestLogBytesOfAnOlderFile(t *testing.T) {
	cases := []struct {
		name  string
		alter func(meta *bolt.Bucket) error
	}{
		{name: "absent", alter: func(meta *bolt.Bucket) error { return meta.Delete([]byte("logbytes")) }},
		{name: "stale", alter: func(meta *bolt.Bucket) error {
			v := append([]byte{}, meta.Get([]byte("logbytes"))...)
			if len(v) != 16 {
				return fmt.Errorf("logbytes is %d bytes", len(v))
			}
			v[7]-- // an earlier revision
			v[15] += 7
			return meta.Put([]byte("logbytes"), v)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			s, err := store.OpenBolt(testCtx(t), path, store.BoltOptions{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			putMany(t, s, 300, 20, 100)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error { return tc.alter(tx.Bucket([]byte("meta"))) })
			if cerr := db.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			s = storetest.MustOpenBoltAt(t, path, store.BoltOptions{NoSync: true})
			if err := s.Check(testCtx(t)); err != nil {
				t.Fatalf("check after reopening: %v", err)
			}
			putMany(t, s, 50, 20, 100) // and it stays right (the cleanup checks again)
		})
	}
}

// TestLogPagesAreDense: log keys are only ever appended, so the log's
// pages are filled (bbolt's default split leaves them half empty), and the
// kv pages of keys written in order are about 2/3 full.
func TestLogPagesAreDense(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := store.OpenBolt(testCtx(t), path, store.BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	putMany(t, s, 3000, 3000, 700)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for _, b := range []struct {
			name    string
			minFill float64
		}{{"log", 0.85}, {"kv", 0.6}} {
			st := tx.Bucket([]byte(b.name)).Stats()
			fill := float64(st.LeafInuse) / float64(st.LeafAlloc)
			t.Logf("%s: %d keys on %d leaf pages of %d bytes, %.0f%% full", b.name, st.KeyN, st.LeafPageN, db.Info().PageSize, 100*fill)
			if fill < b.minFill {
				t.Errorf("%s leaf pages are %.0f%% full, want at least %.0f%%", b.name, 100*fill, 100*b.minFill)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
