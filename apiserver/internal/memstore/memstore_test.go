package memstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/store"
)

func put(t *testing.T, s *Store, kv ...string) int64 {
	t.Helper()
	rev, err := s.Update(context.Background(), func(tx store.Txn) error {
		for i := 0; i < len(kv); i += 2 {
			if err := tx.Put(kv[i], []byte(kv[i+1])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func TestRevisionsAndOverlay(t *testing.T) {
	s := New(Options{})
	ctx := context.Background()
	r1 := put(t, s, "/a/1", "x", "/a/2", "y")
	if r1 != 2 {
		t.Fatalf("first revision %d, want 2", r1)
	}
	_, err := s.Update(ctx, func(tx store.Txn) error {
		if tx.Revision() != 3 {
			return fmt.Errorf("txn revision %d", tx.Revision())
		}
		if err := tx.Put("/a/3", []byte("z")); err != nil {
			return err
		}
		if err := tx.Delete("/a/1"); err != nil {
			return err
		}
		kvs, _ := tx.List("/a/")
		if len(kvs) != 2 || kvs[0].Key != "/a/2" || kvs[1].Key != "/a/3" {
			return fmt.Errorf("overlay list %v", kvs)
		}
		if _, ok, _ := tx.Get("/a/1"); ok {
			return errors.New("deleted key visible")
		}
		return errors.New("roll back")
	})
	if err == nil || err.Error() != "roll back" {
		t.Fatalf("Update: %v", err)
	}
	if _, err := s.Get(ctx, "/a/1"); err != nil {
		t.Fatalf("rolled-back delete took effect: %v", err)
	}
	if rev, _ := s.Revision(ctx); rev != 2 {
		t.Fatalf("revision after rollback %d", rev)
	}
	// An empty transaction commits nothing.
	if rev, err := s.Update(ctx, func(tx store.Txn) error { return nil }); err != nil || rev != 2 {
		t.Fatalf("empty txn: %d %v", rev, err)
	}
	res, _ := s.List(ctx, "/a/", store.ListOptions{Limit: 1})
	if len(res.Items) != 1 || !res.More || res.Revision != 2 {
		t.Fatalf("page 1 %+v", res)
	}
	res, _ = s.List(ctx, "/a/", store.ListOptions{Limit: 1, After: res.Items[0].Key})
	if len(res.Items) != 1 || res.More || res.Items[0].Key != "/a/2" {
		t.Fatalf("page 2 %+v", res)
	}
}

func TestWatchHistoryAndCompaction(t *testing.T) {
	s := New(Options{History: 3})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r1 := put(t, s, "/k/a", "1")
	put(t, s, "/k/b", "2")
	put(t, s, "/other", "x")
	ch, err := s.Watch(ctx, "/k/", r1, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev := <-ch
	if ev.Type != store.EventPut || ev.KV.Key != "/k/b" {
		t.Fatalf("history event %+v", ev)
	}
	put(t, s, "/k/a", "3")
	ev = <-ch
	if ev.Type != store.EventPut || ev.PrevKV == nil || string(ev.PrevKV.Value) != "1" {
		t.Fatalf("live event %+v", ev)
	}
	put(t, s, "/k/c", "4")
	put(t, s, "/k/d", "5")
	if _, err := s.Watch(ctx, "/k/", r1, store.WatchOptions{}); !errors.Is(err, store.ErrCompacted) {
		t.Fatalf("watch from compacted revision: %v", err)
	}
	if _, err := s.Watch(ctx, "/k/", 100, store.WatchOptions{}); !errors.Is(err, store.ErrFutureRevision) {
		t.Fatalf("watch from future revision: %v", err)
	}
}

func TestWatchProgressAndSlow(t *testing.T) {
	s := New(Options{ProgressInterval: 10 * time.Millisecond, WatchBuffer: 5})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := s.Watch(ctx, "/k/", 0, store.WatchOptions{ProgressNotify: true})
	if err != nil {
		t.Fatal(err)
	}
	ev := <-ch
	if ev.Type != store.EventProgress || ev.Revision != 1 {
		t.Fatalf("progress %+v", ev)
	}
	slow, err := s.Watch(ctx, "/k/", 0, store.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		put(t, s, fmt.Sprintf("/k/%d", i), "v")
	}
	var last store.Event
	for ev := range slow {
		last = ev
	}
	if last.Type != store.EventError || !errors.Is(last.Err, store.ErrWatcherTooSlow) {
		t.Fatalf("slow watcher ended with %+v", last)
	}
}
