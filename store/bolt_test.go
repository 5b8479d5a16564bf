package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

// testCtx is a context bounded by the test's deadline (or a minute).
func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// put writes key=value in its own transaction and returns its revision.
func put(t testing.TB, s store.Interface, key, value string) int64 {
	t.Helper()
	rev, err := s.Update(testCtx(t), func(tx store.Txn) error { return tx.Put(key, []byte(value)) })
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return rev
}

// del deletes key in its own transaction and returns its revision.
func del(t testing.TB, s store.Interface, key string) int64 {
	t.Helper()
	rev, err := s.Update(testCtx(t), func(tx store.Txn) error { return tx.Delete(key) })
	if err != nil {
		t.Fatalf("delete %s: %v", key, err)
	}
	return rev
}

// mustGet reads key and fails the test when it is absent.
func mustGet(t testing.TB, s store.Interface, key string) store.KeyValue {
	t.Helper()
	kv, err := s.Get(testCtx(t), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return kv
}

func keys(kvs []store.KeyValue) []string {
	out := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, kv.Key)
	}
	return out
}

func TestRevisionsAdvanceByOnePerWritingTransaction(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	ctx := testCtx(t)
	if rev, err := s.Revision(ctx); err != nil || rev != 1 {
		t.Fatalf("new store revision = %d, %v; want 1", rev, err)
	}
	if got := put(t, s, "/a", "1"); got != 2 {
		t.Fatalf("first put committed at %d, want 2", got)
	}
	// A transaction writing three keys is one revision, shared by its keys.
	rev, err := s.Update(ctx, func(tx store.Txn) error {
		for _, k := range []string{"/b", "/c", "/a"} {
			if err := tx.Put(k, []byte("x")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || rev != 3 {
		t.Fatalf("multi-key update = %d, %v; want 3", rev, err)
	}
	for _, k := range []string{"/a", "/b", "/c"} {
		if kv := mustGet(t, s, k); kv.ModRevision != 3 {
			t.Errorf("%s ModRevision = %d, want 3", k, kv.ModRevision)
		}
	}
	// A read-only transaction commits no revision and returns the current one.
	rev, err = s.Update(ctx, func(tx store.Txn) error {
		_, _, err := tx.Get("/a")
		return err
	})
	if err != nil || rev != 3 {
		t.Fatalf("read-only update = %d, %v; want 3", rev, err)
	}
	if got := put(t, s, "/d", "1"); got != 4 {
		t.Fatalf("put after read-only update committed at %d, want 4", got)
	}
	if rev, _ := s.Revision(ctx); rev != 4 {
		t.Fatalf("Revision = %d, want 4", rev)
	}
}

func TestCreateAndModRevisions(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	r1 := put(t, s, "/k", "v1")
	put(t, s, "/other", "x")
	r3 := put(t, s, "/k", "v2")
	kv := mustGet(t, s, "/k")
	want := store.KeyValue{Key: "/k", Value: []byte("v2"), CreateRevision: r1, ModRevision: r3}
	if !equalKV(kv, want) {
		t.Fatalf("after update got %+v, want %+v", kv, want)
	}
	del(t, s, "/k")
	r5 := put(t, s, "/k", "v3")
	kv = mustGet(t, s, "/k")
	if kv.CreateRevision != r5 || kv.ModRevision != r5 {
		t.Fatalf("recreated key has create %d mod %d, want both %d", kv.CreateRevision, kv.ModRevision, r5)
	}
}

func equalKV(a, b store.KeyValue) bool {
	return a.Key == b.Key && string(a.Value) == string(b.Value) &&
		a.CreateRevision == b.CreateRevision && a.ModRevision == b.ModRevision
}

func TestTransactionIsAllOrNothing(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	ctx := testCtx(t)
	keepRev := put(t, s, "/keep", "old")
	errBoom := errors.New("boom")
	tests := []struct {
		name    string
		fn      func(store.Txn) error
		wantErr error
	}{
		{"closure error after writes", func(tx store.Txn) error {
			if err := tx.Put("/new", []byte("x")); err != nil {
				return err
			}
			if err := tx.Put("/keep", []byte("changed")); err != nil {
				return err
			}
			if err := tx.Delete("/keep"); err != nil {
				return err
			}
			return errBoom
		}, errBoom},
		{"delete of an absent key fails the closure", func(tx store.Txn) error {
			if err := tx.Put("/new", []byte("x")); err != nil {
				return err
			}
			return tx.Delete("/absent")
		}, store.ErrNotFound},
		{"wrapped error is returned unchanged", func(tx store.Txn) error {
			if err := tx.Put("/new", []byte("x")); err != nil {
				return err
			}
			return fmt.Errorf("validate: %w", errBoom)
		}, errBoom},
		{"empty key is rejected", func(tx store.Txn) error {
			return tx.Put("", []byte("x"))
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := s.Revision(ctx)
			rev, err := s.Update(ctx, tc.fn)
			if err == nil {
				t.Fatalf("Update succeeded at %d, want an error", rev)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("Update error = %v, want %v", err, tc.wantErr)
			}
			if after, _ := s.Revision(ctx); after != before {
				t.Fatalf("revision moved from %d to %d on a failed transaction", before, after)
			}
			if _, err := s.Get(ctx, "/new"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("/new after failed transaction: %v, want ErrNotFound", err)
			}
			if kv := mustGet(t, s, "/keep"); string(kv.Value) != "old" || kv.ModRevision != keepRev {
				t.Fatalf("/keep = %q at %d, want old at %d", kv.Value, kv.ModRevision, keepRev)
			}
		})
	}
	// The next writer is not disturbed by the failures: it takes the next
	// revision.
	if rev := put(t, s, "/after", "x"); rev != keepRev+1 {
		t.Fatalf("put after failures committed at %d, want %d", rev, keepRev+1)
	}
}

func TestTxnSeesItsOwnWrites(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	ctx := testCtx(t)
	ra := put(t, s, "/p/a", "a0")
	put(t, s, "/p/b", "b0")
	put(t, s, "/p/c", "c0")
	next := put(t, s, "/q/z", "z0") + 1

	rev, err := s.Update(ctx, func(tx store.Txn) error {
		if tx.Revision() != next {
			return fmt.Errorf("Txn.Revision = %d, want %d", tx.Revision(), next)
		}
		steps := []struct {
			name string
			do   func() error
		}{
			{"put new", func() error { return tx.Put("/p/ab", []byte("ab1")) }},
			{"overwrite", func() error { return tx.Put("/p/a", []byte("a1")) }},
			{"delete", func() error { return tx.Delete("/p/b") }},
			{"delete twice", func() error {
				if err := tx.Delete("/p/b"); !errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("second delete of /p/b: %v, want ErrNotFound", err)
				}
				return nil
			}},
			{"create and delete", func() error {
				if err := tx.Put("/p/tmp", []byte("t")); err != nil {
					return err
				}
				return tx.Delete("/p/tmp")
			}},
			{"delete and recreate", func() error {
				if err := tx.Delete("/p/c"); err != nil {
					return err
				}
				return tx.Put("/p/c", []byte("c1"))
			}},
			{"put after prefix end", func() error { return tx.Put("/p0", []byte("x")) }},
		}
		for _, st := range steps {
			if err := st.do(); err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
		}
		got, ok, err := tx.Get("/p/a")
		if err != nil || !ok || string(got.Value) != "a1" || got.CreateRevision != ra || got.ModRevision != next {
			return fmt.Errorf("Get /p/a = %+v %v %v", got, ok, err)
		}
		if _, ok, _ := tx.Get("/p/b"); ok {
			return errors.New("Get /p/b sees a deleted key")
		}
		if got, ok, _ := tx.Get("/p/c"); !ok || got.CreateRevision != next {
			return fmt.Errorf("recreated /p/c = %+v, want CreateRevision %d", got, next)
		}
		list, err := tx.List("/p/")
		if err != nil {
			return err
		}
		if want := []string{"/p/a", "/p/ab", "/p/c"}; !slices.Equal(keys(list), want) {
			return fmt.Errorf("List /p/ = %v, want %v", keys(list), want)
		}
		if string(list[0].Value) != "a1" || string(list[2].Value) != "c1" {
			return fmt.Errorf("List values %q %q", list[0].Value, list[2].Value)
		}
		return nil
	})
	if err != nil || rev != next {
		t.Fatalf("Update = %d, %v", rev, err)
	}
	res, err := s.List(ctx, "/p", store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/p/a", "/p/ab", "/p/c", "/p0"}; !slices.Equal(keys(res.Items), want) {
		t.Fatalf("committed keys %v, want %v", keys(res.Items), want)
	}
	if res.Revision != next {
		t.Fatalf("List revision %d, want %d", res.Revision, next)
	}
}

func TestTxnIsUnusableAfterItsClosure(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	var kept store.Txn
	if _, err := s.Update(testCtx(t), func(tx store.Txn) error { kept = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := kept.Put("/late", []byte("x")); err == nil {
		t.Fatal("Put on a finished Txn succeeded")
	}
	if _, _, err := kept.Get("/late"); err == nil {
		t.Fatal("Get on a finished Txn succeeded")
	}
}

func TestListPagination(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	ctx := testCtx(t)
	listRev, err := s.Update(ctx, func(tx store.Txn) error {
		for i := range 25 {
			if err := tx.Put(fmt.Sprintf("/pods/%02d", i), []byte{byte(i)}); err != nil {
				return err
			}
		}
		return tx.Put("/podsx", []byte("outside"))
	})
	if err != nil {
		t.Fatal(err)
	}
	listRev = max(listRev, put(t, s, "/a", "before the prefix"))

	tests := []struct {
		name     string
		opts     store.ListOptions
		wantKeys []string
		wantMore bool
	}{
		{"all", store.ListOptions{}, nil, false},
		{"first page", store.ListOptions{Limit: 3}, []string{"/pods/00", "/pods/01", "/pods/02"}, true},
		{"after a key", store.ListOptions{Limit: 2, After: "/pods/10"}, []string{"/pods/11", "/pods/12"}, true},
		{"after a non-existent key", store.ListOptions{Limit: 2, After: "/pods/105"}, []string{"/pods/11", "/pods/12"}, true},
		{"last page exact", store.ListOptions{Limit: 2, After: "/pods/22"}, []string{"/pods/23", "/pods/24"}, false},
		{"after the last", store.ListOptions{After: "/pods/24"}, nil, false},
		{"after before the prefix", store.ListOptions{Limit: 1, After: "/a"}, []string{"/pods/00"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.List(ctx, "/pods/", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Revision != listRev {
				t.Errorf("Revision = %d, want %d", res.Revision, listRev)
			}
			if tc.name == "all" {
				if len(res.Items) != 25 || res.More {
					t.Fatalf("got %d items more=%v, want 25 items", len(res.Items), res.More)
				}
				return
			}
			if !slices.Equal(keys(res.Items), tc.wantKeys) || res.More != tc.wantMore {
				t.Fatalf("got %v more=%v, want %v more=%v", keys(res.Items), res.More, tc.wantKeys, tc.wantMore)
			}
		})
	}

	// Walking the pages returns every key once, in order.
	var walked []string
	after := ""
	for {
		res, err := s.List(ctx, "/pods/", store.ListOptions{Limit: 4, After: after})
		if err != nil {
			t.Fatal(err)
		}
		walked = append(walked, keys(res.Items)...)
		if !res.More {
			break
		}
		after = res.Items[len(res.Items)-1].Key
	}
	if len(walked) != 25 || !slices.IsSorted(walked) || len(slices.Compact(slices.Clone(walked))) != 25 {
		t.Fatalf("walked %v", walked)
	}
}

func TestGetAbsentKey(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	if _, err := s.Get(testCtx(t), "/nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get absent = %v, want ErrNotFound", err)
	}
}

func TestUpdateWithCancelledContextWritesNothing(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	_, err := s.Update(ctx, func(tx store.Txn) error { ran = true; return tx.Put("/x", []byte("x")) })
	if !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("Update with cancelled ctx = %v (ran %v), want context.Canceled without running", err, ran)
	}
	if rev, _ := s.Revision(testCtx(t)); rev != 1 {
		t.Fatalf("revision %d after cancelled update", rev)
	}
}

func TestUpdateRepanicsInCaller(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	func() {
		defer func() {
			if p := recover(); p != "closure bug" {
				t.Fatalf("recovered %v, want the closure's panic", p)
			}
		}()
		_, _ = s.Update(testCtx(t), func(tx store.Txn) error {
			_ = tx.Put("/half", []byte("x"))
			panic("closure bug")
		})
	}()
	if _, err := s.Get(testCtx(t), "/half"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("write of a panicking closure is visible: %v", err)
	}
	if rev := put(t, s, "/after", "x"); rev != 2 {
		t.Fatalf("store after a panic committed at %d, want 2", rev)
	}
}

func TestRestartContinuesRevision(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s := storetest.MustOpenBoltAt(t, path, store.BoltOptions{})
	ra := put(t, s, "/a", "1")
	rb := put(t, s, "/b", "2")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = storetest.MustOpenBoltAt(t, path, store.BoltOptions{})
	if rev, _ := s.Revision(testCtx(t)); rev != rb {
		t.Fatalf("reopened revision %d, want %d", rev, rb)
	}
	if got := put(t, s, "/c", "3"); got != rb+1 {
		t.Fatalf("put after reopen committed at %d, want %d", got, rb+1)
	}
	if kv := mustGet(t, s, "/a"); string(kv.Value) != "1" || kv.ModRevision != ra {
		t.Fatalf("/a after reopen = %+v", kv)
	}
}

func TestClosedStore(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	put(t, s, "/a", "1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := testCtx(t)
	_, errU := s.Update(ctx, func(tx store.Txn) error { return tx.Put("/b", nil) })
	_, errG := s.Get(ctx, "/a")
	_, errL := s.List(ctx, "/", store.ListOptions{})
	_, errW := s.Watch(ctx, "/", 0, store.WatchOptions{})
	_, errR := s.Revision(ctx)
	for name, err := range map[string]error{"Update": errU, "Get": errG, "List": errL, "Watch": errW, "Revision": errR} {
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
}

func TestHistoryIsCompactedToHistorySize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s := storetest.MustOpenBoltAt(t, path, store.BoltOptions{NoSync: true, HistorySize: 10})
	var last int64
	// More revisions than one batch may compact, so compaction must carry
	// on across batches.
	for i := range 1500 {
		last = put(t, s, fmt.Sprintf("/k%d", i%4), "v")
	}
	ctx := testCtx(t)
	// The last 10 revisions are kept: watching from the one before them
	// works, from an earlier one does not.
	if _, err := s.Watch(ctx, "/", last-11, store.WatchOptions{}); !errors.Is(err, store.ErrCompacted) {
		t.Fatalf("Watch(%d) = %v, want ErrCompacted", last-11, err)
	}
	ch, err := s.Watch(ctx, "/", last-10, store.WatchOptions{})
	if err != nil {
		t.Fatalf("Watch(%d): %v", last-10, err)
	}
	for want := last - 9; want <= last; want++ {
		if ev := <-ch; ev.Revision != want || ev.Type != store.EventPut {
			t.Fatalf("replayed %+v, want a put at %d", ev, want)
		}
	}
}

// TestFailedCommitFailsTheWholeBatch injects a disk commit failure: every
// writer in the batch gets it, nothing is visible or published, and the
// revision counter is where it was.
func TestFailedCommitFailsTheWholeBatch(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	ctx := testCtx(t)
	before := put(t, s, "/a", "1")
	ch, err := s.Watch(ctx, "/", 0, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errDisk := errors.New("injected disk failure")
	store.SetCommitFailpoint(s, func() error { return errDisk })
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = s.Update(ctx, func(tx store.Txn) error { return tx.Put(fmt.Sprintf("/f/%d", i), []byte("x")) })
		})
	}
	// A closure that fails on its own keeps its own error, whatever its
	// batch does.
	errOwn := errors.New("own failure")
	var ownErr error
	wg.Go(func() {
		_, ownErr = s.Update(ctx, func(tx store.Txn) error { _ = tx.Put("/own", nil); return errOwn })
	})
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, errDisk) {
			t.Errorf("writer %d: %v, want the commit failure", i, err)
		}
	}
	if !errors.Is(ownErr, errOwn) || errors.Is(ownErr, errDisk) {
		t.Errorf("failing closure got %v, want its own error", ownErr)
	}
	// A transaction that writes nothing needs no disk commit.
	if rev, err := s.Update(ctx, func(tx store.Txn) error { _, err := tx.List("/"); return err }); err != nil || rev != before {
		t.Fatalf("read-only update during failures = %d, %v; want %d", rev, err, before)
	}
	store.SetCommitFailpoint(s, nil)

	if rev, _ := s.Revision(ctx); rev != before {
		t.Fatalf("revision %d after failed commits, want %d", rev, before)
	}
	if res, err := s.List(ctx, "/f/", store.ListOptions{}); err != nil || len(res.Items) != 0 {
		t.Fatalf("failed writes visible: %v %v", keys(res.Items), err)
	}
	after := put(t, s, "/b", "2")
	if after != before+1 {
		t.Fatalf("next write committed at %d, want %d", after, before+1)
	}
	if ev := recv(t, ch); ev.Revision != after || ev.KV.Key != "/b" {
		t.Fatalf("first event after failed commits: %s, want /b at %d", fmtEvent(ev), after)
	}
}

// TestUpdateCancelledWhileQueued: an Update whose ctx ends after the commit
// loop has taken it, but before its closure runs, does not run the closure
// and returns ctx.Err(). The test holds the commit loop (in a commit
// failpoint) until the writers are queued, so they share the next batch,
// and the batch's first closure cancels the others.
func TestUpdateCancelledWhileQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := storetest.MustOpenBolt(t)
		ctx := t.Context()
		hold := make(chan struct{})
		store.SetCommitFailpoint(s, func() error { <-hold; return nil })
		held := make(chan error, 1)
		go func() { // the loop waits in the failpoint while committing this
			_, err := s.Update(ctx, func(tx store.Txn) error { return tx.Put("/holder", nil) })
			held <- err
		}()
		synctest.Wait()

		cctx, cancel := context.WithCancel(ctx)
		var ran bool
		cancellerErr, cancelledErr := make(chan error, 1), make(chan error, 1)
		go func() { // queued first: cancels the other
			_, err := s.Update(ctx, func(tx store.Txn) error { cancel(); return tx.Put("/canceller", nil) })
			cancellerErr <- err
		}()
		synctest.Wait()
		go func() {
			_, err := s.Update(cctx, func(tx store.Txn) error { ran = true; return tx.Put("/cancelled", nil) })
			cancelledErr <- err
		}()
		synctest.Wait()
		close(hold)
		if err := <-held; err != nil {
			t.Fatalf("holder: %v", err)
		}
		if err := <-cancellerErr; err != nil {
			t.Fatalf("canceller: %v", err)
		}
		if err := <-cancelledErr; !errors.Is(err, context.Canceled) || ran {
			t.Fatalf("queued update = %v (closure ran: %v), want context.Canceled without running", err, ran)
		}
		if _, err := s.Get(ctx, "/cancelled"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("/cancelled: %v, want ErrNotFound", err)
		}
		store.SetCommitFailpoint(s, nil)
	})
}
