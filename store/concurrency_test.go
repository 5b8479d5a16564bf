package store_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

// TestConcurrentUpdates runs 200 goroutines of read-modify-write
// transactions with fsync on: every successful one gets a unique revision,
// the revisions are 1..N without a gap, no increment of the shared counter
// is lost, a failing closure in a shared batch writes nothing, transactions
// share disk commits, and a watcher sees every revision once, in order.
func TestConcurrentUpdates(t *testing.T) {
	const (
		workers = 200
		each    = 10
	)
	s := storetest.MustOpenBoltAt(t, filepath.Join(t.TempDir(), "store.db"), store.BoltOptions{WatchBuffer: 2 * workers * each})
	ctx := testCtx(t)
	var commits atomic.Int64
	store.SetCommitHook(s, func(int64) { commits.Add(1) })
	base, _ := s.Revision(ctx)
	events, err := s.Watch(ctx, "/", 0, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errFail := errors.New("deliberate failure")

	var mu sync.Mutex
	revs := make(map[int64]string) // revision -> key written
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Sprintf("/w/%03d/%02d", w, i)
				fail := (w+i)%7 == 0
				var txnRev int64
				rev, err := s.Update(ctx, func(tx store.Txn) error {
					txnRev = tx.Revision()
					kv, ok, err := tx.Get("/counter")
					if err != nil {
						return err
					}
					n := 0
					if ok {
						n, _ = strconv.Atoi(string(kv.Value))
					}
					if err := tx.Put("/counter", []byte(strconv.Itoa(n+1))); err != nil {
						return err
					}
					if err := tx.Put(key, []byte(key)); err != nil {
						return err
					}
					if fail {
						return errFail
					}
					return nil
				})
				if fail {
					if !errors.Is(err, errFail) {
						t.Errorf("%s: failing closure returned %d, %v", key, rev, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", key, err)
					continue
				}
				if rev != txnRev {
					t.Errorf("%s: committed at %d but Txn.Revision said %d", key, rev, txnRev)
				}
				mu.Lock()
				if other, dup := revs[rev]; dup {
					t.Errorf("revision %d given to %s and %s", rev, other, key)
				}
				revs[rev] = key
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	n := int64(len(revs))
	for r := base + 1; r <= base+n; r++ {
		if _, ok := revs[r]; !ok {
			t.Fatalf("revision %d missing among %d commits", r, n)
		}
	}
	// Group commit: 200 concurrent writers share disk commits.
	if c := commits.Load(); c >= n {
		t.Fatalf("%d disk commits for %d transactions: no group commit", c, n)
	}
	t.Logf("%d transactions in %d disk commits", n, commits.Load())
	if cur, _ := s.Revision(ctx); cur != base+n {
		t.Fatalf("store revision %d, want %d", cur, base+n)
	}
	if kv := mustGet(t, s, "/counter"); string(kv.Value) != strconv.FormatInt(n, 10) || kv.ModRevision != base+n {
		t.Fatalf("counter = %s at %d, want %d at %d (lost update)", kv.Value, kv.ModRevision, n, base+n)
	}
	for rev, key := range revs {
		if kv := mustGet(t, s, key); kv.ModRevision != rev {
			t.Fatalf("%s ModRevision %d, want %d", key, kv.ModRevision, rev)
		}
	}
	res, err := s.List(ctx, "/w/", store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(res.Items)) != n {
		t.Fatalf("%d keys under /w/, want %d: failed closures leaked writes", len(res.Items), n)
	}

	// The watcher saw each revision once, in order, with both keys.
	var seen []int64
	for int64(len(seen)) < n {
		a, b := <-events, <-events
		if a.Type != store.EventPut || a.Revision != b.Revision || a.KV.Key != "/counter" || b.KV.Key != revs[a.Revision] {
			t.Fatalf("watch got %+v and %+v", a, b)
		}
		seen = append(seen, a.Revision)
	}
	if !slices.IsSorted(seen) || seen[0] != base+1 || seen[len(seen)-1] != base+n {
		t.Fatalf("watch revisions out of order: %v", seen)
	}
}
