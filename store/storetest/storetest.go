// Package storetest has test helpers for code that uses package store.
//
// # Invariants
//
// Every store a helper opens lives in the test's own t.TempDir(), and is
// checked (store.Bolt.Check: bbolt's page checks plus the store's log and
// revision invariants) and closed by a t.Cleanup; the file is then reopened
// and checked once more, so a test also proves that what it left on disk is
// consistent.
package storetest

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/store"
)

// MustOpenBolt opens a new store in t.TempDir() with fsync off (the crash
// tests turn it on explicitly) and registers its check and close.
func MustOpenBolt(t testing.TB) *store.Bolt {
	t.Helper()
	return MustOpenBoltAt(t, filepath.Join(t.TempDir(), "store.db"), store.BoltOptions{NoSync: true})
}

// MustOpenBoltAt opens the store at path with opts and registers a cleanup
// that checks and closes it, then reopens the file and checks it again. A
// test may Close the store itself; the cleanup then only checks the file.
func MustOpenBoltAt(t testing.TB, path string, opts store.BoltOptions) *store.Bolt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := store.OpenBolt(ctx, path, opts)
	if err != nil {
		t.Fatalf("storetest: open %s: %v", path, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Check(ctx); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("storetest: check %s: %v", path, err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("storetest: close %s: %v", path, err)
		}
		if err := CheckFile(ctx, path, opts); err != nil {
			t.Errorf("storetest: %v", err)
		}
	})
	return s
}

// CheckFile opens the closed store file at path, checks it and closes it.
func CheckFile(ctx context.Context, path string, opts store.BoltOptions) error {
	s, err := store.OpenBolt(ctx, path, opts)
	if err != nil {
		return err
	}
	err = s.Check(ctx)
	return errors.Join(err, s.Close())
}
