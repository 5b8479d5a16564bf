package server

// The data dir's guards, which Start runs before it touches anything:
//
//   - an exclusive lock (flock on <data-dir>/lock, holding the pid), so a
//     second server (or `skiff backup`) on a data dir in use is refused at
//     once, before it listens or rewrites a certificate or the kubeconfig;
//   - credentials (the CA, the tokens) without their database, or with a
//     0-byte one, are refused unless --reset-store: such a start would
//     serve an empty cluster under the old credentials;
//   - a database that does not open (damaged, not a bbolt file, not a
//     file) is refused with one paragraph naming the file and what to do.
//
// Backup and Restore (`skiff backup`) work offline, under the same lock.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/apiserver/pki"
	"github.com/skiff-dev/skiff/store"
)

// Paths under the data dir.
const (
	lockFile = "lock"
	dbFile   = "db/skiff.db"
)

// credentialFiles are the files whose presence says the data dir has run
// a server before: a database should be next to them.
var credentialFiles = []string{pki.CACertFile, pki.CAKeyFile, pki.AdminTokenFile, pki.NodeTokenFile, pki.DashboardTokenFile, EncryptionConfigFile}

// dataDirLock is a data dir's exclusive lock: an flock of <dir>/lock,
// held while the file is open. flock belongs to the open file, so two
// locks in one process conflict too.
type dataDirLock struct{ f *os.File }

// lockDataDir takes dir's lock without waiting and writes this process's
// pid into the lock file. create makes dir when it is missing.
func lockDataDir(dir string, create bool) (*dataDirLock, error) {
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
	} else if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("data dir %s is not a directory", dir)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir %s: lock: %w", dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("data dir %s in use by %s (it holds %s); stop it first", dir, lockHolder(f), path)
		}
		return nil, fmt.Errorf("data dir %s: lock %s: %w", dir, path, err)
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("data dir %s: lock: %w", dir, err)
	}
	if _, err := f.WriteAt(pid, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("data dir %s: lock: %w", dir, err)
	}
	return &dataDirLock{f: f}, nil
}

// lockHolder names the process whose pid the lock file holds.
func lockHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
		return fmt.Sprintf("pid %d", pid)
	}
	return "another process"
}

// release empties the lock file and drops the lock; nil does nothing.
func (l *dataDirLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close()
	l.f = nil
	return err
}

// checkStoreFile refuses a data dir whose credentials are there but whose
// database is missing or empty, unless reset says to start empty.
func checkStoreFile(dir string, reset bool, log *slog.Logger) error {
	db := filepath.Join(dir, dbFile)
	st, err := os.Stat(db)
	state := "is missing"
	switch {
	case err == nil && (st.Size() > 0 || !st.Mode().IsRegular()):
		if reset {
			log.Info("--reset-store has no effect: the data dir has its database", "path", db)
		}
		return nil // OpenBolt opens it or says why not
	case err == nil:
		state = "is empty (0 bytes)"
	case !errors.Is(err, fs.ErrNotExist):
		return nil // OpenBolt reports it
	}
	var creds []string
	for _, f := range credentialFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			creds = append(creds, f)
		}
	}
	if len(creds) == 0 {
		return nil // a first start
	}
	if reset {
		log.Warn("--reset-store: starting with an empty store under the data dir's existing credentials; every object is gone",
			"path", db, "credentials", strings.Join(creds, ","))
		return nil
	}
	return fmt.Errorf("server: the data dir %s holds credentials (%s) but its database %s %s. "+
		"Starting would serve an empty cluster under the old credentials, so the server refuses. "+
		"If the database was lost, restore a backup with `skiff backup --restore FILE --data-dir %s`; "+
		"to start an empty cluster on purpose, start once with --reset-store",
		dir, strings.Join(creds, ", "), db, state, dir)
}

// storeOpenError is the paragraph for a database that does not open.
func storeOpenError(dir, db string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("server: %w", err)
	}
	return fmt.Errorf("server: %w. "+
		"The database file is damaged, or is not a database, and the server does not start over it. "+
		"Next steps: restore a backup with `skiff backup --restore FILE --data-dir %s`; "+
		"or check the file with bbolt's own tool, `go run go.etcd.io/bbolt/cmd/bbolt@%s check %s`; "+
		"or, to start an empty cluster under the same credentials, move the file away and start with --reset-store",
		err, dir, bboltVersion(), db)
}

