package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/store"
	"github.com/skiff-dev/skiff/store/storetest"
)

// recv takes the next event or fails after a timeout.
func recv(t testing.TB, ch <-chan store.Event) store.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return store.Event{}
}

// expectClosed drains nothing and fails unless ch is closed soon.
func expectClosed(t testing.TB, ch <-chan store.Event) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			t.Fatalf("got %+v, want a closed channel", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch channel not closed within 10s")
	}
}

// expectQuiet fails if an event arrives within a short while.
func expectQuiet(t testing.TB, ch <-chan store.Event) {
	t.Helper()
	select {
	case ev := <-ch:
		t.Fatalf("unexpected event %+v", ev)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestWatchFromNow(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	ctx := testCtx(t)
	r1 := put(t, s, "/svc/a", "old") // before the watch: not sent
	ch, err := s.Watch(ctx, "/svc/", 0, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r2 := put(t, s, "/svc/b", "b1")
	put(t, s, "/pods/x", "filtered out")
	r4 := put(t, s, "/svc/a", "new")
	r5 := del(t, s, "/svc/a")

	tests := []struct {
		name string
		want store.Event
	}{
		{"create", store.Event{Type: store.EventPut, Revision: r2,
			KV: store.KeyValue{Key: "/svc/b", Value: []byte("b1"), CreateRevision: r2, ModRevision: r2}}},
		{"update", store.Event{Type: store.EventPut, Revision: r4,
			KV:     store.KeyValue{Key: "/svc/a", Value: []byte("new"), CreateRevision: r1, ModRevision: r4},
			PrevKV: &store.KeyValue{Key: "/svc/a", Value: []byte("old"), CreateRevision: r1, ModRevision: r1}}},
		{"delete", store.Event{Type: store.EventDelete, Revision: r5,
			KV:     store.KeyValue{Key: "/svc/a", Value: []byte("new"), CreateRevision: r1, ModRevision: r5},
			PrevKV: &store.KeyValue{Key: "/svc/a", Value: []byte("new"), CreateRevision: r1, ModRevision: r4}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := recv(t, ch); !equalEvent(got, tc.want) {
				t.Fatalf("got %s\nwant %s", fmtEvent(got), fmtEvent(tc.want))
			}
		})
	}
	expectQuiet(t, ch)
}

func equalEvent(a, b store.Event) bool {
	if a.Type != b.Type || a.Revision != b.Revision || !equalKV(a.KV, b.KV) || (a.PrevKV == nil) != (b.PrevKV == nil) {
		return false
	}
	return a.PrevKV == nil || equalKV(*a.PrevKV, *b.PrevKV)
}

func fmtEvent(ev store.Event) string {
	s := fmt.Sprintf("{type %d rev %d kv %s=%q c%d m%d", ev.Type, ev.Revision, ev.KV.Key, ev.KV.Value, ev.KV.CreateRevision, ev.KV.ModRevision)
	if ev.PrevKV != nil {
		s += fmt.Sprintf(" prev %q c%d m%d", ev.PrevKV.Value, ev.PrevKV.CreateRevision, ev.PrevKV.ModRevision)
	}
	if ev.Err != nil {
		s += " err " + ev.Err.Error()
	}
	return s + "}"
}

// TestWatchReplayThenLive starts watches from old revisions while a writer
// keeps committing: each gets every revision after its start once, in order,
// across the switch from the log to the live stream.
func TestWatchReplayThenLive(t *testing.T) {
	const before, during = 300, 300
	s := storetest.MustOpenBolt(t)
	ctx := testCtx(t)
	base, _ := s.Revision(ctx)
	for i := range before {
		put(t, s, fmt.Sprintf("/k/%d", i%17), "v")
	}
	writerDone := make(chan error, 1)
	go func() {
		for i := range during {
			if _, err := s.Update(ctx, func(tx store.Txn) error {
				return tx.Put(fmt.Sprintf("/k/%d", i%17), []byte("w"))
			}); err != nil {
				writerDone <- err
				return
			}
		}
		writerDone <- nil
	}()
	for _, from := range []int64{base, base + 150, base + before} {
		t.Run(fmt.Sprintf("from %d", from), func(t *testing.T) {
			ch, err := s.Watch(ctx, "/k/", from, store.WatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for want := from + 1; want <= base+before+during; want++ {
				ev := recv(t, ch)
				if ev.Type != store.EventPut || ev.Revision != want || ev.KV.ModRevision != want {
					t.Fatalf("got %s, want a put at revision %d", fmtEvent(ev), want)
				}
			}
		})
	}
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
}

func TestWatchRevisionErrors(t *testing.T) {
	s := storetest.MustOpenBoltAt(t, filepath.Join(t.TempDir(), "s.db"), store.BoltOptions{NoSync: true, HistorySize: 5})
	ctx := testCtx(t)
	var cur int64
	for range 20 {
		cur = put(t, s, "/a", "v")
	}
	tests := []struct {
		name    string
		from    int64
		wantErr error // nil: Watch succeeds
	}{
		{"compacted", 3, store.ErrCompacted},
		{"just compacted", cur - 6, store.ErrCompacted},
		{"oldest resumable", cur - 5, nil},
		{"current", cur, nil},
		{"future", cur + 1, store.ErrFutureRevision},
		{"negative", -1, errors.New("any")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := s.Watch(ctx, "/", tc.from, store.WatchOptions{})
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("Watch(%d) = %v", tc.from, err)
			case tc.wantErr == nil:
				for want := tc.from + 1; want <= cur; want++ {
					if ev := recv(t, ch); ev.Revision != want {
						t.Fatalf("got %s, want revision %d", fmtEvent(ev), want)
					}
				}
			case err == nil:
				t.Fatalf("Watch(%d) succeeded, want %v", tc.from, tc.wantErr)
			case tc.wantErr.Error() != "any" && !errors.Is(err, tc.wantErr):
				t.Fatalf("Watch(%d) = %v, want %v", tc.from, err, tc.wantErr)
			}
		})
	}
}

func TestWatchResumesAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s := storetest.MustOpenBoltAt(t, path, store.BoltOptions{})
	r1 := put(t, s, "/a", "1")
	seen := put(t, s, "/a", "2") // the last revision a client saw
	r3 := put(t, s, "/b", "3")
	r4 := del(t, s, "/a")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = storetest.MustOpenBoltAt(t, path, store.BoltOptions{})
	ch, err := s.Watch(testCtx(t), "/", seen, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r5 := put(t, s, "/c", "4")
	want := []store.Event{
		{Type: store.EventPut, Revision: r3, KV: store.KeyValue{Key: "/b", Value: []byte("3"), CreateRevision: r3, ModRevision: r3}},
		{Type: store.EventDelete, Revision: r4, KV: store.KeyValue{Key: "/a", Value: []byte("2"), CreateRevision: r1, ModRevision: r4},
			PrevKV: &store.KeyValue{Key: "/a", Value: []byte("2"), CreateRevision: r1, ModRevision: seen}},
		{Type: store.EventPut, Revision: r5, KV: store.KeyValue{Key: "/c", Value: []byte("4"), CreateRevision: r5, ModRevision: r5}},
	}
	for i, w := range want {
		if got := recv(t, ch); !equalEvent(got, w) {
			t.Fatalf("event %d: got %s\nwant %s", i, fmtEvent(got), fmtEvent(w))
		}
	}
}

// TestSlowWatcherIsDropped: a live watcher that never reads fills its buffer
// and is dropped, without slowing the writers or a fast watcher; it then
// gets every event it had buffered, the error, and a closed channel.
func TestSlowWatcherIsDropped(t *testing.T) {
	const buf, writes = 8, 50
	s := storetest.MustOpenBoltAt(t, filepath.Join(t.TempDir(), "s.db"), store.BoltOptions{NoSync: true, WatchBuffer: buf})
	ctx := testCtx(t)
	base, _ := s.Revision(ctx)
	slow, err := s.Watch(ctx, "/", 0, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fast, err := s.Watch(ctx, "/", 0, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The writer goes in lock step with the fast watcher (so that it is
	// never dropped) while the slow one never reads.
	start := time.Now()
	for i := range writes {
		rev := put(t, s, fmt.Sprintf("/k%d", i), "v")
		if ev := recv(t, fast); ev.Type != store.EventPut || ev.Revision != rev {
			t.Fatalf("fast watcher got %s, want put %d", fmtEvent(ev), rev)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("writes took %v with a stuck watcher", d)
	}
	for want := base + 1; want <= base+buf; want++ {
		if ev := recv(t, slow); ev.Type != store.EventPut || ev.Revision != want {
			t.Fatalf("slow watcher got %s, want buffered put %d", fmtEvent(ev), want)
		}
	}
	if ev := recv(t, slow); ev.Type != store.EventError || !errors.Is(ev.Err, store.ErrWatcherTooSlow) {
		t.Fatalf("slow watcher got %s, want ErrWatcherTooSlow", fmtEvent(ev))
	}
	expectClosed(t, slow)
}

// TestSlowReplayingWatcherIsDropped: a watcher replaying a long history that
// it does not read falls behind the live stream and is dropped; what it gets
// before the error is still gap-free.
func TestSlowReplayingWatcherIsDropped(t *testing.T) {
	const buf = 4
	s := storetest.MustOpenBoltAt(t, filepath.Join(t.TempDir(), "s.db"), store.BoltOptions{NoSync: true, WatchBuffer: buf})
	ctx := testCtx(t)
	base, _ := s.Revision(ctx)
	for range 20 {
		put(t, s, "/a", "v")
	}
	ch, err := s.Watch(ctx, "/", base, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 * buf {
		put(t, s, "/a", "live")
	}
	want := base + 1
	for {
		ev := recv(t, ch)
		if ev.Type == store.EventError {
			if !errors.Is(ev.Err, store.ErrWatcherTooSlow) {
				t.Fatalf("got %s, want ErrWatcherTooSlow", fmtEvent(ev))
			}
			break
		}
		if ev.Revision != want {
			t.Fatalf("got %s, want revision %d", fmtEvent(ev), want)
		}
		want++
	}
	expectClosed(t, ch)
}

// TestProgressNotify: progress events come periodically, at the current
// revision, and after every earlier event of the watch.
func TestProgressNotify(t *testing.T) {
	s := storetest.MustOpenBoltAt(t, filepath.Join(t.TempDir(), "s.db"),
		store.BoltOptions{NoSync: true, ProgressInterval: 10 * time.Millisecond})
	ctx := testCtx(t)
	base, _ := s.Revision(ctx)
	plain, err := s.Watch(ctx, "/", 0, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.Watch(ctx, "/watched/", 0, store.WatchOptions{ProgressNotify: true})
	if err != nil {
		t.Fatal(err)
	}
	var last, progress int64
	var progressEvents int
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 40 {
			key := "/other"
			if i%4 == 0 {
				key = "/watched/x"
			}
			if _, err := s.Update(ctx, func(tx store.Txn) error { return tx.Put(key, []byte("v")) }); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	<-done
	final, _ := s.Revision(ctx)
	for progress < final {
		ev := recv(t, ch)
		switch ev.Type {
		case store.EventProgress:
			if ev.Revision < last || ev.Revision < progress {
				t.Fatalf("progress at %d after an event at %d / progress at %d", ev.Revision, last, progress)
			}
			progress = ev.Revision
			progressEvents++
		case store.EventPut:
			if ev.Revision <= progress || ev.Revision <= last {
				t.Fatalf("put at %d after progress at %d / put at %d", ev.Revision, progress, last)
			}
			last = ev.Revision
		default:
			t.Fatalf("unexpected %s", fmtEvent(ev))
		}
	}
	if progressEvents < 2 {
		t.Fatalf("%d progress events, want periodic ones", progressEvents)
	}
	// A watch that did not ask for progress gets none.
	for range final - base {
		if ev := recv(t, plain); ev.Type != store.EventPut {
			t.Fatalf("watch without ProgressNotify got %s", fmtEvent(ev))
		}
	}
	expectQuiet(t, plain)
}

func TestWatchEndsWithContext(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	ch, err := s.Watch(ctx, "/", 0, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rev, ev := put(t, s, "/a", "1"), recv(t, ch); ev.Revision != rev {
		t.Fatalf("got %s", fmtEvent(ev))
	}
	cancel()
	expectClosed(t, ch)
	put(t, s, "/a", "2") // the store goes on without the watcher
}

func TestCloseEndsWatches(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	ch, err := s.Watch(testCtx(t), "/", 0, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ev, ok := <-ch
	if ok && (ev.Type != store.EventError || !errors.Is(ev.Err, store.ErrClosed)) {
		t.Fatalf("after Close got %s, want ErrClosed or a closed channel", fmtEvent(ev))
	}
	if ok {
		expectClosed(t, ch)
	}
}

// TestWatchQueuedDuringReplayIsNotLost: events committed while a watcher is
// still replaying (blocked on its full channel) are queued and delivered
// after the replay, without a gap.
func TestWatchQueuedDuringReplayIsNotLost(t *testing.T) {
	const buf = 10
	s := storetest.MustOpenBoltAt(t, filepath.Join(t.TempDir(), "s.db"), store.BoltOptions{NoSync: true, WatchBuffer: buf})
	ctx := testCtx(t)
	base, _ := s.Revision(ctx)
	for range buf + 5 {
		put(t, s, "/a", "old")
	}
	ch, err := s.Watch(ctx, "/", base, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The replay fills the channel and blocks; these go to the queue.
	var last int64
	for range buf - 1 {
		last = put(t, s, "/a", "new")
	}
	for want := base + 1; want <= last; want++ {
		if ev := recv(t, ch); ev.Type != store.EventPut || ev.Revision != want {
			t.Fatalf("got %s, want a put at %d", fmtEvent(ev), want)
		}
	}
	expectQuiet(t, ch)
}

// TestWatchFromCommittedButUnpublishedRevision starts watches in the window
// between a disk commit and the publication of its events (a List can
// return such a revision): the watch from that revision must not repeat its
// events, and the watch from the one before must get them once.
func TestWatchFromCommittedButUnpublishedRevision(t *testing.T) {
	s := storetest.MustOpenBolt(t)
	ctx := testCtx(t)
	type started struct {
		from int64
		ch   <-chan store.Event
		err  error
	}
	got := make(chan []started, 1)
	var once bool
	store.SetCommitHook(s, func(rev int64) {
		if once {
			return
		}
		once = true
		var st []started
		for _, from := range []int64{rev, rev - 1} {
			ch, err := s.Watch(ctx, "/", from, store.WatchOptions{})
			st = append(st, started{from, ch, err})
		}
		got <- st
	})
	r1 := put(t, s, "/a", "1")
	r2 := put(t, s, "/b", "2")
	for _, st := range <-got {
		if st.err != nil {
			t.Fatalf("Watch(%d) in the commit window: %v", st.from, st.err)
		}
		for want := st.from + 1; want <= r2; want++ {
			if ev := recv(t, st.ch); ev.Revision != want {
				t.Fatalf("watch from %d (committed %d): got %s, want revision %d", st.from, r1, fmtEvent(ev), want)
			}
		}
		expectQuiet(t, st.ch)
	}
}
