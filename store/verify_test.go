package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestVerifyFile: a store file written by OpenBolt passes, with pages
// enough for branch pages; the damage of TestVerifyFileDamage does not.
func TestVerifyFile(t *testing.T) {
	path := verifyFixture(t)
	if err := VerifyFile(path); err != nil {
		t.Fatal(err)
	}
	if err := VerifyFile(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := VerifyFile(empty); err != nil {
		t.Errorf("a 0-byte file is a new database: %v", err)
	}
}

// verifyFixture is a closed store file of 400 keys of 1 KB.
func verifyFixture(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := OpenBolt(ctx, path, BoltOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	value := make([]byte, 1000)
	if _, err := s.Update(ctx, func(tx Txn) error {
		for i := range 400 {
			if err := tx.Put(fmt.Sprintf("/k/%04d", i), value); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestVerifyFileDamage: each damage is an ErrCorrupt from VerifyFile and
// from OpenBolt, never a panic or a fault.
func TestVerifyFileDamage(t *testing.T) {
	src, err := os.ReadFile(verifyFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.LittleEndian.Uint32(src[bbHeaderSize+8:]))
	meta := func(b []byte) bbMeta { m, _ := parseMeta(b); return m }
	newest := 0
	if meta(src[ps:]).txid > meta(src).txid {
		newest = 1
	}
	m := meta(src[newest*ps:])
	page := func(b []byte, id uint64) []byte { return b[int(id)*ps : (int(id)+1)*ps] }
	// The kv bucket's root: the root bucket's leaf lists kv, log, meta.
	kvRoot := func(b []byte) uint64 {
		root := page(b, m.root)
		for i := range int(binary.LittleEndian.Uint16(root[10:])) {
			e := root[bbHeaderSize+i*bbElementSize:]
			pos, ks := binary.LittleEndian.Uint32(e[4:]), binary.LittleEndian.Uint32(e[8:])
			if string(e[pos:pos+ks]) == "kv" {
				return binary.LittleEndian.Uint64(e[pos+ks:])
			}
		}
		t.Fatal("no kv bucket")
		return 0
	}
	for _, tc := range []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"short", func(b []byte) []byte { return b[:100] }},
		{"truncated", func(b []byte) []byte { return b[:int(m.pgid)*ps-1] }},
		{"no meta page", func(b []byte) []byte { clear(b[:2*ps]); return b }},
		{"page size", func(b []byte) []byte {
			for i := range 2 {
				mp := b[i*ps+bbHeaderSize:]
				binary.LittleEndian.PutUint32(mp[8:], 3000)
				binary.LittleEndian.PutUint64(mp[56:], meta(b[i*ps:]).sum)
			}
			return b
		}},
		{"root page out of range", func(b []byte) []byte {
			for i := range 2 {
				mp := b[i*ps+bbHeaderSize:]
				binary.LittleEndian.PutUint64(mp[16:], 1<<40)
				binary.LittleEndian.PutUint64(mp[56:], meta(b[i*ps:]).sum)
			}
			return b
		}},
		{"page id", func(b []byte) []byte { binary.LittleEndian.PutUint64(page(b, kvRoot(b)), 7777); return b }},
		{"page type", func(b []byte) []byte { binary.LittleEndian.PutUint16(page(b, kvRoot(b))[8:], 0x40); return b }},
		{"child out of range", func(b []byte) []byte {
			p := page(b, kvRoot(b))
			binary.LittleEndian.PutUint64(p[bbHeaderSize+8:], 1<<50)
			return b
		}},
		{"child twice", func(b []byte) []byte {
			p := page(b, kvRoot(b))
			copy(p[bbHeaderSize+bbElementSize+8:bbHeaderSize+bbElementSize+16], p[bbHeaderSize+8:bbHeaderSize+16])
			return b
		}},
		{"key order", func(b []byte) []byte {
			p := page(b, kvRoot(b))
			child := page(b, binary.LittleEndian.Uint64(p[bbHeaderSize+8:]))
			e := child[bbHeaderSize+bbElementSize:] // the second key
			pos := binary.LittleEndian.Uint32(e[4:])
			e[pos+3] = 0 // "/k/0001" < "/k/0000"
			return b
		}},
		{"value size", func(b []byte) []byte {
			p := page(b, kvRoot(b))
			child := page(b, binary.LittleEndian.Uint64(p[bbHeaderSize+8:]))
			binary.LittleEndian.PutUint32(child[bbHeaderSize+12:], 999) // the first value
			return b
		}},
		{"element count", func(b []byte) []byte {
			p := page(b, kvRoot(b))
			child := page(b, binary.LittleEndian.Uint64(p[bbHeaderSize+8:]))
			binary.LittleEndian.PutUint16(child[10:], 0xfff0)
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.damage(append([]byte(nil), src...))
			path := filepath.Join(t.TempDir(), "s.db")
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			err := VerifyFile(path)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("VerifyFile: %v, want ErrCorrupt", err)
			}
			t.Log(err)
			if s, err := OpenBolt(context.Background(), path, BoltOptions{NoSync: true}); !errors.Is(err, ErrCorrupt) {
				if s != nil {
					s.Close()
				}
				t.Errorf("OpenBolt: %v, want ErrCorrupt", err)
			}
		})
	}
	t.Run("a directory", func(t *testing.T) {
		if err := VerifyFile(t.TempDir()); !errors.Is(err, ErrCorrupt) {
			t.Errorf("VerifyFile: %v, want ErrCorrupt", err)
		}
	})
}
