package server

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiff-dev/skiff/apiserver/pki"
)

// TestDataDirLock: one holder at a time, in one process too (flock
// belongs to the open file); the refusal names the holder's pid; release
// lets the next one in.
func TestDataDirLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if _, err := lockDataDir(dir, false); err == nil {
		t.Fatal("locked a data dir that does not exist without create")
	}
	l, err := lockDataDir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, lockFile))
	if err != nil || strings.TrimSpace(string(b)) != fmt.Sprint(os.Getpid()) {
		t.Errorf("lock file holds %q (%v), want the pid", b, err)
	}
	want := fmt.Sprintf("data dir %s in use by pid %d", dir, os.Getpid())
	if _, err := lockDataDir(dir, true); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("second lock: %v, want %q", err, want)
	}
	if err := l.release(); err != nil {
		t.Fatal(err)
	}
	if err := l.release(); err != nil {
		t.Errorf("second release: %v", err)
	}
	l2, err := lockDataDir(dir, false)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	if err := l2.release(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckStoreFile: only credentials without a (non-empty) database are
// refused, and --reset-store lets them start.
func TestCheckStoreFile(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	write := func(t *testing.T, path string, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name       string
		creds, db  bool
		dbData     string
		reset, ok  bool
		wantInText string
	}{
		{name: "first start", ok: true},
		{name: "database without credentials", db: true, dbData: "x", ok: true},
		{name: "credentials and database", creds: true, db: true, dbData: "x", ok: true},
		{name: "credentials, no database", creds: true, wantInText: "is missing"},
		{name: "credentials, empty database", creds: true, db: true, wantInText: "is empty (0 bytes)"},
		{name: "credentials, no database, reset", creds: true, reset: true, ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.creds {
				write(t, filepath.Join(dir, pki.AdminTokenFile), "t")
			}
			if tc.db {
				write(t, filepath.Join(dir, dbFile), tc.dbData)
			}
			err := checkStoreFile(dir, tc.reset, log)
			if tc.ok != (err == nil) {
				t.Fatalf("checkStoreFile: %v, want ok=%v", err, tc.ok)
			}
			if err != nil && (!strings.Contains(err.Error(), tc.wantInText) || !strings.Contains(err.Error(), pki.AdminTokenFile)) {
				t.Errorf("refusal %q does not say %q and name the credentials", err, tc.wantInText)
			}
		})
	}
}

// TestBboltModVersion: the version the refusal paragraph falls back to is
// go.mod's.
func TestBboltModVersion(t *testing.T) {
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if want := "go.etcd.io/bbolt " + bboltModVersion + "\n"; !strings.Contains(string(b), want) {
		t.Errorf("go.mod does not require %q: update bboltModVersion", strings.TrimSpace(want))
	}
}
