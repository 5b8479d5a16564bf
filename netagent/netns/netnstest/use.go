package netnstest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/cni"
)

// RequireCNIPlugins skips the test unless it can create namespaces
// (RequireRoot) and every plugin named is in one of
// cni.DefaultPluginDirs. With none named, the plugins of the network
// config the agent writes (netagent/cni): bridge with host-local IPAM,
// portmap and loopback.
func RequireCNIPlugins(t testing.TB, plugins ...string) {
	t.Helper()
	RequireRoot(t)
	if len(plugins) == 0 {
		plugins = []string{"bridge", "host-local", "portmap", "loopback"}
	}
	for _, p := range plugins {
		found := false
		for _, d := range cni.DefaultPluginDirs() {
			if _, err := os.Stat(filepath.Join(d, p)); err == nil {
				found = true
			}
		}
		if !found {
			t.Skipf("needs the CNI plugin %q in %v (Debian: containernetworking-plugins)", p, cni.DefaultPluginDirs())
		}
	}
}

// Run runs a command inside the namespace (exec'd from a thread in it)
// and returns its combined output.
func (n *NS) Run(name string, args ...string) (string, error) {
	var out []byte
	err := n.Do(func() error {
		var err error
		out, err = exec.Command(name, args...).CombinedOutput()
		return err
	})
	return string(out), err
}

// Listen opens a listener inside the namespace; it stays there after
// Listen returns.
func (n *NS) Listen(ctx context.Context, network, address string) (net.Listener, error) {
	var ln net.Listener
	err := n.Do(func() error {
		var lc net.ListenConfig
		var err error
		ln, err = lc.Listen(ctx, network, address)
		return err
	})
	return ln, err
}

// ListenPacket opens a packet socket inside the namespace.
func (n *NS) ListenPacket(ctx context.Context, network, address string) (net.PacketConn, error) {
	var pc net.PacketConn
	err := n.Do(func() error {
		var lc net.ListenConfig
		var err error
		pc, err = lc.ListenPacket(ctx, network, address)
		return err
	})
	return pc, err
}

// Dial connects from inside the namespace; laddr may be nil.
func (n *NS) Dial(network, address string, laddr net.Addr, timeout time.Duration) (net.Conn, error) {
	var c net.Conn
	err := n.Do(func() error {
		d := net.Dialer{Timeout: timeout, LocalAddr: laddr}
		var err error
		c, err = d.Dial(network, address)
		return err
	})
	return c, err
}
