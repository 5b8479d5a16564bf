package podroutes

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skiff-dev/skiff/api"
)

func peer(node, cidr, ip string) Peer {
	return Peer{Node: node, PodCIDR: netip.MustParsePrefix(cidr), NodeIP: netip.MustParseAddr(ip)}
}

func wantDump(t *testing.T, f *fakeNetlink, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := f.dump(); !slices.Equal(got, want) {
		t.Fatalf("routes:\n got %q\nwant %q", got, want)
	}
}

func TestFakeRefusesWhatTheKernelRefuses(t *testing.T) {
	f := newFake("192.0.2.0/24")
	hostGW := NewReconciler(f, nil)
	r := hostGW.routeFor(peer("b", "10.244.1.0/24", "192.0.2.11"), 0)
	if err := f.RouteAdd(r); err != nil {
		t.Fatal(err)
	}
	if err := f.RouteAdd(r); !errors.Is(err, unix.EEXIST) {
		t.Fatalf("duplicate add: %v, want EEXIST", err)
	}
	if err := f.RouteDel(hostGW.routeFor(peer("c", "10.244.2.0/24", "192.0.2.12"), 0)); !errors.Is(err, unix.ESRCH) {
		t.Fatalf("delete of a missing route: %v, want ESRCH", err)
	}
	if err := f.RouteAdd(hostGW.routeFor(peer("d", "10.244.3.0/24", "198.51.100.1"), 0)); !errors.Is(err, unix.ENETUNREACH) {
		t.Fatalf("off-link gateway: %v, want ENETUNREACH", err)
	}
}

func TestSyncAddsOneRoutePerPeerAndIsIdempotent(t *testing.T) {
	f := newFake("192.0.2.0/24")
	r := NewReconciler(f, nil)
	peers := []Peer{peer("b", "10.244.1.0/24", "192.0.2.11"), peer("c", "10.244.2.0/24", "192.0.2.12")}
	res, err := r.Sync(peers)
	if err != nil || len(res.Failed) > 0 {
		t.Fatalf("Sync: %v %v", err, res.Failed)
	}
	if len(res.Added) != 2 || len(res.Deleted) != 0 {
		t.Fatalf("first Sync: %+v", res)
	}
	wantDump(t, f, "10.244.1.0/24 via 192.0.2.11 proto 92", "10.244.2.0/24 via 192.0.2.12 proto 92")
	adds, dels := f.adds, f.dels
	for range 3 {
		res, err := r.Sync(peers)
		if err != nil || len(res.Added)+len(res.Deleted)+len(res.Failed) != 0 {
			t.Fatalf("repeated Sync changed something: %+v %v", res, err)
		}
	}
	if f.adds != adds || f.dels != dels {
		t.Fatalf("repeated Syncs made %d adds and %d deletes", f.adds-adds, f.dels-dels)
	}
}

func TestSyncDeletesGoneAndMovedPeersButNeverForeignRoutes(t *testing.T) {
	f := newFake("192.0.2.0/24", "203.0.113.0/24")
	f.addForeign("10.99.0.0/16", "192.0.2.1")
	f.addForeign("0.0.0.0/0", "192.0.2.1")
	r := NewReconciler(f, nil)
	if _, err := r.Sync([]Peer{peer("b", "10.244.1.0/24", "192.0.2.11"), peer("c", "10.244.2.0/24", "192.0.2.12")}); err != nil {
		t.Fatal(err)
	}
	// c is gone, b moved to another address.
	res, err := r.Sync([]Peer{peer("b", "10.244.1.0/24", "203.0.113.5")})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Deleted, []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24"), netip.MustParsePrefix("10.244.2.0/24")}) ||
		!slices.Equal(res.Added, []netip.Prefix{netip.MustParsePrefix("10.244.1.0/24")}) {
		t.Fatalf("Sync: %+v", res)
	}
	wantDump(t, f, "0.0.0.0/0 via 192.0.2.1 proto 4", "10.99.0.0/16 via 192.0.2.1 proto 4", "10.244.1.0/24 via 203.0.113.5 proto 92")
	// No peers: every Skiff route goes, nothing else.
	if _, err := r.Sync(nil); err != nil {
		t.Fatal(err)
	}
	wantDump(t, f, "0.0.0.0/0 via 192.0.2.1 proto 4", "10.99.0.0/16 via 192.0.2.1 proto 4")
}

