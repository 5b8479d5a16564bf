package pki

import (
	"os"
	"path/filepath"
	"testing"
)

func TestServiceAccountKey(t *testing.T) {
	dir := t.TempDir()
	k1, err := ServiceAccountKey(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ServiceAccountKeyFile)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v, want mode 0600", fi, err)
	}
	// Kept: the second call reads the same key.
	k2, err := ServiceAccountKey(dir, nil)
	if err != nil || !k1.Equal(k2) {
		t.Fatalf("second call: %v, same key %v", err, k1.Equal(k2))
	}
	// A loose mode is tightened.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ServiceAccountKey(dir, nil); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v not tightened", fi.Mode().Perm())
	}
	// Deleted: a new key.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	k3, err := ServiceAccountKey(dir, nil)
	if err != nil || k3.Equal(k1) {
		t.Fatalf("after delete: %v, same key %v", err, k3.Equal(k1))
	}
	// Garbage is refused, naming the file.
	if err := os.WriteFile(path, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ServiceAccountKey(dir, nil); err == nil {
		t.Fatal("a junk key file accepted")
	}
}
