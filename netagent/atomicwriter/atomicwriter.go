// Package atomicwriter writes a set of files into a directory so that a
// reader sees either the old set or the new one, never a mix: the
// kubelet's AtomicWriter, which ConfigMap and Secret volumes use.
//
// Layout of a directory written with Write:
//
//	..2026_12_02_00_20_00.123456789/  the files of one version (timestamped)
//	..data -> ..2026_12_02_00_20_00.123456789
//	key    -> ..data/key               one symlink per top-level path
//
// An update writes a new timestamped directory, points a temporary
// symlink ..data_tmp at it and renames it over ..data (one atomic
// rename(2)), then adds the symlinks of new top-level paths, removes
// those of paths that are gone, and removes the old version. A reader
// that opened a file keeps the old version's content; one that opens it
// after the rename gets the new one. A bind mount of one file (subPath)
// holds the inode it was given and is never updated.
//
// Names starting with ".." are the writer's own: payload paths may not
// start with "..", nor contain a ".." element, nor be absolute.
package atomicwriter

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// File is one file of a payload.
type File struct {
	Data []byte
	Mode fs.FileMode // permission bits
}

const (
	dataDir    = "..data"
	newDataDir = "..data_tmp"
)

// ValidatePath checks a payload path as the kubelet does.
func ValidatePath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case filepath.IsAbs(p):
		return fmt.Errorf("path %q is absolute", p)
	case len(p) > 4096:
		return fmt.Errorf("path %q is longer than 4096 bytes", p)
	case strings.HasPrefix(p, ".."):
		return fmt.Errorf("path %q starts with '..'", p)
	}
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return fmt.Errorf("path %q contains '..'", p)
		}
		if len(e) > 255 {
			return fmt.Errorf("path %q has an element longer than 255 bytes", p)
		}
	}
	return nil
}

// Write makes dir hold exactly payload (paths relative to dir), creating
// dir (mode 0755) if needed. It reports whether anything changed; a
// payload equal to what dir holds (data and modes) writes nothing.
func Write(dir string, payload map[string]File) (changed bool, err error) {
	for p := range payload {
		if err := ValidatePath(p); err != nil {
			return false, err
		}
		if filepath.Clean(p) != p {
			return false, fmt.Errorf("path %q is not clean", p)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	old, err := os.Readlink(filepath.Join(dir, dataDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if old != "" {
		same, err := holds(filepath.Join(dir, old), payload)
		if err != nil {
			return false, err
		}
		if same && linksMatch(dir, payload) {
			return false, nil
		}
	}
	ts, err := os.MkdirTemp(dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return false, err
	}
	if err := os.Chmod(ts, 0o755); err != nil {
		return false, err
	}
	if err := writePayload(ts, payload); err != nil {
		os.RemoveAll(ts)
		return false, err
	}
	tmp := filepath.Join(dir, newDataDir)
	_ = os.Remove(tmp)
	if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
		os.RemoveAll(ts)
		return false, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, dataDir)); err != nil {
		os.Remove(tmp)
		os.RemoveAll(ts)
		return false, err
	}
	top := topLevel(payload)
	for name := range top {
		link := filepath.Join(dir, name)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join(dataDir, name), link); err != nil {
			return true, err
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return true, err
	}
	for _, e := range ents {
		n := e.Name()
		switch {
		case strings.HasPrefix(n, ".."):
			if n != dataDir && n != filepath.Base(ts) && e.IsDir() && strings.HasPrefix(n, "..2") {
				// An old version (or one a crash left behind).
				if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
					return true, err
				}
			}
		case !top[n] && e.Type()&fs.ModeSymlink != 0:
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}

func topLevel(payload map[string]File) map[string]bool {
	top := map[string]bool{}
	for p := range payload {
		first, _, _ := strings.Cut(p, "/")
		top[first] = true
	}
	return top
}

// linksMatch reports whether dir's user-visible symlinks are those of
// payload's top-level paths.
func linksMatch(dir string, payload map[string]File) bool {
	top := topLevel(payload)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		if !top[e.Name()] || e.Type()&fs.ModeSymlink == 0 {
			return false
		}
		n++
	}
	return n == len(top)
}

func writePayload(root string, payload map[string]File) error {
	for p, f := range payload {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, f.Data, 0o600); err != nil {
			return err
		}
		if err := os.Chmod(full, f.Mode.Perm()); err != nil {
			return err
		}
	}
	return nil
}

// holds reports whether the version directory v has exactly payload.
func holds(v string, payload map[string]File) (bool, error) {
	n := 0
	same := true
	err := filepath.WalkDir(v, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(v, p)
		f, ok := payload[rel]
		if !ok {
			same = false
			return filepath.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if info.Mode().Perm() != f.Mode.Perm() || !bytes.Equal(b, f.Data) {
			same = false
			return filepath.SkipAll
		}
		n++
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return same && n == len(payload), err
}