func TestSyncReportsConflictsAndOffLinkPeersAndDoesTheRest(t *testing.T) {
	f := newFake("192.0.2.0/24")
	f.addForeign("10.244.1.0/24", "192.0.2.1")
	r := NewReconciler(f, nil)
	res, err := r.Sync([]Peer{
		peer("b", "10.244.1.0/24", "192.0.2.11"),   // someone else's route has it
		peer("c", "10.244.2.0/24", "198.51.100.7"), // not on-link
		peer("d", "10.244.3.0/24", "192.0.2.13"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res.Failed["b"], ErrConflict) {
		t.Errorf("b: %v, want ErrConflict", res.Failed["b"])
	}
	if !errors.Is(res.Failed["c"], unix.ENETUNREACH) || !strings.Contains(res.Failed["c"].Error(), "on-link") {
		t.Errorf("c: %v, want ENETUNREACH saying on-link", res.Failed["c"])
	}
	if len(res.Failed) != 2 {
		t.Errorf("failed: %v", res.Failed)
	}
	wantDump(t, f, "10.244.1.0/24 via 192.0.2.1 proto 4", "10.244.3.0/24 via 192.0.2.13 proto 92")
}

func TestSyncAdoptsAndCleansLeftovers(t *testing.T) {
	// A restarted agent finds its earlier routes: the wanted one is kept
	// as is, a stale one goes.
	f := newFake("192.0.2.0/24")
	old := NewReconciler(f, nil)
	if _, err := old.Sync([]Peer{peer("b", "10.244.1.0/24", "192.0.2.11"), peer("x", "10.244.9.0/24", "192.0.2.19")}); err != nil {
		t.Fatal(err)
	}
	adds := f.adds
	res, err := NewReconciler(f, nil).Sync([]Peer{peer("b", "10.244.1.0/24", "192.0.2.11")})
	if err != nil {
		t.Fatal(err)
	}
	if f.adds != adds || len(res.Deleted) != 1 {
		t.Fatalf("restart Sync: %+v (adds %d)", res, f.adds-adds)
	}
	wantDump(t, f, "10.244.1.0/24 via 192.0.2.11 proto 92")
}

func node(name, cidr string, ips ...string) *api.Node {
	n := &api.Node{}
	n.Name = name
	n.Spec.PodCIDR = cidr
	for _, ip := range ips {
		n.Status.Addresses = append(n.Status.Addresses, api.NodeAddress{Type: api.NodeInternalIP, Address: ip})
	}
	n.Status.Addresses = append(n.Status.Addresses, api.NodeAddress{Type: "Hostname", Address: name})
	return n
}

func TestPeers(t *testing.T) {
	deleting := node("f", "10.244.5.0/24", "192.0.2.15")
	deleting.DeletionTimestamp = &api.Time{Time: time.Now()}
	nodes := []*api.Node{
		node("c", "10.244.2.0/24", "2001:db8::3", "192.0.2.12"), // the IPv4 InternalIP is used
		node("a", "10.244.0.0/24", "192.0.2.10"),                // self
		node("b", "10.244.1.0/24", "192.0.2.11"),
		node("d", "", "192.0.2.13"),              // no podCIDR yet: silently waits
		node("e", "10.244.4.0/24"),               // no address
		node("g", "10.244.0.0/16", "192.0.2.16"), // overlaps self
		node("h", "10.244.1.0/25", "192.0.2.17"), // overlaps b
		node("i", "10.244.8.0/24", "192.0.2.10"), // claims self's address
		deleting,
	}
	peers, skipped := Peers("a", netip.MustParsePrefix("10.244.0.0/24"), []netip.Addr{netip.MustParseAddr("192.0.2.10")}, nodes)
	want := []Peer{peer("b", "10.244.1.0/24", "192.0.2.11"), peer("c", "10.244.2.0/24", "192.0.2.12")}
	if !slices.Equal(peers, want) {
		t.Fatalf("peers: %v, want %v", peers, want)
	}
	if len(skipped) != 4 || !strings.HasPrefix(skipped[0], "e:") || !strings.HasPrefix(skipped[1], "g:") ||
		!strings.HasPrefix(skipped[2], "h:") || !strings.HasPrefix(skipped[3], "i:") {
		t.Fatalf("skipped: %q", skipped)
	}
}

func TestControllerFollowsNodes(t *testing.T) {
	f := newFake("192.0.2.0/24")
	nodes := make(chan []*api.Node, 1)
	cur := []*api.Node{node("a", "10.244.0.0/24", "192.0.2.10"), node("b", "10.244.1.0/24", "192.0.2.11")}
	synced := make(chan Result, 16)
	c := &Controller{Self: "a", SelfCIDR: netip.MustParsePrefix("10.244.0.0/24"), Reconciler: NewReconciler(f, nil),
		Nodes: func() []*api.Node {
			select {
			case cur = <-nodes:
			default:
			}
			return cur
		},
		Resync: time.Hour, OnSync: func(r Result, err error) {
			if err != nil {
				t.Error(err)
			}
			synced <- r
		}}
	changed := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx, changed) }()
	defer func() { cancel(); <-done }()
	wait := func() Result {
		select {
		case r := <-synced:
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no sync")
			return Result{}
		}
	}
	if r := wait(); len(r.Added) != 1 {
		t.Fatalf("first sync: %+v", r)
	}
	wantDump(t, f, "10.244.1.0/24 via 192.0.2.11 proto 92")
	nodes <- cur[:1] // b deleted
	changed <- struct{}{}
	if r := wait(); len(r.Deleted) != 1 {
		t.Fatalf("sync after b's deletion: %+v", r)
	}
	wantDump(t, f)
}
