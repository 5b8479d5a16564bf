// Package cgroupstest gives a root test the node's cgroup file systems and
// a cgroup root of its own under them, removed at cleanup.
package cgroupstest

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/cgroups"
)

// Root returns the node's cgroups and a fresh cgroup path
// ("/skiff-<name>-<pid>-<n>") the test may make anything under; the tree
// is removed at cleanup, and an error is reported if that fails (a
// process left in it). It skips without root or without a cgroup file
// system.
func Root(t testing.TB, name string) (*cgroups.FS, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes cgroups in the node's hierarchies")
	}
	fs, err := cgroups.Detect()
	if err != nil {
		t.Skipf("no cgroup file system: %v", err)
	}
	root := fmt.Sprintf("/skiff-%s-%d-%d", name, os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		if err := fs.Remove(root); err != nil {
			t.Errorf("cgroups left: %v", err)
		}
	})
	return fs, root
}
