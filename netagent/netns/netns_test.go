package netns_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/vishvananda/netlink"
	vnetns "github.com/vishvananda/netns"

	"github.com/skiff-dev/skiff/netagent/netns"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
)

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want bool
	}{
		{"uid", "skiff-6f1c2c8e-2b1a-4c39-9d1e-0c5a3e2f4b11", true},
		{"empty", "", false},
		{"dot", ".", false},
		{"dotdot", "..", false},
		{"slash", "a/b", false},
		{"nul", "a\x00b", false},
		{"too long", string(make([]byte, 256)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := netns.ValidName(tc.in); got != tc.want {
				t.Errorf("ValidName(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestInvalidNamesRejected(t *testing.T) {
	m := netns.NewManager(t.TempDir())
	if _, err := m.Create("../x"); !errors.Is(err, netns.ErrInvalidName) {
		t.Errorf("Create(../x) = %v, want ErrInvalidName", err)
	}
	if err := m.Delete(""); !errors.Is(err, netns.ErrInvalidName) {
		t.Errorf("Delete(\"\") = %v, want ErrInvalidName", err)
	}
}

func TestNewManagerDefaultDir(t *testing.T) {
	if got := netns.NewManager("").Dir(); got != netns.DefaultDir {
		t.Errorf("Dir() = %q, want %q", got, netns.DefaultDir)
	}
}

func TestListMissingDir(t *testing.T) {
	m := netns.NewManager(filepath.Join(t.TempDir(), "nope"))
	names, err := m.List()
	if err != nil || len(names) != 0 {
		t.Errorf("List() = %v, %v; want empty, nil", names, err)
	}
}

// currentNS is the inode identity of the calling thread's netns.
func currentNS(t *testing.T) string {
	t.Helper()
	h, err := vnetns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	return h.UniqueId()
}

func TestCreateDeleteLifecycle(t *testing.T) {
	netnstest.RequireRoot(t)
	dir := t.TempDir()
	m := netns.NewManager(filepath.Join(dir, "ns"))

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := currentNS(t)

	path, err := m.Create("a")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { _ = m.Delete("a") })
	if after := currentNS(t); after != before {
		t.Fatalf("Create left the thread in another netns: %s -> %s", before, after)
	}
	if path != m.Path("a") {
		t.Errorf("path %q, want %q", path, m.Path("a"))
	}
	if live, err := m.Live("a"); err != nil || !live {
		t.Fatalf("Live(a) = %v, %v; want true", live, err)
	}
	h, err := vnetns.GetFromPath(path)
	if err != nil {
		t.Fatal(err)
	}
	if id := h.UniqueId(); id == before {
		t.Errorf("the new namespace is the caller's own (%s)", id)
	}
	h.Close()

	if _, err := m.Create("a"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second Create(a) = %v, want fs.ErrExist", err)
	}
	if names, err := m.List(); err != nil || len(names) != 1 || names[0] != "a" {
		t.Errorf("List() = %v, %v; want [a]", names, err)
	}

	if err := m.Delete("a"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("file still there after Delete: %v", err)
	}
	if live, err := m.Live("a"); err != nil || live {
		t.Errorf("Live after Delete = %v, %v; want false, nil", live, err)
	}
	if err := m.Delete("a"); err != nil {
		t.Errorf("second Delete: %v", err)
	}
}

func TestStaleFile(t *testing.T) {
	netnstest.RequireRoot(t)
	dir := t.TempDir()
	m := netns.NewManager(dir)
	// What a persistent directory holds after a reboot: the file, no mount.
	if err := os.WriteFile(m.Path("stale"), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if live, err := m.Live("stale"); err != nil || live {
		t.Errorf("Live(stale) = %v, %v; want false, nil", live, err)
	}
	if names, _ := m.List(); len(names) != 1 || names[0] != "stale" {
		t.Errorf("List() = %v; want [stale]", names)
	}
	if err := netns.Do(m.Path("stale"), func() error { return nil }); err == nil {
		t.Error("Do on a stale file succeeded")
	}
	if err := m.Delete("stale"); err != nil {
		t.Fatalf("Delete(stale): %v", err)
	}
	if _, err := os.Stat(m.Path("stale")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale file still there: %v", err)
	}
}

func TestIsNetNSOtherNamespaceType(t *testing.T) {
	netnstest.RequireRoot(t)
	// /proc/self/ns/uts is on nsfs but is not a network namespace.
	if ok, err := netns.IsNetNS("/proc/self/ns/uts"); err != nil || ok {
		t.Errorf("IsNetNS(uts) = %v, %v; want false, nil", ok, err)
	}
	if ok, err := netns.IsNetNS("/proc/self/ns/net"); err != nil || !ok {
		t.Errorf("IsNetNS(net) = %v, %v; want true, nil", ok, err)
	}
}

func TestDoIsolation(t *testing.T) {
	node := netnstest.NewNode(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := currentNS(t)

	var inside string
	err := node.Do(func() error {
		inside = currentNS(t)
		return netlink.LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "isotest0"}})
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if after := currentNS(t); after != before {
		t.Fatalf("Do left the thread in %s, want %s", after, before)
	}
	if inside == before {
		t.Fatal("Do ran fn in the caller's namespace")
	}
	if _, err := netlink.LinkByName("isotest0"); err == nil {
		t.Fatal("bridge made inside Do is visible in the test's own namespace")
	}
	if err := node.Do(func() error {
		_, err := netlink.LinkByName("isotest0")
		return err
	}); err != nil {
		t.Errorf("bridge not found inside the node: %v", err)
	}

	wantErr := errors.New("boom")
	if err := node.Do(func() error { return wantErr }); !errors.Is(err, wantErr) {
		t.Errorf("Do error = %v, want fn's error", err)
	}
}

func countFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

func TestCreateDeleteNoLeak(t *testing.T) {
	netnstest.RequireRoot(t)
	m := netns.NewManager(t.TempDir())
	n := 300
	if testing.Short() {
		n = 30
	}
	fds := countFDs(t)
	for i := 0; i < n; i++ {
		p, err := m.Create("cycle")
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if err := netns.Do(p, func() error { return nil }); err != nil {
			t.Fatalf("cycle %d: Do: %v", i, err)
		}
		if err := m.Delete("cycle"); err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
	}
	if names, _ := m.List(); len(names) != 0 {
		t.Errorf("files left: %v", names)
	}
	if got := countFDs(t); got > fds {
		t.Errorf("open fds %d -> %d after %d cycles", fds, got, n)
	}
}
