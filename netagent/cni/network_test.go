package cni_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"

	"github.com/skiff-dev/skiff/netagent/cni"
	"github.com/skiff-dev/skiff/netagent/cni/cnitest"
)

// fakeNode is a Network over the cnitest fakes.
type fakeNode struct {
	t       *testing.T
	cfg     cni.Config
	net     *cni.Network
	sysctl  *cnitest.Sysctl
	links   *cnitest.Links
	nss     *cnitest.Namespaces
	plugins *cnitest.Plugins
}

func newFakeNode(t *testing.T, mutate func(*fakeNode)) *fakeNode {
	t.Helper()
	f := &fakeNode{t: t, sysctl: cnitest.NewSysctl(), links: cnitest.NewLinks(), nss: cnitest.NewNamespaces("/fake/netns")}
	f.plugins = cnitest.NewPlugins(f.nss, f.links)
	f.cfg = cni.Config{
		DataDir:     t.TempDir(),
		PodCIDR:     netip.MustParsePrefix("10.244.1.0/24"),
		ServiceCIDR: netip.MustParsePrefix("10.96.0.0/12"),
		Sysctl:      f.sysctl, Links: f.links, Namespaces: f.nss, Plugins: f.plugins,
	}
	if mutate != nil {
		mutate(f)
	}
	f.net = f.restart()
	return f
}

// restart is a new Network over the same state (an agent restart).
func (f *fakeNode) restart() *cni.Network {
	f.t.Helper()
	n, err := cni.New(f.cfg)
	if err != nil {
		f.t.Fatalf("New: %v", err)
	}
	return n
}

func (f *fakeNode) setup() {
	f.t.Helper()
	if err := f.net.Setup(context.Background()); err != nil {
		f.t.Fatalf("Setup: %v", err)
	}
}

func (f *fakeNode) add(uid string, ports ...cni.PortMapping) cni.PodNetwork {
	f.t.Helper()
	pn, err := f.net.AddPod(context.Background(), uid, "ns1", "name-"+uid, ports)
	if err != nil {
		f.t.Fatalf("AddPod(%s): %v", uid, err)
	}
	return pn
}

func (f *fakeNode) del(uid string) {
	f.t.Helper()
	if err := f.net.DelPod(context.Background(), uid); err != nil {
		f.t.Fatalf("DelPod(%s): %v", uid, err)
	}
}

func (f *fakeNode) assertEmpty() {
	f.t.Helper()
	if r := f.plugins.Reserved(); len(r) != 0 {
		f.t.Errorf("IPs still reserved: %v", r)
	}
	if names, _ := f.nss.List(); len(names) != 0 {
		f.t.Errorf("namespaces left: %v", names)
	}
	if uids, err := f.net.Pods(context.Background()); err != nil || len(uids) != 0 {
		f.t.Errorf("Pods() = %v, %v", uids, err)
	}
}

func TestSetupFresh(t *testing.T) {
	f := newFakeNode(t, nil)
	f.setup()

	vals := f.sysctl.Values()
	if vals["net/ipv4/conf/all/send_redirects"] != "0" || vals["net/ipv4/conf/skiff0/send_redirects"] != "0" {
		t.Errorf("send_redirects not cleared: %v", vals)
	}
	if vals["net/ipv4/ip_forward"] != "1" || vals["net/bridge/bridge-nf-call-iptables"] != "1" {
		t.Errorf("sysctls %v", vals)
	}
	br, err := f.links.Link("skiff0")
	if err != nil {
		t.Fatal(err)
	}
	if br.Kind != "bridge" || !br.Up || br.MTU != 1500 || br.MAC.String() != "02:73:0a:f4:01:01" ||
		!slices.Equal(br.Addrs, []netip.Prefix{netip.MustParsePrefix("10.244.1.1/24")}) {
		t.Errorf("bridge %+v", br)
	}
	want := []cnitest.Route{{Dst: netip.MustParsePrefix("10.96.0.0/12"), Dev: "skiff0", Src: netip.MustParseAddr("10.244.1.1")}}
	if got := f.links.Routes(); !slices.Equal(got, want) {
		t.Errorf("routes %v, want %v", got, want)
	}
	b, err := os.ReadFile(cni.ConfListPath(f.cfg.DataDir))
	if err != nil || string(b) != string(f.net.ConfList()) {
		t.Errorf("conflist file: %v", err)
	}

	// Again: nothing changes but the (idempotent) route replace.
	before := len(f.links.Calls())
	f.setup()
	if calls := f.links.Calls()[before:]; !slices.Equal(calls, []string{"RouteReplace 10.96.0.0/12 dev skiff0 src 10.244.1.1"}) {
		t.Errorf("second Setup made calls %v", calls)
	}
}

