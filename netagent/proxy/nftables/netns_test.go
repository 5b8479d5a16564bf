package nftables

import (
	"strings"
	"testing"

	"github.com/vishvananda/netns"

	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

// Test network namespaces. Every test that touches a kernel does it inside
// namespaces it creates (proxytest's, built on netnstest: each in a
// directory of its own, removed when the test ends; not root: skipped).

// testNS is a test namespace with the helpers these tests use.
type testNS struct{ *proxytest.NetNS }

// newNS creates a network namespace with loopback up.
func newNS(t testing.TB, role string) *testNS {
	t.Helper()
	return &testNS{proxytest.NewNetNS(t, role)}
}

// fd opens the namespace for NetlinkOptions.NetNSFd; it is closed at the
// end of the test.
func (ns *testNS) fd(t testing.TB) int {
	t.Helper()
	h, err := netns.GetFromPath(ns.Path)
	if err != nil {
		t.Fatalf("open netns %s: %v", ns.Path, err)
	}
	t.Cleanup(func() { h.Close() })
	return int(h)
}

// do runs f with the calling goroutine's thread inside the namespace.
func (ns *testNS) do(f func() error) error { return ns.Do(f) }

// run runs a command inside the namespace and fails the test on error.
func (ns *testNS) run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := ns.output(args...)
	if err != nil {
		t.Fatalf("%s in %s: %v\n%s", strings.Join(args, " "), ns.Name, err, out)
	}
	return out
}

func (ns *testNS) output(args ...string) (string, error) { return ns.Run(args[0], args[1:]...) }
