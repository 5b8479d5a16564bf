package netagent

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/skiff-dev/skiff/api"
)

// TestSetVolumeOwnership: the kubelet's SetVolumeOwnership on a temp
// tree: group fsGroup everywhere (symlinks too, without touching their
// target's mode), g+rw on files (g+r read-only), g+rwx and setgid on
// directories; OnRootMismatch walks nothing when the root matches.
func TestSetVolumeOwnership(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: chowns files to another group")
	}
	gid := int64(4321)
	mk := func(t *testing.T) string {
		d := t.TempDir()
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(os.Mkdir(filepath.Join(d, "sub"), 0o700))
		must(os.WriteFile(filepath.Join(d, "sub", "f"), nil, 0o600))
		must(os.WriteFile(filepath.Join(d, "ro"), nil, 0o400))
		must(os.Symlink("ro", filepath.Join(d, "link")))
		must(os.Chmod(d, 0o755))
		return d
	}
	type want struct {
		mode fs.FileMode
		gid  int64
	}
	check := func(t *testing.T, d string, exp map[string]want) {
		t.Helper()
		for p, w := range exp {
			info, err := os.Lstat(filepath.Join(d, p))
			if err != nil {
				t.Fatal(err)
			}
			g := int64(info.Sys().(*syscall.Stat_t).Gid)
			if m := info.Mode() & (fs.ModePerm | fs.ModeSetgid); m != w.mode || g != w.gid {
				t.Errorf("%s: mode %v gid %d, want %v gid %d", p, m, g, w.mode, w.gid)
			}
		}
	}
	t.Run("read-write", func(t *testing.T) {
		d := mk(t)
		if err := setVolumeOwnership(d, &gid, nil, false); err != nil {
			t.Fatal(err)
		}
		check(t, d, map[string]want{
			".": {0o775 | fs.ModeSetgid, gid}, "sub": {0o770 | fs.ModeSetgid, gid},
			"sub/f": {0o660, gid}, "ro": {0o660, gid}, "link": {0o777, gid},
		})
	})
	t.Run("read-only", func(t *testing.T) {
		d := mk(t)
		if err := setVolumeOwnership(d, &gid, nil, true); err != nil {
			t.Fatal(err)
		}
		check(t, d, map[string]want{
			".": {0o755 | fs.ModeSetgid, gid}, "sub": {0o750 | fs.ModeSetgid, gid},
			"sub/f": {0o640, gid}, "ro": {0o440, gid},
		})
	})
	t.Run("no fsGroup", func(t *testing.T) {
		d := mk(t)
		if err := setVolumeOwnership(d, nil, nil, false); err != nil {
			t.Fatal(err)
		}
		check(t, d, map[string]want{".": {0o755, 0}, "sub/f": {0o600, 0}})
	})
	t.Run("OnRootMismatch", func(t *testing.T) {
		policy := api.FSGroupChangeOnRootMismatch
		d := mk(t)
		// The root already matches: the tree is left alone.
		if err := os.Chown(d, -1, int(gid)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o775|fs.ModeSetgid); err != nil {
			t.Fatal(err)
		}
		if err := setVolumeOwnership(d, &gid, &policy, false); err != nil {
			t.Fatal(err)
		}
		check(t, d, map[string]want{".": {0o775 | fs.ModeSetgid, gid}, "sub/f": {0o600, 0}})
		// Without setgid on the root it is walked.
		if err := os.Chmod(d, 0o775); err != nil {
			t.Fatal(err)
		}
		if err := setVolumeOwnership(d, &gid, &policy, false); err != nil {
			t.Fatal(err)
		}
		check(t, d, map[string]want{".": {0o775 | fs.ModeSetgid, gid}, "sub/f": {0o660, gid}})
	})
}