// stuckSysctl accepts writes and ignores them (a read-only sysctl).
type stuckSysctl struct{ *cnitest.Sysctl }

func (stuckSysctl) Set(string, string) error { return nil }

func TestSetupCases(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(*fakeNode)
		wantErr string
		check   func(*testing.T, *fakeNode)
	}{
		{
			name: "bridge exists down",
			prepare: func(f *fakeNode) {
				_ = f.links.AddBridge("skiff0", 1500, nil)
				_ = f.links.AddrAdd("skiff0", netip.MustParsePrefix("10.244.1.1/24"))
			},
			check: func(t *testing.T, f *fakeNode) {
				want := []string{
					"AddBridge skiff0 mtu=1500 mac=", "AddrAdd skiff0 10.244.1.1/24", // prepare
					"SetUp skiff0", "RouteReplace 10.96.0.0/12 dev skiff0 src 10.244.1.1",
				}
				if got := f.links.Calls(); !slices.Equal(got, want) {
					t.Errorf("calls %q, want %q", got, want)
				}
			},
		},
		{
			name: "bridge with an old pod CIDR",
			prepare: func(f *fakeNode) {
				_ = f.links.AddBridge("skiff0", 1500, nil)
				_ = f.links.AddrAdd("skiff0", netip.MustParsePrefix("10.244.7.1/24"))
				_ = f.links.SetUp("skiff0")
			},
			check: func(t *testing.T, f *fakeNode) {
				br, _ := f.links.Link("skiff0")
				if !slices.Equal(br.Addrs, []netip.Prefix{netip.MustParsePrefix("10.244.1.1/24")}) {
					t.Errorf("bridge addresses %v", br.Addrs)
				}
			},
		},
		{
			name:    "name taken by a non-bridge",
			prepare: func(f *fakeNode) { _ = f.links.AddLink("skiff0", "veth") },
			wantErr: "not a bridge",
		},
		{
			name:    "no br_netfilter",
			prepare: func(f *fakeNode) { f.sysctl.Remove("net/bridge/bridge-nf-call-iptables") },
			wantErr: "bridge-nf-call-iptables",
		},
		{
			name:    "sysctl does not stick",
			prepare: func(f *fakeNode) { f.cfg.Sysctl = stuckSysctl{f.sysctl} },
			wantErr: `ip_forward is "0" after setting "1"`,
		},
		{
			name:    "custom bridge and MTU",
			prepare: func(f *fakeNode) { f.cfg.Bridge, f.cfg.MTU = "cbr0", 9000 },
			check: func(t *testing.T, f *fakeNode) {
				br, err := f.links.Link("cbr0")
				if err != nil || br.MTU != 9000 {
					t.Errorf("cbr0: %+v, %v", br, err)
				}
				if r := f.links.Routes(); len(r) != 1 || r[0].Dev != "cbr0" {
					t.Errorf("routes %v", r)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeNode(t, tc.prepare)
			err := f.net.Setup(context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Setup = %v, want an error with %q", err, tc.wantErr)
				}
				if _, err := f.net.AddPod(context.Background(), "p", "ns", "n", nil); !errors.Is(err, cni.ErrNotSetUp) {
					t.Errorf("AddPod after a failed Setup = %v, want ErrNotSetUp", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Setup: %v", err)
			}
			if tc.check != nil {
				tc.check(t, f)
			}
			f.add("p") // the fake plugins accept the bridge as set up
		})
	}
}

func TestAddPodBeforeSetup(t *testing.T) {
	f := newFakeNode(t, nil)
	if _, err := f.net.AddPod(context.Background(), "p", "ns", "n", nil); !errors.Is(err, cni.ErrNotSetUp) {
		t.Errorf("AddPod = %v, want ErrNotSetUp", err)
	}
	if f.nss.Created() != 0 {
		t.Error("a namespace was created")
	}
}

func TestAddPod(t *testing.T) {
	f := newFakeNode(t, nil)
	f.setup()
	a := f.add("uid-a", cni.PortMapping{HostPort: 8080, ContainerPort: 80, Protocol: "TCP"})
	b := f.add("uid-b")
	if a.IP != netip.MustParseAddr("10.244.1.2") || b.IP != netip.MustParseAddr("10.244.1.3") {
		t.Errorf("IPs %v %v, want .2 .3", a.IP, b.IP)
	}
	if a.Gateway != f.net.Gateway() || a.IfName != "eth0" || a.NetNSPath != "/fake/netns/skiff-uid-a" {
		t.Errorf("pod network %+v", a)
	}
	if live, _ := f.nss.Live("skiff-uid-a"); !live {
		t.Error("no live namespace for uid-a")
	}
	pm := f.plugins.PortMappings()
	if want := []cnitest.PortMapping{{HostPort: 8080, ContainerPort: 80, Protocol: "tcp"}}; !slices.Equal(pm["uid-a"], want) {
		t.Errorf("port mappings %v, want %v", pm, want)
	}
	if uids, err := f.net.Pods(context.Background()); err != nil || !slices.Equal(uids, []string{"uid-a", "uid-b"}) {
		t.Errorf("Pods() = %v, %v", uids, err)
	}
}

func TestAddPodRejects(t *testing.T) {
	f := newFakeNode(t, nil)
	f.setup()
	for _, tc := range []struct {
		name  string
		uid   string
		ports []cni.PortMapping
		want  error
	}{
		{"bad uid", "../etc", nil, cni.ErrInvalidPodUID},
		{"empty uid", "", nil, cni.ErrInvalidPodUID},
		{"bad port", "ok", []cni.PortMapping{{HostPort: 0, ContainerPort: 80}}, cni.ErrInvalidPortMapping},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := f.net.AddPod(context.Background(), tc.uid, "ns", "n", tc.ports); !errors.Is(err, tc.want) {
				t.Errorf("AddPod = %v, want %v", err, tc.want)
			}
		})
	}
	if f.nss.Created() != 0 || f.plugins.Adds() != 0 {
		t.Error("a rejected AddPod touched the node")
	}
	if err := f.net.DelPod(context.Background(), "a/b"); !errors.Is(err, cni.ErrInvalidPodUID) {
		t.Errorf("DelPod(a/b) = %v", err)
	}
}

