package store

import (
	"context"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestCheckFindsBrokenInvariants breaks the layout behind the store's back
// and expects Check to notice each break.
func TestCheckFindsBrokenInvariants(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(tx *bolt.Tx) error
	}{
		{"log gap", func(tx *bolt.Tx) error { return tx.Bucket(bucketLog).Delete(revKey(3)) }},
		{"log entry past the revision", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketLog).Put(revKey(99), tx.Bucket(bucketLog).Get(revKey(3)))
		}},
		{"key missing", func(tx *bolt.Tx) error { return tx.Bucket(bucketKV).Delete([]byte("/b")) }},
		{"key with a wrong revision", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketKV).Put([]byte("/b"), encodeKV(3, 2, []byte("b")))
		}},
		{"key with a wrong value", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketKV).Put([]byte("/b"), encodeKV(3, 3, []byte("x")))
		}},
		{"deleted key present", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketKV).Put([]byte("/a"), encodeKV(2, 2, []byte("a")))
		}},
		{"meta revision behind", func(tx *bolt.Tx) error { return putMetaInt(tx.Bucket(bucketMeta), metaRev, 3) }},
		{"corrupt log entry", func(tx *bolt.Tx) error { return tx.Bucket(bucketLog).Put(revKey(2), []byte{logFormat, 5}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := OpenBolt(ctx, filepath.Join(t.TempDir(), "s.db"), BoltOptions{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, fn := range []func(Txn) error{
				func(tx Txn) error { return tx.Put("/a", []byte("a")) }, // 2
				func(tx Txn) error { return tx.Put("/b", []byte("b")) }, // 3
				func(tx Txn) error { return tx.Delete("/a") },           // 4
			} {
				if _, err := s.Update(ctx, fn); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Check(ctx); err != nil {
				t.Fatalf("check before the break: %v", err)
			}
			if err := s.db.Update(tc.corrupt); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(ctx); err == nil {
				t.Fatal("Check passed a broken store")
			} else {
				t.Log(err)
			}
		})
	}
}
