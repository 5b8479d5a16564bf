package cni_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/netns"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
)

var (
	testPodCIDR = netip.MustParsePrefix("10.77.3.0/24")
	testSvcCIDR = netip.MustParsePrefix("10.96.0.0/16")
)

// requireNodeTools skips unless the test can make namespaces and run the
// real CNI plugins.
func requireNodeTools(t testing.TB) {
	t.Helper()
	netnstest.RequireRoot(t)
	for _, p := range []string{"bridge", "host-local", "portmap", "loopback"} {
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
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("needs iptables (the portmap plugin runs it)")
	}
}

// testNode is a node namespace running a real Network.
type testNode struct {
	t       testing.TB
	ns      *netnstest.NS
	net     *cni.Network
	cfg     cni.Config
	dataDir string
}

// newTestNode makes a node namespace and a Network in it (not yet set
// up). Cleanup deletes the pods still there.
func newTestNode(t testing.TB, mutate func(*cni.Config)) *testNode {
	t.Helper()
	requireNodeTools(t)
	node := netnstest.NewNode(t)
	dataDir := t.TempDir()
	cfg := cni.Config{DataDir: dataDir, PodCIDR: testPodCIDR, ServiceCIDR: testSvcCIDR}
	if mutate != nil {
		mutate(&cfg)
	}
	n, err := cni.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	tn := &testNode{t: t, ns: node, net: n, cfg: cfg, dataDir: dataDir}
	t.Cleanup(func() {
		// Registered after the node's own cleanup, so it runs first.
		uids, err := n.Pods(context.Background())
		if err != nil {
			t.Errorf("cleanup: Pods: %v", err)
		}
		for _, uid := range uids {
			if err := tn.do(func() error { return n.DelPod(context.Background(), uid) }); err != nil {
				t.Errorf("cleanup: DelPod(%s): %v", uid, err)
			}
		}
	})
	return tn
}

// renew is a second Network over the same data dir (an agent restart).
func (tn *testNode) renew() *cni.Network {
	tn.t.Helper()
	n, err := cni.New(tn.cfg)
	if err != nil {
		tn.t.Fatalf("New: %v", err)
	}
	return n
}

func (tn *testNode) do(fn func() error) error { return tn.ns.Do(fn) }

func (tn *testNode) setup() {
	tn.t.Helper()
	if err := tn.do(func() error { return tn.net.Setup(context.Background()) }); err != nil {
		tn.t.Fatalf("Setup: %v", err)
	}
}

func (tn *testNode) add(uid string, ports ...cni.PortMapping) cni.PodNetwork {
	tn.t.Helper()
	var pn cni.PodNetwork
	err := tn.do(func() error {
		var err error
		pn, err = tn.net.AddPod(context.Background(), uid, "default", "pod-"+uid, ports)
		return err
	})
	if err != nil {
		tn.t.Fatalf("AddPod(%s): %v", uid, err)
	}
	return pn
}

func (tn *testNode) del(uid string) {
	tn.t.Helper()
	if err := tn.do(func() error { return tn.net.DelPod(context.Background(), uid) }); err != nil {
		tn.t.Fatalf("DelPod(%s): %v", uid, err)
	}
}

// serveIn listens on addr inside the namespace at nsPath and answers each
// connection with one line, "hello from <name>". The socket belongs to
// the namespace it was made in, so only Listen runs inside it.
func serveIn(t testing.TB, nsPath, addr, name string) {
	t.Helper()
	var ln net.Listener
	if err := netns.Do(nsPath, func() error {
		var err error
		ln, err = net.Listen("tcp", addr)
		return err
	}); err != nil {
		t.Fatalf("listen %s in %s: %v", addr, nsPath, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = fmt.Fprintf(c, "hello from %s\n", name)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
}

// dialFrom connects to addr from inside the namespace at nsPath and
// returns the line the server sent.
func dialFrom(nsPath, addr string) (string, error) {
	var c net.Conn
	if err := netns.Do(nsPath, func() error {
		var err error
		c, err = net.DialTimeout("tcp", addr, 3*time.Second)
		return err
	}); err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

// linkNames lists the links of the namespace behind h whose type is kind
// ("" = all).
func linkNames(t testing.TB, h *netlink.Handle, kind string) []string {
	t.Helper()
	ls, err := h.LinkList()
	if err != nil {
		t.Fatalf("LinkList: %v", err)
	}
	var out []string
	for _, l := range ls {
		if kind == "" || l.Type() == kind {
			out = append(out, l.Attrs().Name)
		}
	}
	return out
}