func TestAddPodFailureCleansUp(t *testing.T) {
	f := newFakeNode(t, nil)
	f.setup()
	f.plugins.FailNextAdd(errors.New("iptables: resource busy"))
	_, err := f.net.AddPod(context.Background(), "doomed", "ns", "n", []cni.PortMapping{{HostPort: 80, ContainerPort: 80}})
	if err == nil || !strings.Contains(err.Error(), "resource busy") {
		t.Fatalf("AddPod = %v, want the plugin's error", err)
	}
	f.assertEmpty()
	// The next one works and gets an IP.
	if pn := f.add("next"); !pn.IP.IsValid() {
		t.Error("no IP")
	}
}

func TestAddPodCancelledContextStillCleansUp(t *testing.T) {
	f := newFakeNode(t, nil)
	f.setup()
	f.plugins.FailNextAdd(context.Canceled)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The ADD fails; the cleanup DEL must not inherit a cancelled ctx.
	cancel()
	if _, err := f.net.AddPod(ctx, "x", "ns", "n", nil); err == nil {
		t.Fatal("AddPod with a cancelled context succeeded")
	}
	f.assertEmpty()
}

func TestAddPodAdoptsExisting(t *testing.T) {
	f := newFakeNode(t, nil)
	f.setup()
	first := f.add("p", cni.PortMapping{HostPort: 81, ContainerPort: 80})
	f.net = f.restart()
	f.setup()
	again := f.add("p")
	if again != first {
		t.Errorf("adopted %+v, want %+v", again, first)
	}
	if n := f.plugins.Adds(); n != 1 {
		t.Errorf("%d ADDs, want 1 (adoption runs no plugin)", n)
	}
}

func TestAddPodRedoesLeftovers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(*fakeNode)
	}{
		{"stale namespace (reboot)", func(f *fakeNode) { f.nss.MakeStale("skiff-p") }},
		{"namespace without result", func(f *fakeNode) { f.plugins.DropCache("p") }},
		{"corrupt result", func(f *fakeNode) { f.plugins.CorruptCache("p") }},
		{"result without namespace", func(f *fakeNode) { _ = f.nss.Delete("skiff-p") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeNode(t, nil)
			f.setup()
			f.add("p")
			tc.break_(f)
			pn := f.add("p")
			if r := f.plugins.Reserved(); len(r) != 1 || r[pn.IP] != "p" {
				t.Errorf("reserved %v, want only %v for p", r, pn.IP)
			}
			if live, _ := f.nss.Live("skiff-p"); !live {
				t.Error("namespace not live")
			}
			if f.plugins.Adds() != 2 {
				t.Errorf("%d ADDs, want 2", f.plugins.Adds())
			}
		})
	}
}

