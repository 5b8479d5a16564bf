package atomicwriter

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func names(t *testing.T, dir string) (user, versions []string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		switch n := e.Name(); {
		case strings.HasPrefix(n, "..2"):
			versions = append(versions, n)
		case !strings.HasPrefix(n, ".."):
			user = append(user, n)
		}
	}
	return user, versions
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteLayoutUpdateAndRemoval(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vol")
	changed, err := Write(dir, map[string]File{
		"a":        {Data: []byte("1"), Mode: 0o644},
		"sub/b":    {Data: []byte("2"), Mode: 0o400},
		"sub/deep": {Data: []byte("3"), Mode: 0o644},
	})
	if err != nil || !changed {
		t.Fatalf("first write: changed=%v err=%v", changed, err)
	}
	data, err := os.Readlink(filepath.Join(dir, "..data"))
	if err != nil || !strings.HasPrefix(data, "..2") {
		t.Fatalf("..data -> %q, %v", data, err)
	}
	for _, n := range []string{"a", "sub"} {
		l, err := os.Readlink(filepath.Join(dir, n))
		if err != nil || l != filepath.Join("..data", n) {
			t.Fatalf("%s -> %q, %v (want a symlink into ..data)", n, l, err)
		}
	}
	if got := read(t, filepath.Join(dir, "sub/b")); got != "2" {
		t.Fatalf("sub/b = %q", got)
	}
	if st, _ := os.Stat(filepath.Join(dir, "sub/b")); st.Mode().Perm() != 0o400 {
		t.Fatalf("sub/b mode %v", st.Mode())
	}
	if u, v := names(t, dir); !slices.Equal(u, []string{"a", "sub"}) || len(v) != 1 {
		t.Fatalf("entries %v %v", u, v)
	}

	// The same payload writes nothing.
	if changed, err := Write(dir, map[string]File{
		"a": {Data: []byte("1"), Mode: 0o644}, "sub/b": {Data: []byte("2"), Mode: 0o400}, "sub/deep": {Data: []byte("3"), Mode: 0o644},
	}); err != nil || changed {
		t.Fatalf("same payload: changed=%v err=%v", changed, err)
	}
	if d2, _ := os.Readlink(filepath.Join(dir, "..data")); d2 != data {
		t.Fatalf("..data moved to %q on an equal payload", d2)
	}

	// An update: a changes, sub goes, c comes; a file opened before keeps
	// the old content.
	old, err := os.Open(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	changed, err = Write(dir, map[string]File{"a": {Data: []byte("10"), Mode: 0o644}, "c": {Data: []byte("4"), Mode: 0o600}})
	if err != nil || !changed {
		t.Fatalf("update: changed=%v err=%v", changed, err)
	}
	if got := read(t, filepath.Join(dir, "a")); got != "10" {
		t.Fatalf("a = %q after the update", got)
	}
	buf := make([]byte, 8)
	n, _ := old.Read(buf)
	if string(buf[:n]) != "1" {
		t.Fatalf("an open file read %q, want the old content", buf[:n])
	}
	if u, v := names(t, dir); !slices.Equal(u, []string{"a", "c"}) || len(v) != 1 {
		t.Fatalf("after the update: entries %v, versions %v (want a, c and one version)", u, v)
	}
	if _, err := os.Lstat(filepath.Join(dir, "..data_tmp")); !os.IsNotExist(err) {
		t.Fatalf("..data_tmp left: %v", err)
	}
	// A mode change alone is an update.
	if changed, err := Write(dir, map[string]File{"a": {Data: []byte("10"), Mode: 0o600}, "c": {Data: []byte("4"), Mode: 0o600}}); err != nil || !changed {
		t.Fatalf("mode change: changed=%v err=%v", changed, err)
	}
	// Everything removed: an empty volume.
	if _, err := Write(dir, nil); err != nil {
		t.Fatal(err)
	}
	if u, v := names(t, dir); len(u) != 0 || len(v) != 1 {
		t.Fatalf("empty payload: entries %v, versions %v", u, v)
	}
}

func TestValidatePath(t *testing.T) {
	for p, ok := range map[string]bool{
		"a": true, "a/b": true, "a..b": true, ".a": true,
		"": false, "/a": false, "..a": false, "a/../b": false, "..": false, "a/..": false,
	} {
		if err := ValidatePath(p); (err == nil) != ok {
			t.Errorf("ValidatePath(%q) = %v, want ok=%v", p, err, ok)
		}
	}
	if _, err := Write(t.TempDir(), map[string]File{"../x": {}}); err == nil {
		t.Fatal("Write took ../x")
	}
}
