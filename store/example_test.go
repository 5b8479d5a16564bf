package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skiff-dev/skiff/store"
)

// A write closure learns its revision before commit, so it can embed it in
// the value (as the API server does with metadata.resourceVersion), and it
// either commits all of its writes or none.
func ExampleBolt_Update() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "store-example")
	defer os.RemoveAll(dir)
	s, err := store.OpenBolt(ctx, filepath.Join(dir, "db"), store.BoltOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	rev, err := s.Update(ctx, func(tx store.Txn) error {
		v := fmt.Sprintf(`{"resourceVersion":"%d"}`, tx.Revision())
		if err := tx.Put("/services/default/web", []byte(v)); err != nil {
			return err
		}
		return tx.Put("/ipaddresses/10.96.0.10", []byte("web"))
	})
	fmt.Println(rev, err)

	kv, _ := s.Get(ctx, "/services/default/web")
	fmt.Printf("%s create=%d mod=%d\n", kv.Value, kv.CreateRevision, kv.ModRevision)

	// A closure that fails writes nothing.
	_, err = s.Update(ctx, func(tx store.Txn) error {
		_ = tx.Put("/services/default/db", []byte("{}"))
		return tx.Delete("/ipaddresses/10.96.0.99") // absent
	})
	_, getErr := s.Get(ctx, "/services/default/db")
	fmt.Println(errors.Is(err, store.ErrNotFound), errors.Is(getErr, store.ErrNotFound))
	// Output:
	// 2 <nil>
	// {"resourceVersion":"2"} create=2 mod=2
	// true true
}

// A watch from a revision the caller has seen replays the history after it,
// then goes on live.
func ExampleBolt_Watch() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, _ := os.MkdirTemp("", "store-example")
	defer os.RemoveAll(dir)
	s, err := store.OpenBolt(ctx, filepath.Join(dir, "db"), store.BoltOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	write := func(fn func(store.Txn) error) int64 {
		rev, err := s.Update(ctx, fn)
		if err != nil {
			fmt.Println(err)
		}
		return rev
	}
	seen := write(func(tx store.Txn) error { return tx.Put("/pods/a", []byte("v1")) })
	write(func(tx store.Txn) error { return tx.Put("/pods/a", []byte("v2")) })

	events, err := s.Watch(ctx, "/pods/", seen, store.WatchOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	write(func(tx store.Txn) error { return tx.Delete("/pods/a") })
	for range 2 {
		ev := <-events
		fmt.Printf("type=%d rev=%d key=%s value=%s prev=%s\n", ev.Type, ev.Revision, ev.KV.Key, ev.KV.Value, ev.PrevKV.Value)
	}
	// Output:
	// type=1 rev=3 key=/pods/a value=v2 prev=v1
	// type=2 rev=4 key=/pods/a value=v2 prev=v2
}