func TestDelPodPassesCachedPortMappings(t *testing.T) {
	f := newFakeNode(t, nil)
	f.setup()
	f.add("web", cni.PortMapping{HostPort: 30080, ContainerPort: 8080})
	f.net = f.restart() // DelPod has no ports argument: they come from the cache
	f.del("web")
	dels := f.plugins.Dels()
	if len(dels) != 1 || len(dels[0].PortMappings) != 1 || dels[0].PortMappings[0].HostPort != 30080 {
		t.Errorf("DEL calls %+v, want the cached port mapping", dels)
	}
	if dels[0].NetNS != "/fake/netns/skiff-web" {
		t.Errorf("DEL netns %q", dels[0].NetNS)
	}
	if pm := f.plugins.PortMappings(); len(pm) != 0 {
		t.Errorf("port mappings left: %v", pm)
	}
	f.assertEmpty()
}

func TestDelPodIdempotent(t *testing.T) {
	for _, tc := range []struct {
		name      string
		break_    func(*fakeNode)
		wantNetNS string // the namespace DEL is given
	}{
		{"normal", func(*fakeNode) {}, "/fake/netns/skiff-p"},
		{"namespace missing", func(f *fakeNode) { _ = f.nss.Delete("skiff-p") }, ""},
		{"namespace stale", func(f *fakeNode) { f.nss.MakeStale("skiff-p") }, ""},
		{"cache missing", func(f *fakeNode) { f.plugins.DropCache("p") }, "/fake/netns/skiff-p"},
		{"cache corrupt", func(f *fakeNode) { f.plugins.CorruptCache("p") }, "/fake/netns/skiff-p"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeNode(t, nil)
			f.setup()
			f.add("p")
			tc.break_(f)
			f.del("p")
			f.del("p")
			f.assertEmpty()
			dels := f.plugins.Dels()
			if len(dels) == 0 || dels[0].NetNS != tc.wantNetNS {
				t.Errorf("first DEL %+v, want netns %q", dels, tc.wantNetNS)
			}
		})
	}
	t.Run("never existed", func(t *testing.T) {
		f := newFakeNode(t, nil)
		f.del("ghost")
		f.assertEmpty()
	})
}

func TestPodsUnion(t *testing.T) {
	f := newFakeNode(t, nil)
	f.setup()
	f.add("both")
	f.add("cache-only")
	_ = f.nss.Delete("skiff-cache-only")
	f.add("ns-only")
	f.plugins.DropCache("ns-only")
	if _, err := f.nss.Create("not-a-pod"); err != nil {
		t.Fatal(err)
	}
	uids, err := f.net.Pods(context.Background())
	if err != nil || !slices.Equal(uids, []string{"both", "cache-only", "ns-only"}) {
		t.Errorf("Pods() = %v, %v", uids, err)
	}
	if _, err := f.net.Pods(canceled()); err == nil {
		t.Error("Pods with a cancelled context succeeded")
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestConcurrentPods(t *testing.T) {
	f := newFakeNode(t, nil)
	f.setup()
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for w := 0; w < 20; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				uid := fmt.Sprintf("p-%d-%d", w, i)
				if _, err := f.net.AddPod(context.Background(), uid, "ns", uid, nil); err != nil {
					errs <- err
				}
				// Another goroutine races on the same pod.
				done := make(chan error, 1)
				go func() { done <- f.net.DelPod(context.Background(), uid) }()
				if err := f.net.DelPod(context.Background(), uid); err != nil {
					errs <- err
				}
				if err := <-done; err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	f.assertEmpty()
}

// listRecorder records the plugin types of every ADD.
type listRecorder struct {
	cni.Plugins
	adds [][]string
}

func (r *listRecorder) AddNetworkList(ctx context.Context, list *libcni.NetworkConfigList, rt *libcni.RuntimeConf) (types.Result, error) {
	var kinds []string
	for _, p := range list.Plugins {
		kinds = append(kinds, p.Network.Type)
	}
	r.adds = append(r.adds, kinds)
	return r.Plugins.AddNetworkList(ctx, list, rt)
}

// TestAddPodRunsPortmapOnlyForPorts: portmap's ADD without mappings
// changes nothing, so a pod without hostPorts is added without it.
func TestAddPodRunsPortmapOnlyForPorts(t *testing.T) {
	var rec *listRecorder
	f := newFakeNode(t, func(f *fakeNode) {
		rec = &listRecorder{Plugins: f.plugins}
		f.cfg.Plugins = rec
	})
	f.setup()
	f.add("plain")
	f.add("web", cni.PortMapping{HostPort: 30080, ContainerPort: 8080})
	want := [][]string{{"bridge", "loopback"}, {"bridge", "portmap", "loopback"}}
	if !reflect.DeepEqual(rec.adds, want) {
		t.Fatalf("ADD plugin lists %v, want %v", rec.adds, want)
	}
	if pm := f.plugins.PortMappings(); len(pm) != 1 {
		t.Fatalf("port mappings %v, want one", pm)
	}
	f.del("plain")
	f.del("web")
	f.assertEmpty()
}
