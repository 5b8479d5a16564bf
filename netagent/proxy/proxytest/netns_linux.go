package proxytest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/proxy/ipvs"
)

// NetNS is a network namespace a test created (bind-mounted under
// /run/netns), removed when the test ends.
type NetNS struct {
	Name string
	Path string
	h    netns.NsHandle
}

var nsSeq atomic.Int64

// RequireRoot skips the test unless it runs as root (as CI does).
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: creates network namespaces and programs netfilter in them")
	}
}

// NewNetNS creates a named network namespace with its loopback up. The
// name gets the process id and a counter, so parallel test binaries do not
// collide. It is deleted at the end of the test.
func NewNetNS(t testing.TB, role string) *NetNS {
	t.Helper()
	RequireRoot(t)
	name := fmt.Sprintf("skpt-%d-%d-%s", os.Getpid(), nsSeq.Add(1), role)
	ns := &NetNS{Name: name, Path: filepath.Join("/run/netns", name)}
	err := func() error {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		orig, err := netns.Get()
		if err != nil {
			return err
		}
		defer orig.Close()
		h, err := netns.NewNamed(name)
		if err != nil {
			return err
		}
		ns.h = h
		if err := netns.Set(orig); err != nil {
			// Never give a thread in the wrong namespace back to the
			// runtime.
			runtime.LockOSThread()
			return fmt.Errorf("return to the original netns: %w", err)
		}
		return nil
	}()
	if err != nil {
		t.Fatalf("create netns %s: %v", name, err)
	}
	t.Cleanup(func() {
		ns.h.Close()
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("delete netns %s: %v", name, err)
		}
	})
	h := ns.Handle(t)
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetUp(lo)
	}
	if err != nil {
		t.Fatalf("netns %s: loopback up: %v", name, err)
	}
	return ns
}

// Handle returns a netlink handle in the namespace, closed at the end of
// the test.
func (n *NetNS) Handle(t testing.TB) *netlink.Handle {
	t.Helper()
	h, err := netlink.NewHandleAt(n.h, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatalf("netlink handle in %s: %v", n.Name, err)
	}
	t.Cleanup(h.Close)
	return h
}

// ConntrackHandle returns a netfilter netlink handle in the namespace.
func (n *NetNS) ConntrackHandle(t testing.TB) *netlink.Handle {
	t.Helper()
	h, err := netlink.NewHandleAt(n.h, unix.NETLINK_NETFILTER)
	if err != nil {
		t.Fatalf("netfilter netlink handle in %s: %v", n.Name, err)
	}
	t.Cleanup(h.Close)
	return h
}

// Do runs f on a thread inside the namespace. Sockets f opens stay in the
// namespace after it returns.
func (n *NetNS) Do(f func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer orig.Close()
	if err := netns.Set(n.h); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	ferr := f()
	if err := netns.Set(orig); err != nil {
		// Leave the thread locked: the runtime retires it.
		return errors.Join(ferr, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// Sysctl writes a /proc/sys value inside the namespace (/proc/sys/net is
// per network namespace).
func (n *NetNS) Sysctl(key, value string) error {
	return n.Do(func() error { return ipvs.WriteSysctl(key, value) })
}

// Listen opens a listener inside the namespace.
func (n *NetNS) Listen(ctx context.Context, network, address string) (net.Listener, error) {
	var ln net.Listener
	err := n.Do(func() error {
		var lc net.ListenConfig
		var err error
		ln, err = lc.Listen(ctx, network, address)
		return err
	})
	return ln, err
}

// Dial connects from inside the namespace; laddr may be nil.
func (n *NetNS) Dial(network, address string, laddr net.Addr, timeout time.Duration) (net.Conn, error) {
	var c net.Conn
	err := n.Do(func() error {
		d := net.Dialer{Timeout: timeout, LocalAddr: laddr}
		var err error
		c, err = d.Dial(network, address)
		return err
	})
	return c, err
}

// Run runs a command inside the namespace and returns its combined
// output.
func (n *NetNS) Run(name string, args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", n.Name, name}, args...)...).CombinedOutput()
	return string(out), err
}
