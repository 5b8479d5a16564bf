package cni_test

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/netns"
	"github.com/skiff-dev/skiff/netagent/netns/netnstest"
)

// ipamFiles lists host-local's files for the network: one per reserved IP
// plus its bookkeeping (lock, last_reserved_ip.0).
func ipamFiles(t testing.TB, dataDir string) (reserved, other []string) {
	t.Helper()
	es, err := os.ReadDir(cni.IPAMDir(dataDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if _, err := netip.ParseAddr(e.Name()); err == nil {
			reserved = append(reserved, e.Name())
		} else {
			other = append(other, e.Name())
		}
	}
	return reserved, other
}

func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// assertClean checks that no pod state is left: no namespace files, no
// reserved IPs, no cached CNI results, no veths in the node.
func (tn *testNode) assertClean() {
	t := tn.t
	t.Helper()
	if left := dirNames(t, filepath.Join(tn.dataDir, "netns")); len(left) != 0 {
		t.Errorf("namespace files left: %v", left)
	}
	reserved, other := ipamFiles(t, tn.dataDir)
	if len(reserved) != 0 {
		t.Errorf("host-local still reserves %v", reserved)
	}
	for _, o := range other {
		if o != "lock" && o != "last_reserved_ip.0" {
			t.Errorf("unexpected host-local file %q", o)
		}
	}
	if left := dirNames(t, filepath.Join(tn.dataDir, "cni", "cache", "results")); len(left) != 0 {
		t.Errorf("cached CNI results left: %v", left)
	}
	if veths := tn.podVeths(); len(veths) != 0 {
		t.Errorf("pod veths left in the node: %v", veths)
	}
	if uids, err := tn.net.Pods(context.Background()); err != nil || len(uids) != 0 {
		t.Errorf("Pods() = %v, %v; want none", uids, err)
	}
}

// podVeths lists the veths plugged into the node's bridge. It opens no
// lasting netlink socket (the leak test counts descriptors).
func (tn *testNode) podVeths() []string {
	tn.t.Helper()
	var out []string
	if err := tn.do(func() error {
		br, err := netlink.LinkByName(cni.DefaultBridge)
		if err != nil {
			return err
		}
		ls, err := netlink.LinkList()
		if err != nil {
			return err
		}
		for _, l := range ls {
			if l.Type() == "veth" && l.Attrs().MasterIndex == br.Attrs().Index {
				out = append(out, l.Attrs().Name)
			}
		}
		return nil
	}); err != nil {
		tn.t.Fatalf("node links: %v", err)
	}
	return out
}

// waitNamespaceGone waits until the kernel has freed an unmounted pod
// namespace, which takes its veth pair with it (asynchronously).
func (tn *testNode) waitNamespaceGone(before int) {
	tn.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(tn.podVeths()) >= before {
		if time.Now().After(deadline) {
			tn.t.Fatalf("the pod's veth outlived its namespace: %v", tn.podVeths())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDelPodReleasesIP(t *testing.T) {
	// A /29 holds 5 pods (.2-.6): exhausting it shows that a released IP
	// really comes back.
	tn := newTestNode(t, func(c *cni.Config) { c.PodCIDR = netip.MustParsePrefix("10.77.5.0/29") })
	tn.setup()
	ips := map[string]netip.Addr{}
	for _, uid := range []string{"p1", "p2", "p3", "p4", "p5"} {
		ips[uid] = tn.add(uid).IP
	}
	var all []string
	for _, ip := range ips {
		all = append(all, ip.String())
	}
	slices.Sort(all)
	if want := []string{"10.77.5.2", "10.77.5.3", "10.77.5.4", "10.77.5.5", "10.77.5.6"}; !slices.Equal(all, want) {
		t.Fatalf("IPs %v, want %v", all, want)
	}

	// Full: the sixth fails and leaves nothing behind.
	err := tn.do(func() error {
		_, err := tn.net.AddPod(context.Background(), "p6", "default", "p6", nil)
		return err
	})
	if err == nil {
		t.Fatal("AddPod on a full range succeeded")
	}
	if _, err := os.Stat(filepath.Join(tn.dataDir, "netns", "skiff-p6")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed AddPod left its namespace: %v", err)
	}
	if uids, _ := tn.net.Pods(context.Background()); slices.Contains(uids, "p6") {
		t.Errorf("failed AddPod is still listed: %v", uids)
	}

	p3 := ips["p3"]
	nsPath := filepath.Join(tn.dataDir, "netns", "skiff-p3")
	tn.del("p3")
	if _, err := os.Stat(nsPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("namespace file still there after DelPod: %v", err)
	}
	reserved, _ := ipamFiles(t, tn.dataDir)
	if slices.Contains(reserved, p3.String()) || len(reserved) != 4 {
		t.Errorf("after DelPod(p3) host-local reserves %v", reserved)
	}
	if got := tn.add("p7").IP; got != p3 {
		t.Errorf("the next pod got %v, want the released %v", got, p3)
	}

	tn.del("p3") // again: idempotent
	tn.del("never-existed")
	for _, uid := range []string{"p1", "p2", "p4", "p5", "p7"} {
		tn.del(uid)
	}
	tn.assertClean()
}

func TestDelPodIdempotentLeftovers(t *testing.T) {
	requireNodeTools(t)
	for _, tc := range []struct {
		name   string
		break_ func(t *testing.T, tn *testNode, uid string)
	}{
		{"netns missing", func(t *testing.T, tn *testNode, uid string) {
			if err := netns.NewManager(filepath.Join(tn.dataDir, "netns")).Delete("skiff-" + uid); err != nil {
				t.Fatal(err)
			}
			tn.waitNamespaceGone(1)
		}},
		{"netns stale after reboot", func(t *testing.T, tn *testNode, uid string) {
			// The file stays, the mount goes (as after a reboot).
			if err := unix.Unmount(filepath.Join(tn.dataDir, "netns", "skiff-"+uid), unix.MNT_DETACH); err != nil {
				t.Fatal(err)
			}
			tn.waitNamespaceGone(1)
		}},
		{"cni cache missing", func(t *testing.T, tn *testNode, uid string) {
			if err := os.RemoveAll(filepath.Join(tn.dataDir, "cni", "cache")); err != nil {
				t.Fatal(err)
			}
		}},
		{"cni cache corrupt", func(t *testing.T, tn *testNode, uid string) {
			p := filepath.Join(tn.dataDir, "cni", "cache", "results", "skiff-"+uid+"-eth0")
			if err := os.WriteFile(p, []byte("{not json"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tn := newTestNode(t, nil)
			tn.setup()
			tn.add("victim")
			tc.break_(t, tn, "victim")
			if uids, err := tn.net.Pods(context.Background()); err != nil || !slices.Contains(uids, "victim") {
				// Missing netns and missing cache each leave the other
				// trace; Pods must still report the pod.
				t.Errorf("Pods() = %v, %v; want victim listed", uids, err)
			}
			tn.del("victim")
			tn.del("victim")
			tn.assertClean()
		})
	}
}

func TestAddPodAfterStaleNamespace(t *testing.T) {
	// After a reboot the namespace file is stale and the IP is still
	// reserved on disk: AddPod tears that down and starts afresh.
	tn := newTestNode(t, nil)
	tn.setup()
	tn.add("again")
	if err := unix.Unmount(filepath.Join(tn.dataDir, "netns", "skiff-again"), unix.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	tn.waitNamespaceGone(1) // as after a reboot: the old veth is gone too
	pn := tn.add("again")
	if ok, err := netns.IsNetNS(pn.NetNSPath); err != nil || !ok {
		t.Fatalf("namespace not live after re-add: %v %v", ok, err)
	}
	if reserved, _ := ipamFiles(t, tn.dataDir); len(reserved) != 1 || reserved[0] != pn.IP.String() {
		t.Errorf("host-local reserves %v, want only %v", reserved, pn.IP)
	}
	tn.del("again")
	tn.assertClean()
}

func TestAdoptionAfterRestart(t *testing.T) {
	tn := newTestNode(t, nil)
	tn.setup()
	a := tn.add("keep")
	b := tn.add("drop")
	vethsBefore := linkNames(t, tn.ns.Netlink(t), "veth")

	// A new agent over the same data dir.
	tn.net = tn.renew()
	tn.setup()
	uids, err := tn.net.Pods(context.Background())
	if err != nil || !slices.Equal(uids, []string{"drop", "keep"}) {
		t.Fatalf("Pods() = %v, %v; want [drop keep]", uids, err)
	}
	again := tn.add("keep")
	if again != a {
		t.Errorf("adopted pod network %+v, want %+v", again, a)
	}
	if got := linkNames(t, tn.ns.Netlink(t), "veth"); !slices.Equal(got, vethsBefore) {
		t.Errorf("adoption changed the veths: %v -> %v", vethsBefore, got)
	}
	// Still connected after adoption.
	serveIn(t, a.NetNSPath, netip.AddrPortFrom(a.IP, 8080).String(), "keep")
	if got, err := dialFrom(b.NetNSPath, netip.AddrPortFrom(a.IP, 8080).String()); err != nil || got != "hello from keep" {
		t.Errorf("drop -> keep after restart: %q, %v", got, err)
	}
	tn.del("drop")
	tn.del("keep")
	tn.assertClean()
}

func TestHostPort(t *testing.T) {
	tn := newTestNode(t, nil)
	tn.setup()
	client := netnstest.New(t, "client")
	netnstest.Connect(t,
		netnstest.End{NS: tn.ns, Name: "to-client", Addr: netip.MustParsePrefix("192.168.77.1/24")},
		netnstest.End{NS: client, Name: "to-node", Addr: netip.MustParsePrefix("192.168.77.2/24")},
	)
	web := tn.add("web", cni.PortMapping{HostPort: 30080, ContainerPort: 8080, Protocol: "TCP"})
	serveIn(t, web.NetNSPath, netip.AddrPortFrom(web.IP, 8080).String(), "web")

	if got, err := dialFrom(client.Path, "192.168.77.1:30080"); err != nil || got != "hello from web" {
		t.Fatalf("client -> node:30080: %q, %v", got, err)
	}
	// Another pod reaches the hostPort through the node's address too.
	other := tn.add("other")
	if got, err := dialFrom(other.NetNSPath, "192.168.77.1:30080"); err != nil || got != "hello from web" {
		t.Errorf("pod -> node:30080: %q, %v", got, err)
	}

	nat := func() string {
		var out []byte
		if err := tn.do(func() error {
			var err error
			out, err = exec.Command("iptables-save", "-t", "nat").CombinedOutput()
			return err
		}); err != nil {
			t.Fatalf("iptables-save in the node: %v: %s", err, out)
		}
		return string(out)
	}
	if rules := nat(); !strings.Contains(rules, "--dport 30080") {
		t.Errorf("no hostPort rule in the node's nat table:\n%s", rules)
	}

	tn.del("web")
	if got, err := dialFrom(client.Path, "192.168.77.1:30080"); err == nil {
		t.Errorf("hostPort still answers after DelPod: %q", got)
	}
	if rules := nat(); strings.Contains(rules, "30080") || strings.Contains(rules, "CNI-DN-") {
		t.Errorf("port mapping rules left after DelPod:\n%s", rules)
	}
	tn.del("other")
	tn.assertClean()
}
