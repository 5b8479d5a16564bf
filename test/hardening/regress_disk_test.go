package hardening

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/skiff-dev/skiff/server/servertest"
)

// regressMountTmpfs mounts a tmpfs of size on a new directory of the test
// and unmounts it at cleanup (after the cleanups registered later, such
// as the server's stop). It skips the test when it may not mount.
func regressMountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the full-disk test mounts a tmpfs: it needs root (run the package's tests as root to include it)")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size="+size+",mode=0700"); err != nil {
		t.Skipf("the full-disk test mounts a tmpfs, and mount failed (no CAP_SYS_ADMIN here?): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return dir
}

// regressFill writes path until the file system is full.
func regressFill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for i := 0; i < 1<<14; i++ {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				// The last bytes: fill up to the final block.
				for _, n := range []int{4096, 512, 1} {
					for {
						if _, err := f.Write(chunk[:n]); err != nil {
							break
						}
					}
				}
				return
			}
			t.Fatal(err)
		}
	}
	t.Fatal("the tmpfs never filled")
}

// TestRegressFullDisk: with the data dir on a full file system, writes
// get a 500 Status (no crash, no hang), reads go on, and once space is
// freed writes work again, with nothing half-written.
func TestRegressFullDisk(t *testing.T) {
	mnt := regressMountTmpfs(t, "8m")
	dataDir := filepath.Join(mnt, "data")
	if err := os.Mkdir(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, servertest.Options{DataDir: dataDir, Sync: true, Logger: regressLogger(t)})
	h := newRegressHTTP(t, s, s.Bundle().AdminToken)
	ctx := context.Background()
	big := strings.Repeat("x", 200<<10) // each write needs new pages
	create := func(name string) regressReply {
		t.Helper()
		body := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"` + name + `","annotations":{"fill":"` + big + `"}},"spec":{"ports":[{"port":80}]}}`
		r, err := h.do(ctx, http.MethodPost, regressSvcs, ctJSON, []byte(body))
		if err != nil {
			t.Fatalf("create %s: %v (a hang or a crash)", name, err)
		}
		return r
	}
	if r := create("before-full"); r.code != http.StatusCreated {
		t.Fatalf("create before the disk is full: %d %.300q", r.code, r.body)
	}

	filler := filepath.Join(mnt, "filler")
	regressFill(t, filler)
	var failed []string
	for i := range 8 {
		name := "while-full-" + strconv.Itoa(i)
		r := create(name)
		switch {
		case r.code == http.StatusCreated:
			continue // bbolt reused free pages; the next write needs more
		case r.code != http.StatusInternalServerError:
			t.Fatalf("create %s on a full disk: %d, want 500: %.300q", name, r.code, r.body)
		}
		if st := regressStatus(t, r); st.Reason != "InternalError" {
			t.Errorf("reason %q, want InternalError", st.Reason)
		}
		failed = append(failed, name)
	}
	if len(failed) == 0 {
		t.Fatal("no write failed on the full disk")
	}
	// Reads go on, and a failed create stored nothing.
	for _, name := range failed {
		r, err := h.do(ctx, http.MethodGet, regressSvcs+"/"+name, "", nil)
		if err != nil || r.code != http.StatusNotFound {
			t.Fatalf("GET %s after its failed create: %v %d %.200q", name, err, r.code, r.body)
		}
	}
	if r, err := h.do(ctx, http.MethodGet, regressSvcs+"/before-full", "", nil); err != nil || r.code != http.StatusOK {
		t.Fatalf("GET before-full on a full disk: %v %d", err, r.code)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		name := "after-free-" + strconv.Itoa(i)
		if r := create(name); r.code != http.StatusCreated {
			t.Fatalf("create %s after space was freed: %d %.300q", name, r.code, r.body)
		}
	}
	// The failed names are free to create now.
	if r := create(failed[0]); r.code != http.StatusCreated {
		t.Fatalf("create %s again: %d %.300q", failed[0], r.code, r.body)
	}
	t.Logf("%d of 8 creates on the full disk got 500", len(failed))
	// servertest's cleanup stops the server and checks the store file.
}
