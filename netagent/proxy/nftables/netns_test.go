package nftables

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vishvananda/netns"
)

// Test network namespaces. Every test that touches a kernel does it inside
// namespaces it creates here (named skiffnft-<pid>-<n>, under /run/netns so
// that `ip netns exec` reaches them) and removes them when it ends.

var nsCounter atomic.Int64

type testNS struct {
	name   string
	handle netns.NsHandle
}

func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces and programs nftables in them")
	}
}

// newNS creates a named network namespace with loopback up.
func newNS(t testing.TB, role string) *testNS {
	t.Helper()
	needRoot(t)
	name := fmt.Sprintf("skiffnft-%d-%d-%s", os.Getpid(), nsCounter.Add(1), role)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatalf("get netns: %v", err)
	}
	defer orig.Close()
	h, err := netns.NewNamed(name)
	if err != nil {
		t.Fatalf("create netns %s: %v", name, err)
	}
	if err := netns.Set(orig); err != nil {
		t.Fatalf("restore netns: %v", err)
	}
	ns := &testNS{name: name, handle: h}
	t.Cleanup(func() {
		ns.handle.Close()
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("delete netns %s: %v", name, err)
		}
	})
	ns.run(t, "ip", "link", "set", "lo", "up")
	return ns
}

// do runs f with the calling goroutine's thread inside the namespace.
func (ns *testNS) do(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return err
	}
	defer orig.Close()
	if err := netns.Set(ns.handle); err != nil {
		return err
	}
	defer func() {
		if err := netns.Set(orig); err != nil {
			panic("cannot restore the test thread's netns: " + err.Error())
		}
	}()
	return f()
}

// run runs a command inside the namespace and fails the test on error.
func (ns *testNS) run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := ns.output(args...)
	if err != nil {
		t.Fatalf("%s in %s: %v\n%s", strings.Join(args, " "), ns.name, err, out)
	}
	return out
}

func (ns *testNS) output(args ...string) (string, error) {
	full := append([]string{"netns", "exec", ns.name}, args...)
	out, err := exec.Command("ip", full...).CombinedOutput()
	return string(out), err
}
