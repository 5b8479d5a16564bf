package pki

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// File modes. Keys, tokens and the kubeconfig (which holds the admin token)
// are readable by the owner only; certificates are public.
const (
	dirMode    fs.FileMode = 0o700
	secretMode fs.FileMode = 0o600
	publicMode fs.FileMode = 0o644
)

// tmpPrefix starts the name of every temporary file writeFileAtomic makes,
// so that one left by a crash can be recognised and removed.
const tmpPrefix = ".skiff-tmp-"

// writeFileAtomic writes data to path so that path holds either its old
// content or all of data, never a part: it writes a temporary file in the
// same directory, syncs it, renames it over path and syncs the directory.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, tmpPrefix+base+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// readOptional reads a file, reporting ok=false when it does not exist.
func readOptional(path string) ([]byte, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	return b, true, nil
}

// ensureDir creates dir with mode 0700, or tightens an existing one that
// others can read.
func ensureDir(log *slog.Logger, dir string) error {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return tighten(log, dir, dirMode)
}

// tighten removes group and other permissions from path when it has more
// than want allows.
func tighten(log *slog.Logger, path string, want fs.FileMode) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Mode().Perm()&^want == 0 {
		return nil
	}
	log.Warn("tightening permissions", "path", path, "was", st.Mode().Perm().String(), "now", want.String())
	if err := os.Chmod(path, want); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	return nil
}

// removeStaleTemps deletes temporary files a crashed writeFileAtomic left
// in dir.
func removeStaleTemps(log *slog.Logger, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), tmpPrefix) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		log.Info("removing temporary file left by an interrupted write", "path", p)
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", p, err)
		}
	}
	return nil
}