// bboltModVersion is go.mod's go.etcd.io/bbolt, for a binary built
// without module information (a test of datadir_test.go keeps it in step).
const bboltModVersion = "v1.5.0"

// bboltVersion is the version of go.etcd.io/bbolt in this binary.
func bboltVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "go.etcd.io/bbolt" && d.Version != "" && d.Version != "(devel)" {
				return d.Version
			}
		}
	}
	return bboltModVersion
}

// Backup writes a consistent copy of the database of dataDir, whose server
// must be stopped (Backup takes the data dir's lock), to file: one bbolt
// read transaction copied to a temporary file next to file, synced, then
// renamed over it. The copy holds the objects and the watch history, not
// the data dir's TLS material and tokens.
func Backup(ctx context.Context, dataDir, file string) error {
	lock, err := lockDataDir(dataDir, false)
	if err != nil {
		return fmt.Errorf("backup: %w (backups are taken with the server stopped)", err)
	}
	defer lock.release()
	db := filepath.Join(dataDir, dbFile)
	if st, err := os.Stat(db); err != nil {
		return fmt.Errorf("backup: %w", err)
	} else if st.Mode().IsRegular() && st.Size() == 0 {
		return fmt.Errorf("backup: the database %s is empty (0 bytes)", db)
	}
	s, err := store.OpenBolt(ctx, db, store.BoltOptions{})
	if err != nil {
		return fmt.Errorf("backup: %w", storeOpenError(dataDir, db, err))
	}
	defer s.Close()
	return writeFileWith(file, func(f *os.File) error {
		_, err := s.WriteTo(ctx, f)
		return err
	})
}

// Restore makes file the database of dataDir, whose server must be
// stopped (Restore takes the data dir's lock): it copies file into the
// data dir, checks the copy (store.OpenBolt and Bolt.Check: bbolt's page
// checks and the store's invariants), and renames it over db/skiff.db.
// The database it replaces stays next to it as db/skiff.db.before-restore.
func Restore(ctx context.Context, dataDir, file string) (err error) {
	lock, err := lockDataDir(dataDir, true)
	if err != nil {
		return fmt.Errorf("restore: %w (restore with the server stopped)", err)
	}
	defer lock.release()
	db := filepath.Join(dataDir, dbFile)
	if err := os.MkdirAll(filepath.Dir(db), 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	src, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer src.Close()
	tmp := db + ".restore"
	defer os.Remove(tmp)
	if err := writeFileWith(tmp, func(f *os.File) error {
		_, err := f.ReadFrom(src)
		return err
	}); err != nil {
		return fmt.Errorf("restore: copy %s: %w", file, err)
	}
	if err := checkDatabase(ctx, tmp); err != nil {
		return fmt.Errorf("restore: %s is not a database a server can start on: %w", file, err)
	}
	// The current database stays as db/skiff.db.before-restore: a hard
	// link, so that db/skiff.db is replaced in one rename; what is not a
	// file (a directory, a link) is moved aside instead.
	old := db + ".before-restore"
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if st, err := os.Lstat(db); err == nil && st.Mode().IsRegular() {
		err = os.Link(db, old)
		if err != nil {
			return fmt.Errorf("restore: keep the current database: %w", err)
		}
	} else if err == nil {
		if err := os.Rename(db, old); err != nil {
			return fmt.Errorf("restore: move %s aside: %w", db, err)
		}
	}
	if err := os.Rename(tmp, db); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return syncDir(filepath.Dir(db))
}

// checkDatabase opens the store file at path and runs its checks.
func checkDatabase(ctx context.Context, path string) error {
	if st, err := os.Stat(path); err != nil {
		return err
	} else if st.Size() == 0 {
		return errors.New("the file is empty")
	}
	s, err := store.OpenBolt(ctx, path, store.BoltOptions{})
	if err != nil {
		return err
	}
	return errors.Join(s.Check(ctx), s.Close())
}

// writeFileWith writes path through fill on a temporary file next to
// it, syncs it and renames it over path.
func writeFileWith(path string, fill func(*os.File) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if err := fill(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
